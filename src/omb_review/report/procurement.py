"""``omb-procurement``: the result table of a procurement's OSU runs, from the perflogs.

Reads the ``OsuProcurement`` perflogs (``reframe/checks/osu_procurement.py``) under a results
directory, keeps the latest run of each test case, and prints one row per pair of ranks with
the columns the procurement text asks for (nodes, tasks per node, visible devices,
executable, message size, result). Within each group (CPU or GPU, intra- or inter-node,
benchmark) the worst pair - lowest bandwidth, highest latency - is marked: it is the figure
the procurement reports ("the combination with the lowest theoretical peak").
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from omb_review.read.series import worse_when
from omb_suite.perflogs.reader import read_perflog

TEST = 'OsuProcurement'
_PAIR_VAR = re.compile(r'^gpus(?P<devices>[\d,]+)_(?P<metric>bandwidth|latency)_(?P<size>\d+)$')
_FIGURE_VAR = re.compile(r'^(?P<metric>bandwidth|latency)_(?P<size>\d+)$')
COLUMNS = ('system', 'environ', 'device', 'scope', 'nodes', 'tasks/node', 'visible devices',
           'executable', 'msg_size', 'result', 'unit', 'figure')


class ProcurementError(RuntimeError):
    """No usable procurement records; the message says what to run."""


@dataclass(frozen=True)
class Row:
    system: str
    environ: str
    device: str
    scope: str
    nodes: int
    tasks_per_node: int
    devices: str
    executable: str
    size: int
    value: float
    unit: str
    worst: bool = False

    def group(self) -> tuple[str, ...]:
        return self.system, self.environ, self.device, self.scope, self.executable

    def cells(self) -> list[str]:
        return [self.system, self.environ, self.device, self.scope, str(self.nodes),
                str(self.tasks_per_node), self.devices, f'`{self.executable}`', str(self.size),
                f'{self.value:.2f}', self.unit, 'worst' if self.worst else '']


def read_records(root: Path, system: str | None = None) -> pl.DataFrame:
    """All ``OsuProcurement`` perflog records under ``root`` (rotated files included)."""
    files = sorted(p for p in root.rglob(f'{TEST}.log*') if re.search(r'\.log(\.h\d+)?$', p.name))
    frames = []
    for path in files:
        frame, _ = read_perflog(path, str(path))
        if frame.height:
            frames.append(frame)
    if not frames:
        raise ProcurementError(f'no {TEST} perflogs under {root}: run the procurement checks '
                               'first (reframe -C reframe/config/settings.py -c reframe/checks '
                               '--mode procurement -r)')
    records = pl.concat(frames, how='diagonal_relaxed').filter(pl.col('perf_var').is_not_null())
    if system:
        records = records.filter(pl.col('system') == system)
        if not records.height:
            raise ProcurementError(f'no {TEST} records of system {system!r} under {root}')
    return latest_runs(records)


def latest_runs(records: pl.DataFrame) -> pl.DataFrame:
    """Only the newest job of each test case (a re-run replaces the earlier one)."""
    case = ['system', 'partition', 'environ', 'name']
    newest = records.group_by(case).agg(pl.col('job_completion_time').max())
    return records.join(newest, on=[*case, 'job_completion_time'])


def to_row(rec: dict) -> Row | None:
    """A table row from one record: a GPU pair, or the figure of a CPU case."""
    # GPU cases run with device buffers (the check's ``buffers`` column), whatever the
    # display name calls the case
    device = 'gpu' if 'D' in (rec['buffers'] or '').split() else 'cpu'
    match = _PAIR_VAR.match(rec['perf_var']) if device == 'gpu' else _FIGURE_VAR.match(
        rec['perf_var'])
    if match is None:
        return None
    nodes = int(rec['num_nodes'])
    return Row(f'{rec["system"]}:{rec["partition"]}', rec['environ'], device,
               'intra-node' if nodes == 1 else 'inter-node', nodes,
               int(rec['num_tasks_per_node']), match.groupdict().get('devices') or '-',
               rec['benchmark'], int(match['size']), float(rec['perf_value']),
               rec['perf_unit'])


def mark_worst(rows: list[Row]) -> list[Row]:
    """Mark the worst row of each group: lowest bandwidth, highest latency."""
    worst: dict[tuple[str, ...], Row] = {}
    for row in rows:
        best = worst.get(row.group())
        higher_is_worse = worse_when(row.unit) > 0
        if best is None or (row.value > best.value if higher_is_worse else row.value < best.value):
            worst[row.group()] = row
    chosen = {id(r) for r in worst.values()}
    return [Row(**{**r.__dict__, 'worst': id(r) in chosen}) for r in rows]


def table(records: pl.DataFrame) -> list[Row]:
    rows = [r for rec in records.iter_rows(named=True) if (r := to_row(rec)) is not None]
    rows.sort(key=lambda r: (*r.group(), r.nodes, r.devices))
    return mark_worst(rows)


def render(rows: list[Row]) -> str:
    """A Markdown table, like the one the procurement text shows."""
    lines = ['| ' + ' | '.join(COLUMNS) + ' |', '|' + '|'.join('---' for _ in COLUMNS) + '|']
    lines += ['| ' + ' | '.join(r.cells()) + ' |' for r in rows]
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='omb-procurement', description=__doc__.splitlines()[0])
    parser.add_argument('perflogs', type=Path, help='results directory (e.g. perflogs/)')
    parser.add_argument('--system', help='only this ReFrame system')
    args = parser.parse_args(argv)
    if not args.perflogs.is_dir():
        print(f'omb-procurement: {args.perflogs} is not a directory', file=sys.stderr)
        return 2
    try:
        rows = table(read_records(args.perflogs, args.system))
    except ProcurementError as err:
        print(f'omb-procurement: {err}', file=sys.stderr)
        return 1
    print(render(rows))
    return 0


if __name__ == '__main__':
    sys.exit(main())
