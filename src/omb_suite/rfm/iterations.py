"""Warm-up and iterations from the partition's own history (:mod:`omb_suite.iterations`)
applied to a ReFrame test (:class:`FromHistory`, a base of ``OsuRunBase``).

When neither ``warmup`` nor ``iterations`` is set (``-S``, a mode), the test's earlier
passing runs in its partition's perflog (same test name, so same benchmark, placement,
algorithm and scale, and same environment) choose ``-x``/``-i``; the choice and its reason
are printed, kept in ``iterations_reason`` (run report) and the counts in the perflog
columns ``warmup``/``iterations``. ``-S iterations_from_history=0`` keeps OSU's defaults.

Attributes the test must offer by the end of ``setup``: ``benchmark``, ``warmup``,
``iterations``, ``reported_sizes()``, ``perflog_location()``, ``sweep_plan()``,
``job_shape()``, ``launches()``.
"""

from __future__ import annotations

from pathlib import Path

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, variable

from omb_suite import catalogue, costfit, costmodel, iterations
from omb_suite.rfm.cost import partition_model

_ROWS: dict[Path, dict[tuple[str, str], list[dict[str, str]]]] = {}


def perflog_rows(path: Path, name: str, environ: str) -> list[dict[str, str]]:
    """The passing records of one test and environment in a perflog and in its rotated
    older formats (``.log.h0``...: ReFrame rotates a perflog when its columns change; their
    records without ``iterations`` ran with OSU's defaults unless set by hand), oldest file
    first; read and indexed once per process (tests share a perflog, and a listing sets up
    every case)."""
    if path not in _ROWS:
        index: dict[tuple[str, str], list[dict[str, str]]] = {}
        for part in [*sorted(path.parent.glob(f'{path.name}.h*')), path]:
            for row in costfit.read_perflog(part)[0] if part.is_file() else []:
                if row.get('result') == 'pass':
                    key = (row.get('name', ''), row.get('environ', ''))
                    index.setdefault(key, []).append(row)
        _ROWS[path] = index
    return _ROWS[path].get((name, environ), [])


def _count(value: str) -> int | None:
    return int(value) if value.isdigit() else None


class FromHistory(rfm.RegressionTestPlugin):
    """``-x``/``-i`` chosen from the test's own history when not set."""

    #: Choose ``-x``/``-i`` from history when neither is set; ``False``: OSU's defaults.
    #: :type: :class:`bool` :default: ``True``
    #: (``typ.Bool``: ``-S iterations_from_history=0`` is False; a plain ``bool`` took the
    #: string ``'0'`` for True.)
    iterations_from_history = variable(typ.Bool, value=True, loggable=False)

    #: Why the test runs with its counts (printed, and in the run report).
    iterations_reason = variable(str, value='')

    def size_history(self) -> list[iterations.SizeHistory]:
        """Each reported size's earlier passing values and the ``-i`` they ran with."""
        metric = catalogue.get(self.benchmark).metrics[:1]
        rows = perflog_rows(self.perflog_location() / f'{type(self).__name__}.log', self.name,
                            self.current_environ.name)
        out = []
        for size in self.reported_sizes() if metric else []:
            mine = [r for r in rows if r.get('perf_var') == f'{metric[0]}_{size}']
            ran = [_count(r.get('iterations', '')) for r in mine]
            usual = max(set(ran), key=ran.count) if ran else None
            values = [float(r['perf_value']) for r, n in zip(mine, ran, strict=True)
                      if n == usual and r['perf_value'] not in ('', 'null', 'None')]
            out.append(iterations.SizeHistory(size, values, usual))
        return out

    def sweep_cost(self, warmup: int | None, count: int | None) -> float:
        """Predicted seconds of the sweep with these counts (the partition's model)."""
        plan = self.sweep_plan()
        return costmodel.predict(self.benchmark, plan.sizes if plan else [], self.job_shape(),
                                 partition_model(self), warmup=warmup, iterations=count,
                                 launches=self.launches()).seconds

    @run_after('setup', always_last=True)
    def choose_iterations(self):
        """Counts from history (printed with the reason); set counts are kept."""
        if self.warmup is not None or self.iterations is not None:
            self.iterations_reason = f'{self.display_name}: -x/-i as set'
            return
        if self.benchmark not in catalogue.catalogue():
            return  # a program of ours (the collectives' correctness check), not OSU's
        if not self.iterations_from_history:
            self.iterations_reason = (f'{self.display_name}: OSU\'s defaults '
                                      '(iterations_from_history off)')
            return
        where = f'{self.display_name} on {self.current_partition.fullname}' \
                f'+{self.current_environ.name}'
        choice = iterations.choose(self.benchmark, where, self.size_history(), self.sweep_cost,
                                   self.current_partition.extras.get('iteration_shrink'))
        self.warmup, self.iterations = choice.warmup, choice.iterations
        self.iterations_reason = choice.reason
        self.logger.info(choice.reason)
