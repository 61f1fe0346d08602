"""``-S budget=NODE_MINUTES`` and ``-S campaign=NAME`` applied to a ReFrame session.

ReFrame selects test cases one by one (``-p``, ``-n``, ``-t``, ``-x``, ``-E``, a mode); a
budget needs them all at once. The suite wraps ReFrame's last step before a listing or a run,
``dependencies.toposort`` (``reframe/frontend/cli.py``: after every filter, before
``-l``/``--dry-run``/``-r``): when a selected test carries a budget or a campaign, each case
is set up in memory and predicted as the listing does (:mod:`omb_suite.rfm.listing`), the
cases a campaign already has a result for are left out, the budget picks the rest
(:mod:`omb_suite.cost.budget`), and the test graph is pruned to them and their fixtures
(ReFrame's own ``prune_deps``). What the budget bought, left out and what the rest would cost
is printed before anything runs; a budget below the cheapest case runs nothing and exits 1.
Dry runs of a campaign rehearse it: each counts the campaign's earlier dry runs as done.

A case that cannot predict its cost (no :class:`~omb_suite.rfm.job_cost.ScaleAware`) or that its
setup skips stays selected at no cost: it costs a skip, or the budget cannot tell.
"""

from __future__ import annotations

import functools
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from reframe.core.logging import getlogger
from reframe.core.runtime import runtime
from reframe.frontend import dependencies
from reframe.utility import osext

from omb_suite.cost import budget as costbudget
from omb_suite.cost import wall as costwall
from omb_suite.rfm import earlier_runs, job_cost, listing

_SCALE = re.compile(r'\s%scale=\S+')


def _settings(cases: list) -> tuple[float | None, str | None]:
    """The session's budget and campaign, as ``-S`` set them on its tests."""
    budgets = {c.check.budget for c in cases if isinstance(c.check, job_cost.ScaleAware)}
    campaigns = {c.check.campaign for c in cases if isinstance(c.check, job_cost.ScaleAware)}
    budgets.discard('')
    campaigns.discard('')
    if len(budgets) > 1 or len(campaigns) > 1:
        raise costbudget.BudgetError(f'one budget and one campaign per session, not '
                                     f'{sorted(budgets)} {sorted(campaigns)}')
    amount = costbudget.parse(budgets.pop()) if budgets else None
    name = costbudget.campaign_name(campaigns.pop()) if campaigns else None
    return amount, name


def _key(case: Any) -> tuple[str, str, str, str]:
    part = case.partition
    return (part.fullname.split(':')[0], part.name, case.environ.name, case.check.name)


def _as_budget_case(case: Any) -> costbudget.Case | None:
    """The case's predicted node-minutes and what ranks it; ``None``: its setup skips it."""
    known = listing.prediction_of(case)
    if known is None:
        return None
    _, _, seconds, nodes = known
    test = case.check
    return costbudget.Case(
        key=_key(case), family=(case.partition.fullname, case.environ.name,
                                _SCALE.sub('', test.name)),
        benchmark=getattr(test, 'benchmark', '') or _case_part(test, 0),
        algorithm=getattr(test, 'algorithm', None) or _case_part(test, 1),
        num_nodes=nodes, num_tasks=_ranks(test),
        node_minutes=seconds * nodes / 60)


def _case_part(test: Any, i: int) -> str | None:
    """Benchmark (0) or algorithm (1) of a collective's ``case`` parameter (the test's own
    attributes are set in its setup, undone after the prediction)."""
    pair = getattr(test, 'case', None)
    return pair[i] if isinstance(pair, tuple) and len(pair) == 2 else None


def _ranks(test: Any) -> int:
    """The case's rank count: its ``scale`` parameter, else its ``num_tasks``."""
    scale = getattr(test, 'scale', None)
    return scale if isinstance(scale, int) else (test.num_tasks or 1)


@functools.cache
def _campaign_results(directory: Path, campaign: str, rehearsal: bool
                      ) -> tuple[dict[tuple, float], list[str]]:
    """{case key: node-minutes its runs took} of the campaign's cases with a result, from
    every run report in ``directory`` (time_run x nodes), and the reports that could not be
    read (said, then skipped). A dry run's report counts only for a ``rehearsal`` (a dry run
    itself: successive dry runs of a campaign rehearse its slices; nothing they "ran" counts
    for a real session)."""
    cases, problems = costwall.read_reports(directory, newest=None, dry_runs=rehearsal)
    done: dict[tuple, float] = defaultdict(float)
    for tc in cases:
        if tc.get('campaign') != campaign or tc.get('result') not in ('pass', 'fail'):
            continue
        try:
            key = (tc['system'], tc['partition'], tc['environ'], tc['name'])
        except KeyError as err:
            problems.append(f'{directory}: a test case without {err}; skipped')
            continue
        done[key] += (tc.get('time_run') or 0.0) * max(1, tc.get('num_nodes') or 1) / 60
    return dict(done), problems


def _report_dirs() -> list[Path]:
    """Where the campaign's run reports are: the suite's reports directory and that of the
    report file ReFrame writes (``--report-file`` or the configuration's ``report_file``)."""
    dirs = [earlier_runs.reports_dir()]
    configured = str(runtime().get_option('general/0/report_file') or '')
    if configured:
        dirs.append(Path(osext.expandvars(configured)).expanduser().parent)
    return sorted({d.resolve() for d in dirs if d.is_dir()})


def _winners(cases: list) -> set[tuple[str, str]]:
    """(benchmark, algorithm) pairs that were fastest at some size in the partitions' earlier
    runs of these environments (latencies in us: the collectives' sweeps)."""
    best: dict[tuple, tuple[float, str]] = {}
    seen: set[tuple[str, str]] = set()
    for case in cases:
        test = case.check
        if not isinstance(test, job_cost.ScaleAware) or not hasattr(test, 'algorithm'):
            continue
        with listing.restored(test):
            test._current_partition, test._current_environ = case.partition, case.environ
            directory = test.perflog_location()
        if (str(directory), case.environ.name) in seen:
            continue
        seen.add((str(directory), case.environ.name))
        for row in earlier_runs.partition_records(directory):
            alg = row.get('algorithm')
            if (row.get('environ') != case.environ.name or not alg or row.get('result') != 'pass'
                    or row.get('perf_unit') != 'us'):
                continue
            try:
                value = float(row.get('perf_value', ''))
            except ValueError:
                continue
            slot = (row.get('benchmark'), row.get('num_tasks'), row.get('perf_var'))
            if slot not in best or value < best[slot][0]:
                best[slot] = (value, alg)
    return {(b, a) for (b, _, _), (_, a) in best.items()
            if a not in costbudget.DEFAULT_ALGORITHMS}


def choose(cases: list) -> list | None:
    """The cases to keep (fixtures are kept by the caller through the graph), or ``None``
    when no budget or campaign was asked for."""
    amount, campaign = _settings(cases)
    if amount is None and campaign is None:
        return None
    runs = [c for c in cases if not c.check.is_fixture()]
    kept, priced = [], {}
    for case in runs:
        priced_case = (_as_budget_case(case) if isinstance(case.check, job_cost.ScaleAware)
                       else None)
        if priced_case is None:
            kept.append(case)          # skipped by its setup, or no prediction: no cost
        else:
            priced[priced_case.key] = (case, priced_case)
    done_minutes: dict[tuple, float] = {}
    rehearsal = any(c.check.is_dry_run() for c in runs)
    if campaign:
        done_minutes, problems = {}, []
        for directory in _report_dirs():
            found, bad = _campaign_results(directory, campaign, rehearsal)
            done_minutes |= found
            problems += bad
        for p in problems:
            getlogger().warning(p)
    todo = [bc for key, (_, bc) in priced.items() if key not in done_minutes]
    sel = costbudget.select(todo, amount, _winners(runs))
    sel.done = [bc for key, (_, bc) in priced.items() if key in done_minutes]
    # a rehearsal's dry runs took no node time: what they stand for is their prediction
    spent = sum(bc.node_minutes if rehearsal else done_minutes.get(bc.key, 0.0)
                for bc in sel.done)
    for line in costbudget.summary(sel, campaign, spent, rehearsal):
        getlogger().info(line)
    why = costbudget.below_cheapest(sel)
    if why:
        getlogger().error(why)
        sys.exit(1)
    chosen = {bc.key for bc in sel.chosen}
    return kept + [case for key, (case, _) in priced.items() if key in chosen]


def _budgeted(toposort: Any) -> Any:
    def budgeted_toposort(graph: dict, is_subgraph: bool = False) -> list:
        ordered = toposort(graph, is_subgraph)
        if budgeted_toposort.applied:
            return ordered
        budgeted_toposort.applied = True      # once per session: ReFrame sorts once
        share_fleet_budget(ordered)
        try:
            keep = choose(ordered)
        except costbudget.BudgetError as err:
            getlogger().error(str(err))
            sys.exit(2)
        if keep is None or len(keep) == len(ordered):
            return ordered
        return toposort(dependencies.prune_deps(graph, keep), is_subgraph)

    budgeted_toposort.applied = False
    budgeted_toposort.omb_budget = True
    return budgeted_toposort


def share_fleet_budget(cases: list) -> None:
    """A budget is the session's: the fleet tests of a session (one per benchmark, partition
    and environment, each holding every node) share it equally."""
    fleets = [c.check for c in cases if not c.check.is_fixture()
              and hasattr(c.check, 'budget_parts')]
    for check in fleets:
        check.budget_parts = len(fleets)


def apply() -> None:
    """Make ReFrame's selection honour a budget and a campaign (once per process)."""
    if not getattr(dependencies.toposort, 'omb_budget', False):
        dependencies.toposort = _budgeted(dependencies.toposort)
