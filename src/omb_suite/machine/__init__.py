"""The machine: a partition's shape, this host's GPUs, and where ranks really ran.

Owns ``topology`` (the one reader of a ReFrame partition's ``processor`` and ``extras``),
``host_gpus`` (``nvidia-smi``) and ``probe`` (the per-rank wrapper's and the MPI-only probe's
lines, ``job_sources/``).

Imports nothing of the suite: every other package may import it. Never ReFrame.
"""
