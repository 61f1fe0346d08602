"""MPI libraries: the family records, their launchers' dialects, the facts a library's own
tools give, its collective algorithms and the proof that a forced one ran.

Owns ``families`` (``data/families/``), ``dialects`` (``data/launchers/``: a family record
names its ``mpirun`` dialect), ``mpilib``, ``algorithms`` (``data/algorithms/``), ``forcing``,
``evidence``, ``mpit``, ``mvapich2``, ``known_hangs`` (``data/known_hangs.yaml``) and
``environ_probe`` (what a programming environment gives a job).

Imports: :mod:`omb_suite.machine` (a partition's shape for the dialects, MVAPICH2's binding
read from where ranks ran) and ``yamldata``. Never :mod:`omb_suite.launch` (it imports this
package), ReFrame, ``omb_suite.rfm``, ``omb_suite.setup`` or ``omb_review``.
"""
