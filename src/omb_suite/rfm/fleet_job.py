"""A fleet run as a ReFrame test: every node of one allocation, the slow one named.

:class:`OsuFleetBase` holds ``fleet_nodes`` nodes for one job (a batch job of that many nodes,
or the allocation ReFrame runs in on a partition whose scheduler is ``local``, e.g.
``minicluster:alloc``) and runs ``job_sources/omb_fleet.sh`` in it: each node's intra-node
figure, then the rounds of node pairs (:mod:`omb_suite.fleet.schedule`), every launch a Slurm
step on the nodes it names. Sanity judges the figures (:mod:`omb_suite.fleet.culprit`): the
test fails naming the slow switch group, node or link with its evidence, the nodes that did
not launch, and the ``scontrol ... state=drain`` lines a site would run (printed, never run).
Each pair's and node's figure is a performance variable named after it (``node1+node3``,
``node2``), so the perflog holds both nodes of a pair.
"""

from __future__ import annotations

import json
import shlex
import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import reframe as rfm
import reframe.utility.osext as osext
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.backends import getlauncher
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import PerformanceError, SanityError

from omb_suite.cost import budget as costbudget
from omb_suite.fleet import culprit, schedule, switches
from omb_suite.launch.placements import srun_mpi_options
from omb_suite.machine.topology import of_partition
from omb_suite.osu import binaries
from omb_suite.osu.parsing import OsuParseError, parse_osu_output
from omb_suite.rfm import environ_facts
from omb_suite.rfm.perflog_extras import environ_modules

DRIVER = 'omb_fleet.sh'
#: What each benchmark's figure is: the table column, its unit, whether higher is worse.
FIGURES = {'osu_latency': ('latency', 'us', True), 'osu_bw': ('bandwidth', 'MB/s', False)}


@dataclass
class Figures:
    """What the driver's launches printed: pair -> figure, node -> the better of its two
    intra-node figures, nodes that did not launch (their own launches printed no OSU table,
    or none of their pairs did), pairs that printed none while both nodes ran elsewhere."""

    pairs: dict[tuple[str, str], float]
    intra: dict[str, float]
    failed: list[str]
    failed_pairs: list[tuple[str, str]]


def read_figures(stage: Path, benchmark: str, size: int) -> Figures:
    """The figures at ``size`` of the launches whose outputs are in ``stage``."""
    column, _, higher_is_worse = FIGURES[benchmark]
    best = min if higher_is_worse else max
    pairs, intra, broken = {}, {}, []
    for path in sorted(stage.glob('*.out')):
        kind, *names = path.stem.split('+')
        if kind == 'intra':
            names = names[:1]
        try:
            value = parse_osu_output(path.read_text()).value(column, size)
        except (OsuParseError, KeyError, ValueError):
            broken.append((kind, names))
            continue
        if kind == 'pair':
            pairs[(min(names), max(names))] = value
        else:
            intra[names[0]] = best(value, intra.get(names[0], value))
    launched = {n for p in pairs for n in p} | set(intra)
    failed = sorted({n for kind, names in broken for n in names
                     if n not in launched or (kind == 'intra' and n not in intra)})
    failed_pairs = sorted({(min(names), max(names)) for kind, names in broken
                           if kind == 'pair' and not set(names) & set(failed)})
    return Figures(pairs, intra, failed, failed_pairs)


class OsuFleetBase(environ_facts.ModulesLoaded, rfm.RunOnlyRegressionTest):
    """Children set ``benchmark`` (a key of :data:`FIGURES`), a parameter."""

    valid_systems = ['*']
    valid_prog_environs = environ_facts.OSU_ENVIRONS
    maintainers = ['omb-regression-suite']

    #: Nodes of the allocation (default: the partition's, or the allocation's ReFrame runs in).
    fleet_nodes = variable(int, type(None), value=None)
    #: Rounds of pairs (``None``: every pair, N-1 rounds; K: K different partners per node).
    fleet_rounds = variable(int, type(None), value=None)
    #: A figure this many times worse than the fleet's is slow (``None``: the partition's
    #: ``extras['fleet_tolerance']``, else 2).
    tolerance = variable(float, type(None), value=None)
    #: The message size judged (bytes): 8 for latency, 1 MiB for bandwidth by default.
    message_size = variable(int, type(None), value=None)
    #: OSU's timed iterations (``-i``) and warm-up (``-x``).
    iterations = variable(int, value=1000)
    warmup = variable(int, value=100)
    #: Seconds one launch is predicted to take (a round lasts one launch): the plan's wall time.
    seconds_per_launch = variable(float, value=20.0)
    #: Node-minutes the run may hold (``-S budget=600`` or ``10node-h``, as for every mode):
    #: the most rounds that fit, said; none fitting is a skip naming the least budget.
    budget = variable(str, value='', loggable=False)
    #: How many fleet tests of the session share the budget (set when ReFrame orders them).
    budget_parts = variable(int, value=1, loggable=False)
    #: Switch groups (node -> group, ``-S groups=nid001:leaf1,nid002:leaf1,...``), e.g. from
    #: ``scontrol show topology``: pairs within and across groups, a slow uplink named.
    groups = variable(typ.Dict[str, str], value={}, loggable=False)
    #: ``slurm``: the groups are Slurm's leaf switches (``scontrol show topology``, read on
    #: the ReFrame host at setup; a cluster without topology/tree is an error that says so).
    groups_from = variable(str, value='', loggable=False)
    session_tag = variable(str, value='')
    mpi_family = variable(str, type(None), value=None)
    mpi_version = variable(str, type(None), value=None)
    environ_modules = variable(str, type(None), value=None)
    fleet_plan = variable(str, value='')
    num_nodes = variable(int, value=2)
    at_once = variable(int, value=0, loggable=False)

    @run_after('setup')
    def hold_the_nodes(self):
        partition = self.current_partition
        nodes = self.fleet_nodes or of_partition(partition).nodes
        launcher = partition.launcher_type.registered_name
        self.skip_if(nodes < 2, f'a fleet run needs 2 nodes or more to pair them; '
                     f'{partition.fullname} has {nodes} (extras num_nodes, or -S fleet_nodes=N)')
        self.skip_if(launcher not in ('srun', 'srunalloc'),
                     f'a fleet run launches Slurm steps on the nodes it names; '
                     f'{partition.fullname} launches with {launcher!r}')
        self.num_nodes = nodes
        self.num_tasks, self.num_tasks_per_node = nodes, 1
        self.mpi_family, self.mpi_version = environ_facts.mpi_library(self.current_environ)
        self.environ_modules = environ_modules(self)
        # nodes that share one machine's cores (the mini-cluster) launch one at a time
        self.at_once = 1 if int(partition.extras.get('nodes_per_machine', 1)) > 1 else 0
        # each node twice within itself (one launch after the other), then the rounds
        intra = 2 * self.seconds_per_launch
        plan = schedule.plan(nodes, self.seconds_per_launch, intra, self.fleet_rounds,
                             at_once=self.at_once)
        if self.budget:
            budget = costbudget.parse(self.budget) / max(self.budget_parts, 1)
            if self.budget_parts > 1:
                self.logger.info(f'{self.display_name}: budget {budget:g} node-minutes, its '
                                 f'share of {self.budget} among the session\'s '
                                 f'{self.budget_parts} fleet tests')
            fitted = schedule.within(nodes, budget, self.seconds_per_launch, intra,
                                     self.fleet_rounds, at_once=self.at_once)
            least = schedule.plan(nodes, self.seconds_per_launch, intra, 1, self.at_once)
            self.skip_if(fitted is None, f'budget {budget:g} node-minutes: one round of the '
                         f'fleet of {nodes} nodes needs {least.node_minutes:.0f} '
                         f'({least.summary()})')
            if fitted.rounds < plan.rounds:
                self.logger.info(f'{self.display_name}: budget {budget:g} node-minutes buys '
                                 f'{fitted.rounds} of {plan.rounds} round(s)')
            plan = fitted
            self.fleet_rounds = plan.rounds
        self.fleet_plan = plan.summary()
        if self.tolerance is None:
            self.tolerance = float(partition.extras.get('fleet_tolerance', culprit.TOLERANCE))
        self.time_limit = max(300, round(2 * plan.wall_seconds))
        self.logger.info(f'{self.display_name} on {partition.fullname}: {self.fleet_plan}')

    @run_after('setup')
    def read_switch_groups(self):
        if not self.groups_from:
            return
        if self.groups_from != 'slurm':
            raise switches.TopologyError(f'-S groups_from={self.groups_from!r}: the one '
                                         f'source known is slurm (scontrol show topology)')
        done = osext.run_command('scontrol show topology', log=False)
        if done.returncode != 0:
            raise switches.TopologyError(f'scontrol show topology failed on the ReFrame '
                                         f'host: {done.stderr.strip() or done.stdout.strip()}')
        self.groups = {**switches.groups(done.stdout), **self.groups}

    @run_after('setup')
    def find_program(self):
        roots = [*environ_facts.osu_roots(self.current_environ)]
        try:
            self.osu_program = str(binaries.find_osu_binary(
                self.benchmark, roots, environ_facts.search_path(self.current_environ)))
        except binaries.OsuNotFoundError as err:
            self.skip(f'{str(err).splitlines()[0]}: get OSU with `omb-setup` (docs/spack.md)')

    @run_before('run')
    def run_the_rounds(self):
        self.job.launcher = getlauncher('local')()
        source = resources.files('omb_suite') / 'job_sources' / DRIVER
        shutil.copy(str(source), Path(self.stagedir) / DRIVER)
        mpi = srun_mpi_options('srun', self.mpi_family,
                               self.current_partition.extras.get('srun_mpi') or {'': ''})
        step = ['srun', '--exact', '--nodelist={nodes}', *mpi]
        # quoted: ReFrame writes `export NAME=value` as it is
        self.env_vars.update({
            'OMB_FLEET_PAIR': shlex.quote(' '.join([*step, '--nodes=2', '--ntasks=2',
                                                    '--ntasks-per-node=1'])),
            'OMB_FLEET_INTRA': shlex.quote(' '.join([*step, '--nodes=1', '--ntasks=2',
                                                     '--ntasks-per-node=2'])),
            'OMB_FLEET_ROUNDS': str(self.fleet_rounds or 0),
            'OMB_FLEET_AT_ONCE': str(self.at_once)})
        size = self.size
        self.executable = 'bash'
        self.executable_opts = [DRIVER, shlex.quote(self.osu_program), '-m', f'{size}:{size}',
                                '-i', str(self.iterations), '-x', str(self.warmup)]

    @property
    def size(self) -> int:
        return self.message_size or (8 if FIGURES[self.benchmark][2] else 1 << 20)

    def figures(self) -> Figures:
        return read_figures(Path(self.stagedir), self.benchmark, self.size)

    def verdict(self) -> culprit.Verdict:
        _, unit, higher = FIGURES[self.benchmark]
        got = self.figures()
        pairs, intra, failed = got.pairs, got.intra, got.failed
        verdict = culprit.judge(self.benchmark, pairs, intra=intra, higher_is_worse=higher,
                                tolerance=self.tolerance, unit=unit, failed=failed,
                                failed_pairs=got.failed_pairs, groups=self.groups)
        (Path(self.stagedir) / 'fleet.json').write_text(json.dumps({
            'benchmark': self.benchmark, 'size': self.size, 'unit': unit,
            'pairs': {f'{a}+{b}': v for (a, b), v in pairs.items()}, 'intra': intra,
            'failed': failed, 'failed_pairs': [f'{a}+{b}' for a, b in got.failed_pairs],
            'baseline': verdict.baseline,
            'findings': [f.__dict__ for f in verdict.findings],
            'drain': verdict.drain_commands()}, indent=1, default=list))
        return verdict

    @sanity_function
    def every_node_launched(self):
        """Sanity: the launches printed OSU tables, and no node failed to launch (named);
        whether one is slow is judged after the figures are logged (:meth:`nothing_slow`)."""
        got = self.figures()
        if not got.pairs and not got.intra:
            raise SanityError(f'no launch of the fleet printed an OSU table: see '
                              f'{self.stagedir}/*.out')
        if got.failed:
            verdict = self.verdict()
            raise SanityError('\n'.join(verdict.lines() + verdict.drain_commands()))
        return sn.assert_true(True)

    @run_after('performance')
    def nothing_slow(self):
        """The verdict, after the performance stage has logged every figure (so that the
        perflog of a run that names a culprit holds the figures that named it)."""
        verdict = self.verdict()
        if verdict.findings:
            drain = verdict.drain_commands()
            raise PerformanceError('\n'.join([
                *verdict.lines(), *(['to drain (not run by the suite):', *drain] if drain else
                                    ['no node to drain: a link or an uplink is the path '
                                     'between nodes (cables, switch ports)'])]))

    @run_before('performance')
    def name_each_figure(self):
        unit = FIGURES[self.benchmark][1]
        got = self.figures()
        pairs, intra = got.pairs, got.intra
        self.perf_variables = {
            **{f'{a}+{b}': sn.make_performance_function(sn.defer(v), unit)
               for (a, b), v in pairs.items()},
            **{n: sn.make_performance_function(sn.defer(v), unit) for n, v in intra.items()}}
