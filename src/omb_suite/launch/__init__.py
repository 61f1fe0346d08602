"""Launching ranks: named placements and mappings, each launcher's dialect, the launchers
ReFrame lacks, and why a launch died.

Owns ``placements`` (``data/placements.yaml``), ``dialects`` (``data/launchers/``),
``launchers`` (the registry ``settings.py`` imports) and ``failures``.

Imports: :mod:`omb_suite.mpi` (a family's ``mpirun`` dialect), :mod:`omb_suite.machine` and
``yamldata``. ``launchers`` alone imports ReFrame, its launcher registry only; nothing here
imports ``omb_suite.rfm``, ``omb_suite.setup`` or ``omb_review``.
"""
