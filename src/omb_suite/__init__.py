"""Shared library of the OMB regression suite, one package per concern: ``osu`` (OSU itself),
``mpi`` (MPI libraries), ``launch`` (placements, launcher dialects), ``machine`` (a partition's
shape, where ranks ran), ``cost`` (run cost, iterations), ``tuning`` (tuning files); ``rfm``
(the ReFrame layer) and ``setup`` (``omb-setup``) above them. The allowed imports between them:
``tests/test_layers.py`` (``ARROWS``) and docs/maintaining.md."""
