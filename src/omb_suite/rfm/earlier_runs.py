"""What earlier runs of a partition say, read where ReFrame wrote them, once per process.

The facts a test's plan (:class:`omb_suite.cost.planner.Planner`) takes from disk, gathered
for :class:`~omb_suite.rfm.job_cost.ScaleAware`:

* :func:`partition_model`: the partition's declared ``perf_model`` (extras) corrected by its
  own perflogs of the test's environment (:mod:`omb_suite.cost.fit`);
* :func:`wall_factors`: what earlier runs took against the model, from the partition's run
  reports (:mod:`omb_suite.cost.wall`);
* :func:`size_history`: the test's own passing records (same test name, so same benchmark,
  placement, algorithm and scale, and same environment) per reported size, with the ``-i``
  each ran with: what ``-x``/``-i`` are chosen from (:mod:`omb_suite.cost.iterations`).

Also where they are: :func:`results_dir` (perflogs) and :func:`reports_dir` (run reports).
No hooks and no test variables: ReFrame's objects are only read.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import reframe as rfm
from reframe.core.runtime import runtime
from reframe.utility import osext

from omb_suite.cost import fit as costfit
from omb_suite.cost import iterations
from omb_suite.cost import model as costmodel
from omb_suite.cost import wall as costwall
from omb_suite.osu import catalogue
from omb_suite.osu import limits as osu_limits
from omb_suite.setup.environs import repo_root


def results_dir() -> Path:
    return Path(os.environ.get('OMB_RESULTS_DIR') or repo_root() / 'perflogs')


_MODELS: dict[str, costmodel.PerfModel] = {}
_WALLS: dict[str, costwall.WallFactors] = {}
_ROWS: dict[Path, dict[tuple[str, str], list[dict[str, str]]]] = {}


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


def size_history(test: rfm.RegressionTest) -> list[iterations.SizeHistory]:
    """Each reported size's earlier passing values and the ``-i`` they ran with (the test's
    perflog ``<TestClass>.log`` in :meth:`perflog_location`)."""
    metric = catalogue.get(test.benchmark).metrics[:1]
    rows = passing_records(test.perflog_location() / f'{type(test).__name__}.log', test.name,
                           test.current_environ.name)
    out = []
    for size in test.reported_sizes() if metric else []:
        mine = [r for r in rows if r.get('perf_var') == f'{metric[0]}_{size}']
        ran = [count_ran(r, size) for r in mine]
        usual = max(set(ran), key=ran.count) if ran else None
        values = [float(r['perf_value']) for r, n in zip(mine, ran, strict=True)
                  if n == usual and r['perf_value'] not in ('', 'null', 'None')]
        out.append(iterations.SizeHistory(size, values, usual))
    return out
