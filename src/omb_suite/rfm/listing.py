"""``reframe -l`` with the predicted cost of what it lists, in the listing's own time.

ReFrame's listing instantiates the tests but sets none up, so it knows no job shape. The
suite wraps ReFrame's ``list_checks``: after the listing, each listed case that predicts its
cost (:class:`~omb_suite.rfm.job_cost.ScaleAware`) is set up in memory only, the test's
attributes restored after each case: its setup hooks run on the case's partition and
environment (job shape, sweep, skips:
the same code as a run), not ReFrame's setup stage (no stage directory, job script, run
report or perflog), then the prediction of the run hook
(:meth:`~omb_suite.rfm.job_cost.ScaleAware.wall_prediction`) is recorded and printed at exit as
``--dry-run`` prints it. Hooks that only prepare files for the run (the test's
``PREPARES_ONLY``) are left out: they change neither the job, its sweep nor whether it runs.

Measured (benchmarks/harness_overhead.py): the verdict set's listing on ``example-epyc``
took 10.9 s when it dry-ran the selection in a second ReFrame, about 1.2 s this way.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator
from typing import Any

from reframe.core.exceptions import SkipTestError
from reframe.core.logging import getlogger
from reframe.frontend import cli

from omb_suite.rfm import job_cost


@contextlib.contextmanager
def restored(test: Any) -> Iterator[Any]:
    """The test, its attributes as they were once the block ends (a listed test serves
    several partitions and environments; a deep copy took most of the listing's time)."""
    saved = {k: copy.copy(v) if isinstance(v, (list, dict, set)) else v
             for k, v in vars(test).items()}
    try:
        yield test
    finally:
        vars(test).clear()
        vars(test).update(saved)


def set_up_in_memory(test: Any, case: Any) -> bool:
    """Run the test's setup hooks for the case's partition and environment; ``False`` if it
    would be skipped (or its setup fails: said in a warning, as a run would fail it)."""
    test._current_partition, test._current_environ = case.partition, case.environ
    hooks = [*test._rfm_pipeline_hooks.get('pre_setup', []),
             *test._rfm_pipeline_hooks.get('post_setup', [])]
    left_out = set(test.disabled_hooks) | set(test.PREPARES_ONLY)
    try:
        for hook in hooks:
            if hook.__name__ not in left_out:
                getattr(test, hook.__name__)()
    except SkipTestError:
        return False
    except Exception as err:    # a run would fail it in setup: it costs nothing, say why
        getlogger().warning(f'{case}: not in the predicted cost: its setup fails: {err}')
        return False
    return True


#: Predictions already made in this process, per test case (``id``): a budget
#: (:mod:`omb_suite.rfm.budget_selection`) predicts the cases before the listing prints them.
KNOWN: dict[int, tuple[str, str, float, int] | None] = {}


def prediction_of(case: Any) -> tuple[str, str, float, int] | None:
    """(partition, test, seconds, nodes) of a case, set up in memory once per process;
    ``None`` when its setup skips it."""
    if id(case) not in KNOWN:
        with restored(case.check) as test:
            KNOWN[id(case)] = None
            if set_up_in_memory(test, case):
                KNOWN[id(case)] = (case.partition.fullname, test.display_name,
                                   test.wall_prediction().seconds, max(1, test.num_nodes))
    return KNOWN[id(case)]


def predict(testcases: list) -> None:
    """Record the predicted cost of every listed case that predicts one."""
    for case in testcases:
        if isinstance(case.check, job_cost.ScaleAware) and (known := prediction_of(case)):
            part, name, seconds, nodes = known
            job_cost.PREDICTED.setdefault(part, []).append((name, seconds, nodes))


def _with_prediction(listing: Callable[..., None]) -> Callable[..., None]:
    def list_checks(testcases: list, printer: Any, *args: Any, **kwargs: Any) -> None:
        listing(testcases, printer, *args, **kwargs)
        predict(testcases)

    list_checks.omb_predicts = True
    return list_checks


def apply() -> None:
    """Make ReFrame's listing predict what it lists (once per process)."""
    if not getattr(cli.list_checks, 'omb_predicts', False):
        cli.list_checks = _with_prediction(cli.list_checks)
