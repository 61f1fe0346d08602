"""OSU itself: what its programs are, accept and print.

Owns the catalogue of OSU's programs (``catalogue``, ``data/catalogue.yaml``), finding them in
install and build trees (``binaries``), OSU's limits and loops (``limits``,
``data/osu_limits.yaml``), its releases (``versions``, ``data/osu_versions.yaml``), the
``-x``/``-i`` options as a release reads them (``counts``), our correctness program's output
(``correctness``), whole curves beside the perflog (``curvelog``) and reading OSU's output
(``parsing``).

Imports: :mod:`omb_suite.mpi` (a family record names the library in a correctness result) and
``yamldata``. Never ReFrame, ``omb_suite.rfm``, ``omb_suite.setup`` or ``omb_review``.
"""
