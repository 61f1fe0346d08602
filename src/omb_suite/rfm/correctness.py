"""Correctness of the verdict set's collectives: one launch of our own check program per
environment, scale and mapping, which every verdict collective of that scale depends on.

OSU's ``-c`` cannot check the measured run without changing what it measures (it rewrites
and checks the buffers around every timed call: 2-10x slower 64 KiB-1 MiB collectives here),
so the check is its own run, once per session for each configuration the verdict set
measures: the same library, default algorithms, rank count, mapping, launcher and the same
sizes (one MPI_INT to the sweep's largest message), every element of every size compared
with what it must be (``job_sources/collective_check.c``). A collective that computes wrong data
fails its check here, and the measurement that depends on it fails with it.
"""

from __future__ import annotations

import os

from reframe.core.builtins import fixture, sanity_function, variable
from reframe.core.exceptions import SanityError

from omb_suite import catalogue, correctness, costmodel, osu_limits
from omb_suite.rfm.collective import CollectiveJob
from omb_suite.rfm.cost import node_memory, partition_model
from omb_suite.rfm.probe import ProbeSourceBuild


class CollectiveCheckBuild(ProbeSourceBuild):
    """Compile ``collective_check.c``."""

    descr = 'Build the collective correctness check'
    sourcepath = correctness.SOURCE
    executable = correctness.PROGRAM


class CollectiveCorrectnessBase(CollectiveJob):
    """Every checkable collective of the verdict set, on ``scale`` ranks mapped by
    ``mapping`` (the child's parameters), in one launch of our check program."""

    check_build = fixture(CollectiveCheckBuild, scope='environment')
    benchmark = variable(str, value=correctness.PROGRAM)
    tags = {'correctness', 'verdict'}

    @property
    def checked(self) -> list[str]:
        verdict = catalogue.verdict('collective') + catalogue.verdict('nonblocking')
        return [name for name in verdict if name in correctness.CHECKABLE]

    def program(self) -> str:
        return os.path.join(self.check_build.stagedir, self.check_build.executable)

    def largest(self) -> int:
        """The sweep's largest size, but no larger than the measured alltoall runs at this
        rank count: our program holds a message per rank for every collective (2 buffers of
        largest x ranks), as OSU's alltoall does, so it takes OSU's cap and memory rule."""
        asked = self.max_size or max(catalogue.get(n).max_size or 1 for n in self.checked)
        per_node = self.num_tasks_per_node or max(1, self.num_tasks // max(1, self.num_nodes))
        plan = osu_limits.plan_sweep('osu_alltoall', self.num_tasks, 1, asked,
                                     user_mem_limit=None, ranks_per_node=per_node,
                                     node_memory=node_memory(self))
        return plan.sizes[-1] if plan.sizes else asked

    def osu_options(self) -> list[str]:
        return [str(self.largest()), *self.checked]

    def sweep_plan(self):
        """Not an OSU sweep: nothing to plan (its memory: see docs/systems.md)."""
        return None

    def prediction(self, model: costmodel.PerfModel | None = None) -> costmodel.Prediction:
        """One call of each checked collective per size, in one launch."""
        sizes = osu_limits.sizes_between(4, self.largest())
        parts = [costmodel.predict(name, sizes, self.job_shape(), model or partition_model(self),
                                   warmup=0, iterations=1) for name in self.checked]
        return costmodel.combine(parts)

    @sanity_function
    def validate(self):
        stderr = self.read_output(self.stderr.evaluate())
        self.verify_placement(stderr)
        stdout = self.read_output(self.stdout.evaluate())
        other = correctness.other_library(correctness.library_ran(stdout), self.mpi_family,
                                          self.mpi_version)
        if other:
            raise SanityError(other)
        try:
            verdicts = correctness.parse(stdout, self.checked, self.num_tasks)
        except correctness.CorrectnessError as err:
            raise SanityError(str(err)) from None
        wrong = correctness.wrong(verdicts)
        if wrong:
            raise SanityError(f'the MPI library computed wrong results: {wrong}')
        return True

    def performance_variables(self) -> dict:
        return {}
