"""The placement probe on its own, for machines without OSU: it needs only MPI.

:class:`PlacementProbeBuild` compiles ``job_sources/placement_probe.c`` with the environment's
``mpicc`` (a fixture, once per environment); :class:`PlacementProbeBase` runs it with the
launcher options of one placement and fails with asked vs observed on a mismatch. Every OSU
check proves its own placement through the per-rank wrapper instead (one launch).
"""

from __future__ import annotations

import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import fixture, run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

from omb_suite.launch.failures import with_cause
from omb_suite.machine import probe
from omb_suite.rfm import environ_facts, instance_guard
from omb_suite.rfm.perflog_extras import environ_modules
from omb_suite.rfm.pt2pt import PlacedPair


class ProbeSourceBuild(rfm.CompileOnlyRegressionTest):
    """Compile one C program of ``omb_suite/job_sources/`` (the child's ``sourcepath`` and
    ``executable``) once per environment with its MPI wrapper, on the login node."""

    valid_systems = ['*']
    valid_prog_environs = ['+mpi']
    build_system = 'SingleSource'
    build_locally = True
    environ_modules = variable(str, type(None), value=None)
    #: A session's budget and campaign (``-S budget=``, ``-S campaign=``:
    #: :mod:`omb_suite.rfm.budget_selection`); a build costs no node-minutes.
    budget = variable(str, value='', loggable=False)
    campaign = variable(str, value='', loggable=False)

    @run_before('compile')
    def set_sources(self):
        self.environ_modules = environ_modules(self)
        self.sourcesdir = probe.source_dir()
        self.build_system.cflags = ['-O2']
        self.build_system.executable = self.executable

    @sanity_function
    def built(self):
        return sn.assert_true(os.path.isfile(os.path.join(self.stagedir, self.executable)),
                              msg=f'{self.executable} was not built: see {self.stagedir}')


class PlacementProbeBuild(ProbeSourceBuild):
    """Compile ``placement_probe.c``."""

    descr = 'Build the MPI placement probe'
    sourcepath = probe.PROBE_SOURCE
    executable = 'placement_probe'


class PlacementProbeBase(environ_facts.ModulesLoaded, instance_guard.InsideInstance, PlacedPair,
                         rfm.RunOnlyRegressionTest):
    """Run the MPI probe alone with the child's ``placement`` and verify it."""

    valid_systems = ['*']
    probe_build = fixture(PlacementProbeBuild, scope='environment')
    placement_observed = variable(str, value='')
    environ_modules = variable(str, type(None), value=None)
    num_nodes = variable(int, value=1)
    #: Free-form tag for the perflog (e.g. ``upgrade=pre``), set with ``-S session_tag=...``.
    session_tag = variable(str, value='')
    #: A session's budget and campaign (:mod:`omb_suite.rfm.budget_selection`): the probe runs where
    #: no OSU is, and is not priced.
    budget = variable(str, value='', loggable=False)
    campaign = variable(str, value='', loggable=False)
    tags = {'placement', 'probe'}

    @run_after('setup')
    def only_where_osu_is_not(self):
        """A site's environment (no ``osu`` feature) whose job has OSU runs the OSU checks,
        which prove their own placements: the probe is for MPIs without OSU."""
        found = environ_facts.facts(self.current_environ)
        osu = found and (found.osu_program or found.osu_root)
        self.skip_if(bool(osu), f'OSU is in environment {self.current_environ.name} ({osu}): '
                                'its OSU checks prove their own placements')

    @run_after('setup')
    def use_probe(self):
        self.executable = os.path.join(self.probe_build.stagedir, self.probe_build.executable)
        self.environ_modules = environ_modules(self)

    @run_before('run')
    def place_ranks(self):
        self.job.launcher.options = self.launcher_options()

    def _output(self, name: str) -> str:
        with open(os.path.join(self.stagedir, name), errors='replace') as fp:
            return fp.read()

    @sanity_function
    def placement_holds(self):
        text = self._output(self.stdout.evaluate())
        try:
            places = probe.parse_probe(text)
            self.placement_observed = probe.observed(places)
            self.check_placement(places)
        except (probe.ProbeError, probe.WrongPlacement) as err:
            # a crashed rank or a launcher error names itself: [job: rank crashed: ...]
            stderr = self._output(self.stderr.evaluate())
            raise SanityError(with_cause(str(err), stderr, text)) from None
        return True
