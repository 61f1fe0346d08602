"""Correctness of the verdict set's collectives: one launch of our own check program per
environment, scale and mapping, which every verdict collective of that scale depends on.

OSU's ``-c`` cannot check the measured run without changing what it measures (it rewrites
and checks the buffers around every timed call: 2-10x slower 64 KiB-1 MiB collectives here),
so the check is its own run, once per session for each configuration the verdict set
measures: the same library, default algorithms, rank count, mapping, launcher and the same
sizes (one MPI_INT to the sweep's largest message), every element of every size compared
with what it must be (``probe/collective_check.c``). A collective that computes wrong data
fails its check here, and the measurement that depends on it fails with it.
"""

from __future__ import annotations

import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import fixture, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

from omb_suite import catalogue, correctness, probe
from omb_suite.rfm.collective import CollectiveJob


class CollectiveCheckBuild(rfm.CompileOnlyRegressionTest):
    """Compile ``collective_check.c`` once per environment with its MPI wrapper."""

    descr = 'Build the collective correctness check'
    valid_systems = ['*']
    valid_prog_environs = ['+mpi']
    build_system = 'SingleSource'
    sourcepath = correctness.SOURCE
    executable = correctness.PROGRAM
    build_locally = True

    @run_before('compile')
    def set_sources(self):
        self.sourcesdir = probe.source_dir()
        self.build_system.cflags = ['-O2']
        self.build_system.executable = self.executable

    @sanity_function
    def built(self):
        return sn.assert_true(os.path.isfile(os.path.join(self.stagedir, self.executable)),
                              msg=f'{self.executable} was not built: see {self.stagedir}')


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

    def osu_options(self) -> list[str]:
        largest = self.max_size or max(catalogue.get(n).max_size or 1 for n in self.checked)
        return [str(largest), *self.checked]

    @sanity_function
    def validate(self):
        stderr = self.read_output(self.stderr.evaluate())
        self.verify_placement(stderr)
        try:
            verdicts = correctness.parse(self.read_output(self.stdout.evaluate()),
                                         self.checked, self.num_tasks)
        except correctness.CorrectnessError as err:
            raise SanityError(str(err)) from None
        wrong = correctness.wrong(verdicts)
        if wrong:
            raise SanityError(f'the MPI library computed wrong results: {wrong}')
        return True

    def performance_variables(self) -> dict:
        return {}
