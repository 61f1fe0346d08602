"""What a run costs and how many iterations it needs.

Owns ``model`` (``data/perf_model.yaml``: a test's predicted wall time and limit), ``fit`` (the
model fitted from perflogs), ``wall`` (a job's cost beyond OSU's timed loop), ``iterations``
(``data/iterations.yaml``: ``-x``/``-i`` from a test's history), ``planner`` (one test's
counts, prediction and limit from its facts: what the ReFrame layer asks) and ``scale_audit``
(a job script against OSU's limits and the model).

Imports: :mod:`omb_suite.osu`, :mod:`omb_suite.mpi` and ``yamldata``. Never ReFrame,
``omb_suite.rfm`` or ``omb_review``.
"""
