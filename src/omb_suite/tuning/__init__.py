"""Tuning recommendations and the files each MPI library reads.

Owns ``rules`` (a recommendation: per collective and communicator size, the algorithm from each
message size up), ``stats`` (tuned against default), ``files`` (the dispatch on a family
record's ``tuning`` part) and one writer per format: ``openmpi``, ``mpich``, ``intel``
(``data/tuning/``).

Imports: :mod:`omb_suite.mpi`, :mod:`omb_suite.osu` and ``yamldata``. Never ReFrame,
``omb_suite.rfm`` or ``omb_review`` (``omb-review tune`` imports this package, not the reverse).
"""
