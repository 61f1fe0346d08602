"""Warm-up and iterations from the partition's own history (:mod:`omb_suite.cost.iterations`)
applied to a ReFrame test (:class:`FromHistory`, a base of ``OsuRunBase``).

When neither ``warmup`` nor ``iterations`` is set (``-S``, a mode), the test's earlier
passing runs in its partition's perflog (same test name, so same benchmark, placement,
algorithm and scale, and same environment) choose ``-x``/``-i``; the choice and its reason
are printed, kept in ``iterations_reason`` (run report) and the counts in the perflog
columns ``warmup``/``iterations``, and where the environment's OSU has iteration buckets
(:func:`omb_suite.osu.counts.options`) a count per size range, the sizes above 8 KiB in
``warmup_large``/``iterations_large``, in the one launch. ``-S iterations_from_history=0``
keeps OSU's defaults.

Attributes the test must offer by the end of ``setup``: ``benchmark``, ``osu_version``,
``warmup``, ``iterations``, ``reported_sizes()``, ``perflog_location()``, ``sweep_plan()``,
``job_shape()``, ``launches()``.
"""

from __future__ import annotations

from pathlib import Path

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, variable

from omb_suite.cost import fit as costfit
from omb_suite.cost import iterations
from omb_suite.cost import model as costmodel
from omb_suite.osu import catalogue
from omb_suite.osu import counts as osu_counts
from omb_suite.osu import limits as osu_limits
from omb_suite.osu import versions as osu_versions
from omb_suite.rfm.cost import partition_model

_ROWS: dict[Path, dict[tuple[str, str], list[dict[str, str]]]] = {}


def passing_records(path: Path, name: str, environ: str) -> list[dict[str, str]]:
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


def count_ran(row: dict[str, str], size: int) -> int | None:
    """The ``-i`` a record's run had at ``size`` (``None``: OSU's default)."""
    large = _count(row.get('iterations_large') or '')
    version = row.get('osu_version') or None
    benchmark = row.get('benchmark') or None
    if benchmark not in catalogue.catalogue():
        benchmark = None  # not OSU's, or no column: the rule of every program up to 7.4
    if large is not None and osu_limits.is_large(size, benchmark,
                                                 None if version == 'null' else version):
        return large
    return _count(row.get('iterations') or '')


class FromHistory(rfm.RegressionTestPlugin):
    """``-x``/``-i`` chosen from the test's own history when not set."""

    #: Choose ``-x``/``-i`` from history when neither is set; ``False``: OSU's defaults.
    #: :type: :class:`bool` :default: ``True``
    #: (``typ.Bool``: ``-S iterations_from_history=0`` is False; a plain ``bool`` took the
    #: string ``'0'`` for True.)
    iterations_from_history = variable(typ.Bool, value=True, loggable=False)

    #: Warm-up (``-x``) of the sizes above 8 KiB, apart from ``warmup`` (which then holds for
    #: the sizes up to 8 KiB): OSU 7.5.1 and later (iteration buckets); ``None``: as ``warmup``.
    #: :type: :class:`int` or ``None`` :default: ``None``
    warmup_large = variable(int, type(None), value=None)

    #: Timed iterations (``-i``) of the sizes above 8 KiB, as ``warmup_large``.
    #: :type: :class:`int` or ``None`` :default: ``None``
    iterations_large = variable(int, type(None), value=None)

    #: Why the test runs with its counts (printed, and in the run report).
    iterations_reason = variable(str, value='')

    def counts(self) -> osu_counts.Counts:
        return osu_counts.Counts(self.warmup, self.iterations, self.warmup_large,
                                 self.iterations_large)

    def osu_buckets(self) -> bool:
        """Whether the environment's OSU takes a count per size range (7.5.1 and later)."""
        return osu_versions.supports(self.osu_version, 'iteration_buckets')

    def count_options(self) -> list[str]:
        """``-x``/``-i`` as this OSU reads them (:func:`omb_suite.osu.counts.options`)."""
        return osu_counts.options(self.benchmark, self.counts(), self.osu_buckets())

    def size_history(self) -> list[iterations.SizeHistory]:
        """Each reported size's earlier passing values and the ``-i`` they ran with."""
        metric = catalogue.get(self.benchmark).metrics[:1]
        rows = passing_records(self.perflog_location() / f'{type(self).__name__}.log', self.name,
                            self.current_environ.name)
        out = []
        for size in self.reported_sizes() if metric else []:
            mine = [r for r in rows if r.get('perf_var') == f'{metric[0]}_{size}']
            ran = [count_ran(r, size) for r in mine]
            usual = max(set(ran), key=ran.count) if ran else None
            values = [float(r['perf_value']) for r, n in zip(mine, ran, strict=True)
                      if n == usual and r['perf_value'] not in ('', 'null', 'None')]
            out.append(iterations.SizeHistory(size, values, usual))
        return out

    def sweep_cost(self, counts: osu_counts.Counts) -> float:
        """Predicted seconds of the sweep with these counts (the partition's model)."""
        plan = self.sweep_plan()
        return costmodel.predict(self.benchmark, plan.sizes if plan else [], self.job_shape(),
                                 partition_model(self), warmup=counts.warmup,
                                 iterations=counts.iterations, launches=self.launches(),
                                 warmup_large=counts.warmup_large,
                                 iterations_large=counts.iterations_large,
                                 osu_version=self.osu_version).seconds

    @run_after('setup', always_last=True)
    def choose_iterations(self):
        """Counts from history (printed with the reason); set counts are kept."""
        if self.warmup_large is not None or self.iterations_large is not None:
            self.skip_if(not self.osu_buckets(), f'warmup_large/iterations_large need OSU\'s '
                         f'iteration buckets (OSU 7.5.1 or later); this environment\'s OSU: '
                         f'{self.osu_version or "version unknown"}')
        if self.counts() != osu_counts.Counts():
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
                                   self.current_partition.extras.get('iteration_shrink'),
                                   self.osu_buckets(), self.osu_version)
        self.warmup, self.iterations = choice.warmup, choice.iterations
        self.warmup_large, self.iterations_large = choice.warmup_large, choice.iterations_large
        self.iterations_reason = choice.reason
        self.logger.info(choice.reason)
