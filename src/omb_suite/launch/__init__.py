"""Launching ranks: named placements and mappings, the launchers ReFrame lacks, and why a
launch died.

Owns ``placements`` (``data/placements.yaml``), ``launchers`` (the registry ``settings.py``
imports, from the dialect records) and ``failures``.

Imports: :mod:`omb_suite.mpi` (the dialects, a family's ``mpirun`` dialect),
:mod:`omb_suite.machine` and ``yamldata``. ``launchers`` alone imports ReFrame, its launcher
registry only; nothing here imports ``omb_suite.rfm``, ``omb_suite.setup`` or ``omb_review``.
"""
