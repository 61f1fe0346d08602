"""A test whose partition launches inside a Flux instance fails before its launch where
ReFrame runs outside one, or where ``flux`` is missing, saying what to start
(:func:`omb_suite.launch.instance.problem`); a dry run writes its job script anyway."""

from __future__ import annotations

import reframe as rfm
from reframe.core.builtins import run_before
from reframe.core.exceptions import ReframeError

from omb_suite.launch import instance
from omb_suite.machine.topology import of_partition


class InsideInstance(rfm.RegressionTestPlugin):
    """Stops a test before its launch where its launcher cannot start a step from here."""

    @run_before('run')
    def stop_outside_instance(self):
        if self.is_dry_run():
            return
        part = self.current_partition
        reason = instance.problem(part.launcher_type.registered_name, part.fullname,
                                  of_partition(part).nodes)
        if reason:
            raise ReframeError(reason)
