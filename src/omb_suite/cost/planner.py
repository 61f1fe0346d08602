"""One test's plan: its ``-x``/``-i``, predicted wall time and time limit, from its facts.

The ReFrame layer gathers a test's facts once its job shape and sweep are known
(:class:`RunFacts`: the OSU program and version, the sizes OSU will run, the job shape, the
launches, the counts set by hand, whether to choose them from history, the partition's
models and its earlier runs' wall times) and asks a :class:`Planner`:

1. :func:`counts_problem`, then :meth:`Planner.choose_counts`: the counts, as set or from
   the test's history (:mod:`omb_suite.cost.iterations`, each candidate priced by
   :meth:`Planner.sweep_cost`);
2. :meth:`Planner.wall_prediction` with those counts: the declared model's prediction times
   what earlier runs took against it (:mod:`omb_suite.cost.wall`), else the fitted model's
   (:mod:`omb_suite.cost.model`);
3. :meth:`Planner.limit`: the time limit from that prediction (:class:`Limit`).

It applies nothing: the layer sets the test's variables and job from the answers
(``omb_suite.rfm.job_cost``, ``omb_suite.rfm.history_counts``). No ReFrame here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from omb_suite.cost import fit as costfit
from omb_suite.cost import iterations
from omb_suite.cost import model as costmodel
from omb_suite.cost import wall as costwall
from omb_suite.osu.counts import Counts


@dataclass(frozen=True)
class RunFacts:
    """What one test case is, as the plan needs it (gathered by the ReFrame layer)."""

    benchmark: str
    osu_version: str | None
    #: The sizes OSU will run at this rank count (``[]``: no size sweep).
    sizes: list[int]
    shape: costmodel.Shape
    launches: int
    #: The partition's model corrected by its perflogs (:func:`omb_suite.cost.fit.fit`).
    model: costmodel.PerfModel
    #: The partition's declared model (or the defaults), unfitted: the wall times' yardstick.
    declared: costmodel.PerfModel
    #: The counts as set (``-S``, a mode); ``Counts()``: none set.
    counts: Counts = field(default_factory=Counts)
    #: Choose the counts from history when none is set (``iterations_from_history``).
    from_history: bool = True
    #: The OSU takes a count per size range (7.5.1 and later).
    buckets: bool = False
    #: Whether OSU has the program (a program of ours keeps its own counts).
    osu_program: bool = True
    #: The partition's declared exponents (extras ``iteration_shrink``).
    shrink: dict | None = None
    #: Who the counts are for, in their reason (``<test> on <partition>+<environ>``).
    where: str = ''
    #: The test's name in the reasons that need no partition.
    name: str = ''


@dataclass(frozen=True)
class Limit:
    """The time limit of each launch (``seconds``; 0: none) and of the job (``job``,
    ReFrame's ``time_limit``; ``None``: the partition's stays); ``rule``: (multiple, floor)
    as asked; ``basis``: why a limit not from the prediction."""

    seconds: int = 0
    job: str | None = None
    rule: tuple[float | None, int | None] = (None, None)
    basis: str | None = None


def counts_problem(counts: Counts, buckets: bool, osu_version: str | None) -> str | None:
    """Why counts set by hand cannot run (per-size-range counts for an OSU without
    ``buckets``), else ``None``."""
    if counts.bucketed and not buckets:
        return (f'warmup_large/iterations_large need OSU\'s iteration buckets (OSU 7.5.1 '
                f'or later); this environment\'s OSU: {osu_version or "version unknown"}')
    return None


@dataclass(frozen=True)
class Planner:
    """The answers for one test case (:class:`RunFacts`); see the module's steps."""

    facts: RunFacts

    def needs_history(self) -> bool:
        """Whether :meth:`choose_counts` reads the test's history."""
        f = self.facts
        return f.counts == Counts() and f.osu_program and f.from_history

    def choose_counts(self, history: Callable[[], list[iterations.SizeHistory]]
                      ) -> tuple[Counts | None, str]:
        """(counts, reason): ``None`` keeps the counts as they are (set, or a program of
        ours: reason ``''``); ``history`` is read only when the counts come from it."""
        f = self.facts
        if f.counts != Counts():
            return None, f'{f.name}: -x/-i as set'
        if not f.osu_program:
            return None, ''
        if not f.from_history:
            return Counts(), f'{f.name}: OSU\'s defaults (iterations_from_history off)'
        choice = iterations.choose(f.benchmark, f.where, history(), self.sweep_cost, f.shrink,
                                   f.buckets, f.osu_version)
        return choice.counts, choice.reason

    def prediction(self, counts: Counts, model: costmodel.PerfModel | None = None
                   ) -> costmodel.Prediction:
        """The model's prediction with these counts (``model``: the fitted one when None)."""
        f = self.facts
        return costmodel.predict(f.benchmark, f.sizes, f.shape, model or f.model,
                                 warmup=counts.warmup, iterations=counts.iterations,
                                 launches=f.launches, warmup_large=counts.warmup_large,
                                 iterations_large=counts.iterations_large,
                                 osu_version=f.osu_version)

    def sweep_cost(self, counts: Counts) -> float:
        """Predicted seconds with these counts (the fitted model): what history's choice
        of counts is priced with."""
        return self.prediction(counts).seconds

    def base_prediction(self, counts: Counts) -> costmodel.Prediction:
        """The declared model's prediction, unfitted: a fixed yardstick that earlier runs'
        wall times are compared with, so that a changing fit does not compound with them."""
        return self.prediction(counts, self.facts.declared)

    def wall_prediction(self, counts: Counts, walls: costwall.WallFactors
                        ) -> costmodel.Prediction:
        """Where earlier runs measured this program (``walls``: at this or other scales),
        the base prediction times their wall time against it; where they measured only other
        programs of the partition, the base prediction times their median factor
        (:func:`~omb_suite.cost.wall.borrowed`), unless the fitted model has this program's
        perflogs to correct it with; else the fitted model's."""
        f = self.facts
        if any(b == f.benchmark for b, _ in walls):
            return costmodel.scaled(self.base_prediction(counts),
                                    costwall.factor(walls, f.benchmark, f.shape.ranks))
        borrowed = costwall.borrowed(walls, f.shape.ranks)
        if borrowed is None or any(key[0] == f.benchmark for key in f.model.corrections):
            return self.prediction(counts)
        return costmodel.scaled(self.base_prediction(counts), borrowed)

    def limit_prediction(self, counts: Counts, walls: costwall.WallFactors
                         ) -> costmodel.Prediction:
        """What the time limit is drawn from: the wall prediction where this program's own
        runs gave it; where its factor is only borrowed from other programs, the larger of
        that and the fitted model's (a borrowed factor below 1 must not cut a first run)."""
        pred = self.wall_prediction(counts, walls)
        if any(b == self.facts.benchmark for b, _ in walls):
            return pred
        fitted = self.prediction(counts)
        return fitted if fitted.seconds > pred.seconds else pred

    def limit(self, prediction: costmodel.Prediction, multiple: float | None,
              floor_s: int | None, *, asked: bool, hang: Callable[[], bool],
              reframe_limit_s: Callable[[], float]) -> Limit:
        """The limit: ``multiple`` x the prediction, at least ``floor_s``, when the model is
        the partition's own (declared, or fitted from runs of this program) or a limit was
        ``asked`` for; else, for a
        library that may ``hang`` after its result, ReFrame's limit less its grace (so that
        sanity sees the output); else none (a guess must not stop a first run). ``hang`` and
        ``reframe_limit_s`` are asked only when no model gives the limit."""
        launches = self.facts.launches
        _, _, grace = costmodel.limit_rule()
        rule = (multiple, floor_s)
        unmeasured = self.unmeasured()
        if (self.facts.model.source != 'default' and not unmeasured) or asked:
            seconds = costmodel.time_limit(prediction, multiple, floor_s)
            return Limit(seconds, f'{seconds * launches + grace}s', rule)
        if hang():
            allowed = reframe_limit_s()
            why = unmeasured or 'no partition model to predict from'
            return Limit(max(1, int(allowed / launches) - grace), None, rule,
                         f"ReFrame's {allowed:.0f} s less {grace} s: {why}, and a library "
                         'that may not exit after its result')
        return Limit(0, None, rule, unmeasured)

    def unmeasured(self) -> str | None:
        """Why the partition's fitted model only guesses this program's cost (its perflogs
        have no run of it to correct the model with), or None: a first run is not stopped by
        a guess (``osu_partitioned_latency`` with MPICH 4.0.2 took 310 s where the model
        said 5.5 s)."""
        f = self.facts
        if not f.model.fitted or not costfit.measurable(f.benchmark) \
                or any(key[0] == f.benchmark for key in f.model.corrections):
            return None
        return (f'no run of {f.benchmark} in this partition\'s perflogs yet: the model only '
                'guesses its cost, and a guess does not stop a first run')
