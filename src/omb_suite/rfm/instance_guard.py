"""A test whose partition launches inside a Flux instance fails before its launch where
ReFrame runs outside one, or where ``flux`` is missing, saying what to start
(:func:`omb_suite.launch.instance.problem`); a dry run writes its job script anyway. A test
whose MPI library the launcher cannot start is skipped at setup, saying why
(:func:`omb_suite.launch.instance.cannot_start`: Open MPI 5 under flux-core)."""

from __future__ import annotations

import reframe as rfm
from reframe.core.builtins import run_after, run_before
from reframe.core.exceptions import ReframeError

from omb_suite.launch import instance
from omb_suite.machine.topology import of_partition
from omb_suite.rfm import environ_facts


class InsideInstance(rfm.RegressionTestPlugin):
    """Stops a test before its launch where its launcher cannot start a step from here."""

    @run_after('setup')
    def skip_what_the_launcher_cannot_start(self):
        part = self.current_partition
        family, version = environ_facts.mpi_library(self.current_environ)
        reason = instance.cannot_start(part.launcher_type.registered_name, family, version,
                                       part.extras)
        self.skip_if(reason is not None, reason)

    @run_before('run')
    def stop_outside_instance(self):
        if self.is_dry_run():
            return
        part = self.current_partition
        reason = instance.problem(part.launcher_type.registered_name, part.fullname,
                                  of_partition(part).nodes)
        if reason:
            raise ReframeError(reason)
