"""OSU's limits and the cost model applied to a ReFrame test (:class:`ScaleAware`).

Before the run a test plans its sweep (:func:`omb_suite.osu.limits.plan_sweep` at its rank
count: ``-M`` raised or lowered to what the partition's ``memory_per_node_gib`` allows, the
sizes OSU will really run), predicts its wall time (:mod:`omb_suite.cost.model` with the
partition's model: declared ``perf_model`` extras, corrected by the partition's own perflogs
of the test's environment; then times what earlier runs of the benchmark at that scale took
against the model, from the partition's run reports: :mod:`omb_suite.cost.wall`) and, when
that model is the partition's own (declared or fitted,
not the built-in defaults), takes its time limit from it: the launch runs under ``timeout``,
so a test stopped at its limit fails saying predicted vs elapsed; ReFrame's own limit is the
backstop, ``grace_s`` later. ``--dry-run`` (and a run) ends with the predicted wall time and
node-minutes per partition. The job script carries the plan as a comment for the scale audit
(:mod:`omb_suite.cost.scale_audit`).

Attributes the test must offer by the end of ``setup``: ``benchmark``, the job shape
(``num_tasks``, ``num_tasks_per_node``, ``num_nodes``), ``sweep()``, ``topology``,
``warmup``, ``iterations``, ``warmup_large``, ``iterations_large``, ``extra_opts``;
optionally ``placement`` and ``datatype_bytes()``.
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import sys
from pathlib import Path

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_before, variable
from reframe.core.runtime import runtime
from reframe.utility import osext

from omb_suite.cost import budget as costbudget
from omb_suite.cost import fit as costfit
from omb_suite.cost import model as costmodel
from omb_suite.cost import scale_audit
from omb_suite.cost import wall as costwall
from omb_suite.osu import limits as osu_limits
from omb_suite.osu import versions as osu_versions
from omb_suite.setup.environs import repo_root

#: What the job prints after the launch: its exit status and seconds taken.
LAUNCH_MARK = 'OMB_LAUNCH'
_LAUNCH = re.compile(rf'^{LAUNCH_MARK} rc=(\d+) elapsed=(\d+)', re.M)
_ROW = re.compile(r'^\s*(\d+)\s+[-\d.]', re.M)
#: exit status of ``timeout`` when it stopped the command
TIMED_OUT = 124
#: Predictions of this process's tests, per partition: (test, seconds, nodes).
PREDICTED: dict[str, list[tuple[str, float, int]]] = {}


def results_dir() -> Path:
    return Path(os.environ.get('OMB_RESULTS_DIR') or repo_root() / 'perflogs')


_MODELS: dict[str, costmodel.PerfModel] = {}


@functools.cache
def partition_records(directory: Path) -> list[dict]:
    """Every record of a partition's perflogs, read once per process (each environment
    takes its own; a session writes none of an environment before its first test)."""
    rows: list[dict] = []
    for path in sorted(directory.glob('*.log')):
        rows += costfit.read_perflog(path)[0]
    return rows


@functools.cache
def report_cases(directory: Path) -> tuple[list[dict], list[str]]:
    """The run reports' test cases and problems, read once per process (the reports of a
    results directory can be tens of MiB: every environment read them again)."""
    return costwall.read_reports(directory)


def partition_model(test: rfm.RegressionTest) -> costmodel.PerfModel:
    """The partition's declared model corrected by its own perflogs of the test's
    environment (each MPI library costs what it costs), once per partition and environment."""
    part, env = test.current_partition, test.current_environ.name
    key = f'{part.fullname}+{env}'
    if key not in _MODELS:
        model = costmodel.model_for(part.extras)
        rows = [r for r in partition_records(test.perflog_location()) if r.get('environ') == env]
        if rows:
            topo = test.topology
            model = costfit.fit(rows, model, cores_per_node=topo.cores_per_node,
                                cores_per_socket=topo.cores_per_socket, sockets=topo.sockets)
        _MODELS[key] = model
    return _MODELS[key]


_WALLS: dict[str, costwall.WallFactors] = {}


def reports_dir() -> Path:
    """Where ReFrame writes its run reports: the directory of the configuration's
    ``report_file`` when it names one report per session (``{sessionid}``: ours, a site's
    own, ReFrame's default), else ``<results>/reports`` (a one-off ``--report-file``)."""
    configured = str(runtime().get_option('general/0/report_file') or '')
    if '{sessionid}' not in configured:
        return results_dir() / 'reports'
    return Path(osext.expandvars(configured)).expanduser().parent


def wall_factors(test: rfm.RegressionTest) -> costwall.WallFactors:
    """Measured / modelled wall time per benchmark and scale from the partition's run
    reports of the test's environment, once per partition and environment."""
    part, env = test.current_partition, test.current_environ.name
    key = f'{part.fullname}+{env}'
    if key not in _WALLS:
        cases, problems = report_cases(reports_dir())
        for problem in problems:
            test.logger.warning(problem)
        _WALLS[key] = costwall.wall_factors(cases, test.current_system.name, part.name, env)
    return _WALLS[key]


def node_memory(test: rfm.RegressionTest) -> int | None:
    gib = test.current_partition.extras.get('memory_per_node_gib')
    return int(float(gib) * 2**30) if gib else None


class ScaleAware(rfm.RegressionTestPlugin):
    """The sweep OSU will really run, the predicted wall time and the limit from it."""

    #: Sizes asked for that OSU does not run at this rank count, and why ('' = none).
    sizes_not_measured = variable(str, value='')

    #: Predicted wall time of the test's launches (s), and the time limit derived from it
    #: (0: none, the model being the built-in defaults).
    predicted_s = variable(float, value=0.0)
    #: The declared (or default) model's prediction (s), unfitted: what later runs compare
    #: this run's ``time_run`` with (:mod:`omb_suite.cost.wall`).
    model_s = variable(float, value=0.0)
    limit_s = variable(int, value=0)

    #: A budget of node-minutes for the session (``-S budget=600``, ``10node-h``): the
    #: cases whose predicted cost fits, in the order of :mod:`omb_suite.cost.budget`
    #: (:mod:`omb_suite.rfm.budget` selects them; ``''``: no budget).
    budget = variable(str, value='', loggable=False)
    #: A campaign (``-S campaign=NAME``): a study in slices; a case with a result in the
    #: campaign's run reports is not run again.
    campaign = variable(str, value='')

    #: Setup hooks that only prepare files for the run: the listing's prediction
    #: (:mod:`omb_suite.rfm.listing`) leaves them out. None may change the job shape, the
    #: sweep or whether the test runs.
    PREPARES_ONLY: tuple[str, ...] = ()

    #: The limit's multiple of the prediction and its floor (s); ``None``: the partition's
    #: extras ``time_limits`` ``{multiple, floor_s}``, else ``data/perf_model.yaml`` (3 x, at
    #: least 60 s).
    #: :type: :class:`float` / :class:`int` or ``None`` :default: ``None``
    limit_multiple = variable(float, type(None), value=None, loggable=False)
    limit_floor_s = variable(int, type(None), value=None, loggable=False)

    def sweep_plan(self) -> osu_limits.SweepPlan | None:
        """The sizes OSU will run at this job's rank count (None: no size sweep)."""
        lo, hi = self.sweep()
        if hi is None:
            return None
        per_node = self.num_tasks_per_node or max(1, self.num_tasks // max(1, self.num_nodes))
        return osu_limits.plan_sweep(
            self.benchmark, self.num_tasks, 1 if lo is None else lo, hi,
            user_mem_limit=osu_limits.mem_limit_in(list(self.extra_opts)),
            ranks_per_node=per_node, node_memory=node_memory(self),
            osu_version=self.osu_version, datatype_size=self.datatype_bytes())

    def datatype_bytes(self) -> int:
        return 1

    def perflog_location(self) -> Path:
        """The directory of this partition's perflogs (children may know it better)."""
        return results_dir() / self.current_system.name / self.current_partition.name

    def mem_limit_options(self) -> list[str]:
        """``-M`` where the plan raises it (only an OSU that has ``-M`` gets one); a ``-M`` in
        ``extra_opts`` for an OSU without it fails here, saying so (OSU would print its usage
        and exit)."""
        given = osu_limits.mem_limit_in(list(self.extra_opts))
        if given is not None and self.osu_version and \
                not osu_versions.supports(self.osu_version, 'mem_limit'):
            raise ValueError(f'extra_opts gives -M {given}, but OSU {self.osu_version} has no '
                             f'-M (removed in OSU 7.5; it answers "Invalid option [-M]"): drop '
                             f'it; the suite stops the sweep where the node\'s memory allows')
        plan = self.sweep_plan()
        return ['-M', str(plan.mem_limit)] if plan and plan.mem_limit else []

    def sweep_max(self, asked: int | None) -> int | None:
        """The ``-m`` largest size: the one asked for, or the plan's lower one (an OSU without
        ``-M`` whose largest size would not fit the node: the suite stops the sweep)."""
        plan = self.sweep_plan() if asked is not None else None
        return plan.max_size if plan and plan.max_size is not None else asked

    def launches(self) -> int:
        """Launches of the OSU program in the job (children with extra runs say so)."""
        return 1

    def job_shape(self) -> costmodel.Shape:
        """The job as the cost model sees it: ranks, nodes and the link they cross."""
        topo = self.topology
        per_node = self.num_tasks_per_node or max(1, self.num_tasks // max(1, self.num_nodes))
        link = costmodel.link_of(self.num_nodes, per_node, topo.cores_per_socket,
                                 topo.sockets, getattr(self, 'placement', None))
        return costmodel.Shape(self.num_tasks, self.num_nodes, per_node, topo.cores_per_node,
                               link)

    def prediction(self, model: costmodel.PerfModel | None = None) -> costmodel.Prediction:
        """The model's prediction (``model``: the partition's, fitted, when None)."""
        plan = self.sweep_plan()
        return costmodel.predict(self.benchmark, plan.sizes if plan else [], self.job_shape(),
                                 model or partition_model(self), warmup=self.warmup,
                                 iterations=self.iterations, launches=self.launches(),
                                 warmup_large=self.warmup_large,
                                 iterations_large=self.iterations_large,
                                 osu_version=self.osu_version)

    def base_prediction(self) -> costmodel.Prediction:
        """The prediction of the partition's declared model (or the defaults), not fitted:
        a fixed yardstick that earlier runs' wall times are compared with (``model_s``), so
        that a fit that changes from run to run does not compound with their ratio."""
        return self.prediction(costmodel.model_for(self.current_partition.extras))

    def wall_prediction(self) -> costmodel.Prediction:
        """Where earlier runs measured this benchmark (at this or other scales): the base
        prediction times their wall time against it; else the fitted model's prediction."""
        table = wall_factors(self)
        if not any(b == self.benchmark for b, _ in table):
            return self.prediction()
        return costmodel.scaled(self.base_prediction(),
                                costwall.factor(table, self.benchmark, self.num_tasks))

    @run_before('run')
    def limit_from_prediction(self):
        """The limit: a multiple of the prediction with a floor; ``timeout`` enforces it.
        Only from a model the partition declared or its perflogs fitted: the built-in
        defaults guess, and a guess must not stop a first run (the partition's own
        ``time_limit`` stays)."""
        pred = self._wall_prediction = self.wall_prediction()
        self.model_s = round(self.base_prediction().seconds, 3)
        self.predicted_s = round(pred.seconds, 2)
        rule = self.current_partition.extras.get('time_limits') or {}
        multiple = self.limit_multiple or rule.get('multiple')
        floor = self.limit_floor_s or rule.get('floor_s')
        _, _, grace = costmodel.limit_rule()
        self._limit_rule, self._limit_basis = (multiple, floor), None
        if partition_model(self).source != 'default' or self.limit_multiple \
                or self.limit_floor_s:
            self.limit_s = costmodel.time_limit(pred, multiple, floor)
            self.time_limit = f'{self.limit_s * self.launches() + grace}s'
        elif self.hang_after_result():
            # no model to predict from, but a library that may not exit after its result:
            # the suite's own limit, ReFrame's less its grace, so that sanity sees the output
            # (ReFrame's own limit would end the test with a bare "job timed out")
            self.limit_s = max(1, int(self.reframe_limit_s() / self.launches()) - grace)
            self._limit_basis = (f"ReFrame's {self.reframe_limit_s():.0f} s less {grace} s: no "
                                 'partition model to predict from, and a library that may '
                                 'not exit after its result')
        if self.limit_s:
            self.job.launcher.modifier = 'timeout'
            self.job.launcher.modifier_options = ['--kill-after=10', f'{self.limit_s}s']
        plan = self.sweep_plan()
        self.prerun_cmds = [*self.prerun_cmds, scale_audit.plan_line(
            self.benchmark, self.num_tasks, plan.sizes[-1] if plan and plan.sizes else None,
            pred.seconds, self.limit_s, self.osu_version), 'omb_t0=$(date +%s)']
        self.postrun_cmds = [f'echo "{LAUNCH_MARK} rc=$? elapsed=$(($(date +%s) - omb_t0))" >&2',
                             *self.postrun_cmds]
        record(self, pred)

    def hang_after_result(self) -> str | None:
        """The library defect that can keep the launch from exiting after its whole result
        (the test knows its library), or None."""
        return None

    def reframe_limit_s(self) -> float:
        """ReFrame's time limit of the job (s): the test's, else the partition's, else
        ReFrame's default of 10 minutes."""
        limit = self.time_limit or self.current_partition.time_limit
        return float(typ.Duration.__rfm_cast_str__(str(limit))) if limit else 600.0

    def stopped_at_limit(self, stdout: str, stderr: str,
                         whole_result: bool = False) -> str | None:
        """The explanation when the launch was stopped at its limit, else None.
        ``whole_result``: the program had printed everything it was to print, so the time
        went after it (``MPI_Finalize``, the launcher), not to a slow network."""
        found = _LAUNCH.findall(stderr)
        if not found or int(found[-1][0]) != TIMED_OUT or not self.limit_s:
            return None
        elapsed = float(found[-1][1])
        if whole_result:
            return costmodel.hung_after_result_message(
                self.benchmark, self._wall_prediction, self.limit_s, elapsed)
        rows = _ROW.findall(stdout)
        last = int(rows[-1]) if rows else None
        return f'{self.benchmark} ' + costmodel.slower_message(
            self._wall_prediction, self.limit_s, elapsed, last, *self._limit_rule,
            basis=self._limit_basis)

    def not_measured(self, stderr: str) -> list[int]:
        """Sizes OSU announced or was predicted not to run; records why (and logs it)."""
        plan = self.sweep_plan()
        if plan is None:
            return []
        skipped, reason = list(plan.not_measured), plan.reason
        used = plan.mem_limit or osu_limits.mem_limit_in(list(self.extra_opts))
        announced = osu_limits.announced_cap(self.benchmark, stderr, used)
        if announced is not None and any(s > announced for s in plan.sizes):
            skipped = sorted({*skipped, *(s for s in plan.sizes if s > announced)})
            reason = (f'OSU announced it stops at {announced} B ("Limiting max message size"),'
                      f' the suite predicted {plan.sizes[-1]} B; {reason}'.rstrip('; '))
        if skipped:
            self.sizes_not_measured = f'{skipped}: {reason}'
            self.logger.warning(f'{self.display_name}: sizes {skipped} not measured: {reason}')
        return skipped


def record(test: ScaleAware, prediction: costmodel.Prediction) -> None:
    """Count a test's prediction in its partition's summary."""
    PREDICTED.setdefault(test.current_partition.fullname, []).append(
        (test.display_name, prediction.seconds, max(1, test.num_nodes)))


def duration(seconds: float) -> str:
    """``42 s``, ``12.5 min``, ``3.2 h``."""
    if seconds < 120:
        return f'{seconds:.0f} s'
    return f'{seconds / 60:.1f} min' if seconds < 7200 else f'{seconds / 3600:.1f} h'


def _summary() -> None:
    """Per partition: predicted wall time of the selection and node-minutes (at exit; a
    listing records its cases' predictions too: :mod:`omb_suite.rfm.listing`)."""
    if not PREDICTED:
        return
    out = ['', 'Predicted cost (omb_suite.cost.model; docs/systems.md "What --dry-run predicts"):']
    for part, tests in sorted(PREDICTED.items()):
        wall = sum(s for _, s, _ in tests)
        node_min = sum(s * n for _, s, n in tests) / 60
        name, top, nodes = max(tests, key=lambda t: t[1])
        out.append(f'  {part}: {len(tests)} test(s), {duration(wall)} wall one after another, '
                   f'{costbudget.nm(node_min)} node-minutes; largest: {name} {duration(top)} on '
                   f'{nodes} node(s)')
    print('\n'.join(out), file=sys.stdout, flush=True)


atexit.register(_summary)
