"""A test's job plan, applied in ReFrame: the sweep, ``-x``/``-i``, prediction and limit.

:class:`ScaleAware` (a base of ``OsuRunBase``) owns the test's variables of its plan and
the two hooks that apply it; the arithmetic is :class:`omb_suite.cost.planner.Planner`'s,
asked with the facts :meth:`ScaleAware.run_facts` gathers (the only reader of them):

1. setup (the test's and its children's hooks): the job shape; :meth:`~ScaleAware.sweep_plan`
   is the sweep OSU will really run at that rank count (:func:`omb_suite.osu.limits.plan_sweep`:
   ``-M`` raised or lowered to what ``memory_per_node_gib`` allows);
2. last of setup, :meth:`~ScaleAware.choose_iterations`: ``-x``/``-i`` as set, or from the
   test's history in its partition's perflog (:func:`omb_suite.rfm.earlier_runs.size_history`),
   printed with the reason (``iterations_reason``); ``-S iterations_from_history=0`` keeps
   OSU's defaults; where the OSU has iteration buckets, counts per size range
   (``warmup_large``/``iterations_large``, the sizes above 8 KiB);
3. before the run, :meth:`~ScaleAware.limit_from_prediction`: the predicted wall time (the
   partition's model fitted to its perflogs, times what earlier runs took against it:
   :mod:`omb_suite.rfm.earlier_runs`) and, when that model is the partition's own (declared or
   fitted, not the built-in defaults), the time limit from it: the launch runs under
   ``timeout``, so a test stopped at its limit fails saying predicted vs elapsed; ReFrame's
   own limit is the backstop, ``grace_s`` later. The job script carries the plan as a comment
   for the scale audit (:mod:`omb_suite.cost.scale_audit`);
4. sanity: :meth:`~ScaleAware.stopped_at_limit` and :meth:`~ScaleAware.not_measured`.

``--dry-run``, ``-l`` (:mod:`omb_suite.rfm.listing`) and a run end with the predicted wall
time and node-minutes per partition.

What the test provides by the end of setup (``OsuRunBase`` and its children): ``benchmark``,
the job shape (``num_tasks``, ``num_tasks_per_node``, ``num_nodes``), ``sweep()``,
``topology``, ``extra_opts``, ``osu_version``, ``reported_sizes()``, ``perflog_location()``;
optionally ``placement``, ``datatype_bytes()``, ``launches()``, ``hang_after_result()``.
"""

from __future__ import annotations

import atexit
import re
import sys
from pathlib import Path

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, variable

from omb_suite.cost import budget as costbudget
from omb_suite.cost import model as costmodel
from omb_suite.cost import scale_audit
from omb_suite.cost.planner import Limit, Planner, RunFacts, counts_problem
from omb_suite.osu import catalogue
from omb_suite.osu import counts as osu_counts
from omb_suite.osu import limits as osu_limits
from omb_suite.osu import versions as osu_versions
from omb_suite.rfm import earlier_runs

#: What the job prints after the launch: its exit status and seconds taken.
LAUNCH_MARK = 'OMB_LAUNCH'
_LAUNCH = re.compile(rf'^{LAUNCH_MARK} rc=(\d+) elapsed=(\d+)', re.M)
_ROW = re.compile(r'^\s*(\d+)\s+[-\d.]', re.M)
#: exit status of ``timeout`` when it stopped the command
TIMED_OUT = 124
#: Predictions of this process's tests, per partition: (test, seconds, nodes).
PREDICTED: dict[str, list[tuple[str, float, int]]] = {}


def node_memory(test: rfm.RegressionTest) -> int | None:
    gib = test.current_partition.extras.get('memory_per_node_gib')
    return int(float(gib) * 2**30) if gib else None


class ScaleAware(rfm.RegressionTestPlugin):
    """The test's plan: the sweep OSU will really run, ``-x``/``-i``, the predicted wall
    time and the limit from it (the steps: this module's)."""

    #: Warm-up iterations (``-x``); ``None``: chosen from the test's history, else OSU's
    #: default (perflog column ``warmup``: what ran, ``null`` = OSU's default).
    #: :type: :class:`int` or ``None`` :default: ``None``
    warmup = variable(int, type(None), value=None)

    #: Timed iterations (``-i``); ``None``: chosen from the test's history, else OSU's
    #: default (perflog column ``iterations``).
    #: :type: :class:`int` or ``None`` :default: ``None``
    iterations = variable(int, type(None), value=None)

    #: Warm-up (``-x``) of the sizes above 8 KiB, apart from ``warmup`` (which then holds for
    #: the sizes up to 8 KiB): OSU 7.5.1 and later (iteration buckets); ``None``: as ``warmup``.
    #: :type: :class:`int` or ``None`` :default: ``None``
    warmup_large = variable(int, type(None), value=None)

    #: Timed iterations (``-i``) of the sizes above 8 KiB, as ``warmup_large``.
    #: :type: :class:`int` or ``None`` :default: ``None``
    iterations_large = variable(int, type(None), value=None)

    #: Choose ``-x``/``-i`` from history when neither is set; ``False``: OSU's defaults.
    #: :type: :class:`bool` :default: ``True``
    #: (``typ.Bool``: ``-S iterations_from_history=0`` is False; a plain ``bool`` took the
    #: string ``'0'`` for True.)
    iterations_from_history = variable(typ.Bool, value=True, loggable=False)

    #: Why the test runs with its counts (printed, and in the run report).
    iterations_reason = variable(str, value='')

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
    #: (:mod:`omb_suite.rfm.budget_selection` selects them; ``''``: no budget).
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
        return earlier_runs.results_dir() / self.current_system.name / \
            self.current_partition.name

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

    def counts(self) -> osu_counts.Counts:
        """``-x``/``-i`` of the launch as they stand (``Counts()``: OSU's defaults)."""
        return osu_counts.Counts(self.warmup, self.iterations, self.warmup_large,
                                 self.iterations_large)

    def osu_buckets(self) -> bool:
        """Whether the environment's OSU takes a count per size range (7.5.1 and later)."""
        return osu_versions.supports(self.osu_version, 'iteration_buckets')

    def count_options(self) -> list[str]:
        """``-x``/``-i`` as this OSU reads them (:func:`omb_suite.osu.counts.options`)."""
        return osu_counts.options(self.benchmark, self.counts(), self.osu_buckets())

    def run_facts(self) -> RunFacts:
        """The test's facts as its plan needs them (read afresh: each answer is the
        plan of the test as it stands)."""
        plan = self.sweep_plan()
        part, env = self.current_partition, self.current_environ.name
        return RunFacts(
            self.benchmark, self.osu_version, plan.sizes if plan else [], self.job_shape(),
            self.launches(), earlier_runs.partition_model(self),
            costmodel.model_for(part.extras), counts=self.counts(),
            from_history=self.iterations_from_history, buckets=self.osu_buckets(),
            osu_program=self.benchmark in catalogue.catalogue(),
            shrink=part.extras.get('iteration_shrink'), name=self.display_name,
            where=f'{self.display_name} on {part.fullname}+{env}')

    def planner(self) -> Planner:
        return Planner(self.run_facts())

    @run_after('setup', always_last=True)
    def choose_iterations(self):
        """Counts as set, else from history (printed with the reason)."""
        problem = counts_problem(self.counts(), self.osu_buckets(), self.osu_version)
        self.skip_if(problem is not None, problem or '')
        planner = self.planner()
        counts, reason = planner.choose_counts(lambda: earlier_runs.size_history(self))
        if counts is not None:
            self.warmup, self.iterations = counts.warmup, counts.iterations
            self.warmup_large, self.iterations_large = counts.warmup_large, \
                counts.iterations_large
        if reason:
            self.iterations_reason = reason
        if planner.needs_history():
            self.logger.info(reason)

    def wall_prediction(self) -> costmodel.Prediction:
        """The prediction of the run with its counts (:meth:`Planner.wall_prediction`)."""
        return self.planner().wall_prediction(self.counts(), earlier_runs.wall_factors(self))

    @run_before('run')
    def limit_from_prediction(self):
        """The limit from the prediction (:meth:`Planner.limit`); ``timeout`` enforces it."""
        planner, counts, walls = self.planner(), self.counts(), earlier_runs.wall_factors(self)
        pred = planner.wall_prediction(counts, walls)
        self._wall_prediction = planner.limit_prediction(counts, walls)
        self.model_s = round(planner.base_prediction(counts).seconds, 3)
        self.predicted_s = round(pred.seconds, 2)
        rule = self.current_partition.extras.get('time_limits') or {}
        limit: Limit = planner.limit(
            self._wall_prediction, self.limit_multiple or rule.get('multiple'),
            self.limit_floor_s or rule.get('floor_s'),
            asked=bool(self.limit_multiple or self.limit_floor_s),
            hang=lambda: bool(self.hang_after_result()), reframe_limit_s=self.reframe_limit_s)
        self._limit_rule, self._limit_basis = limit.rule, limit.basis
        self.limit_s = limit.seconds
        if limit.job is not None:
            self.time_limit = limit.job
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
