"""Placement probe: proves that every placement puts ranks where it says.

Runs our probe (host, CPU set, socket, NUMA node per rank) with the launcher options of
each placement and fails with both the asked-for and the observed placement on mismatch.
It needs no OSU, so it runs on a fresh machine.
"""

import os

import reframe as rfm
from reframe.core.builtins import (
    fixture,
    parameter,
    run_after,
    run_before,
    sanity_function,
    variable,
)
from reframe.core.exceptions import SanityError

from omb_suite import placement, probe
from omb_suite.bases import PlacedPair, PlacementProbeBuild


@rfm.simple_test
class PlacementProbe(PlacedPair, rfm.RunOnlyRegressionTest):
    """Run the probe alone with one placement and verify it."""

    placement = parameter(placement.placement_names())
    valid_systems = ['*']
    valid_prog_environs = ['+mpi']
    probe_build = fixture(PlacementProbeBuild, scope='environment')
    placement_observed = variable(str, value='')
    num_nodes = variable(int, value=1)
    #: Free-form tag for the perflog (e.g. ``upgrade=pre``), set with ``-S session_tag=...``.
    session_tag = variable(str, value='')
    tags = {'placement', 'probe'}

    @run_after('setup')
    def use_probe(self):
        self.executable = os.path.join(self.probe_build.stagedir, self.probe_build.executable)

    @run_before('run')
    def place_ranks(self):
        self.job.launcher.options = self.pair_options()

    @sanity_function
    def placement_holds(self):
        with open(os.path.join(self.stagedir, self.stdout.evaluate())) as fp:
            text = fp.read()
        try:
            places = probe.parse_probe(text)
            self.placement_observed = probe.observed(places)
            probe.verify(self.placement, places)
        except probe.ProbeError as err:
            raise SanityError(str(err)) from None
        return True
