"""Correctness of the collectives, checked inside the launch that measures them (the verdict
set's, and the exploration's forced algorithms).

OSU's ``-c`` cannot check the measured run without changing what it measures (it rewrites
and checks the buffers around every timed call: 2-10x slower 64 KiB-1 MiB collectives here),
so our own check (``job_sources/collective_check.c``) does it first, in the same process: built
as a library, the rank wrapper preloads it into OSU, and right after ``MPI_Init`` it runs the
launch's collective at every size of the sweep (one MPI_INT to the largest the launch
measures), twice with new data, every element compared with what it must be; then OSU
measures. Same library, ranks, mapping, launcher and environment as the measurement, because
it is the measurement's own launch. A collective that computes wrong data fails its test.

It was a launch of its own per environment, scale and mapping that every verdict collective
depended on: 0.3 s of a three-test run on the 2-core VM, the one cost hpctestlib's
``osu_run`` does not pay (docs/benchmarks.md); in the exploration, an OSU ``-c`` run before
every measurement, which stays for the collectives our check does not know. An OSU linked
statically against MPI cannot take the library: no ``COLLCHECK`` output, and the test fails
saying so.

The library is built by the job itself, once per partition, environment and content
(:mod:`omb_suite.build_cache`), and reused by every later run and test.
"""

from __future__ import annotations

import os
from pathlib import Path

import reframe as rfm
from reframe.core.builtins import run_before, variable
from reframe.core.exceptions import ReframeError, SanityError

from omb_suite import build_cache
from omb_suite.launch.failures import with_cause
from omb_suite.machine import probe
from omb_suite.osu import correctness
from omb_suite.setup.environs import repo_root

#: How the library is compiled (the environment's MPI C compiler with these flags).
CFLAGS = ['-O2', '-DOMB_PRELOAD', '-shared', '-fPIC']
#: Linked after the source: ``dlsym`` (in glibc itself from 2.34).
LIBS = ['-ldl']


class CheckedInLaunch(rfm.RegressionTestPlugin):
    """The measured launch checks its own collective's results first (``validation`` on and
    the collective one our check knows)."""

    #: Where built helper programs are kept between runs (on a file system the compute
    #: nodes see); ``''``: ``$OMB_BUILD_CACHE``, else ``.omb/build-cache`` of the repository
    #: (the variable needs no ``-S``, which ReFrame warns about on every test without it).
    #: :type: :class:`str` :default: ``''``
    build_cache = variable(str, value='', loggable=False)

    def checks_in_launch(self) -> bool:
        return bool(self.validation) and self.benchmark in correctness.CHECKABLE

    def check_place(self) -> Path:
        """The cache directory of the library for this partition and environment (a
        listing computes it and writes nothing)."""
        env = self.current_environ
        identity = {'partition': self.current_partition.fullname, 'environ': env.name,
                    'modules': env.modules, 'env_vars': env.env_vars, 'extras': env.extras}
        cache = Path(self.build_cache or os.environ.get('OMB_BUILD_CACHE') or
                     repo_root() / '.omb' / 'build-cache')
        return build_cache.place(cache, self.check_source(), env.cc, CFLAGS + LIBS, identity)

    def check_source(self) -> Path:
        return Path(probe.source_dir()) / correctness.SOURCE

    def check_largest(self) -> int:
        """The largest size this launch measures (OSU's own cap at this rank count)."""
        sizes = self.expected_sizes()
        return max(sizes) if sizes else (self.sweep()[1] or 1)

    @run_before('run')
    def build_check_library(self):
        if not self.checks_in_launch():
            return
        where = self.check_place()
        try:
            build_cache.stock(where, self.check_source())
        except OSError as err:
            raise ReframeError(f'cannot keep {correctness.LIBRARY} in the build cache '
                               f'{where.parent} ({err}): give one the jobs can write and the '
                               'compute nodes see, -S build_cache=DIR') from None
        self.prerun_cmds = [*self.prerun_cmds, build_cache.build_command(
            where, correctness.SOURCE, correctness.LIBRARY, self.current_environ.cc, CFLAGS,
            LIBS)]
        self.env_vars = {**self.env_vars,
                         correctness.ASK_VAR: f'{self.check_largest()},{self.benchmark}'}

    def wrapper_options(self) -> list[str]:
        preload = (['--preload', str(self.check_place() / correctness.LIBRARY)]
                   if self.checks_in_launch() else [])
        return [*preload, *super().wrapper_options()]

    def check_results(self) -> None:
        if not self.checks_in_launch():
            return
        stdout = self.read_output(self.stdout.evaluate())
        other = correctness.other_library(correctness.library_ran(stdout), self.mpi_family,
                                          self.mpi_version)
        if other:
            raise SanityError(other)
        try:
            verdicts = correctness.parse(stdout, [self.benchmark], self.num_tasks)
        except correctness.CorrectnessError as err:
            stderr = self.read_output(self.stderr.evaluate())
            raise SanityError(with_cause(str(err), stderr, stdout)) from None
        wrong = correctness.wrong(verdicts)
        algorithm = getattr(self, 'algorithm', 'default')
        forced = f' with the {algorithm} algorithm' if algorithm != 'default' else ''
        if wrong:
            raise SanityError(f'the MPI library computed wrong results{forced}: {wrong}')
