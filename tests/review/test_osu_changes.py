"""The review knows when OSU changed the benchmark (omb_review.judge.osu_releases): a series across
OSU 7.4 -> 7.5 is split where the reductions' default datatype became MPI_INT, never judged
as the MPI's regression; a benchmark OSU did not change is judged across the same upgrade.

The records are the 80 real sessions of tests/review/data/trend (osu_latency and osu_bw,
intra-socket), re-labelled: osu_latency as osu_allreduce (a latency in us, as a reduction
reports), the last 20 sessions as OSU 7.5 and, there, every value 30 % worse: the tests that
use them say "synthetic"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import DATA, worsen

from omb_review.cli import main
from omb_review.judge.osu_releases import split
from omb_review.read.ingest import load

NOTE = 'OSU 7.4 -> 7.5: osu_allreduce now MPI_INT (was MPI_CHAR)'


def _relabelled(tmp_path: Path, upgrade: str) -> Path:
    """The trend perflog, osu_latency named osu_allreduce, its last 20 sessions run with OSU
    ``upgrade`` and 30 % worse (latency higher, bandwidth lower)."""
    root = Path(shutil.copytree(DATA / 'trend', tmp_path / 'perflogs'))
    log = root / 'local' / 'default' / 'OsuPt2Pt.log'
    header, *rows = log.read_text().splitlines()
    cols = header.split('|')
    sessions = sorted({r.split('|')[cols.index('session_tag')] for r in rows},
                      key=lambda tag: int(tag.split('-')[1]))
    late = set(sessions[-20:])
    out = []
    for row in rows:
        rec = dict(zip(cols, row.split('|'), strict=True))
        for col in ('benchmark', 'name', 'display_name'):
            rec[col] = rec[col].replace('osu_latency', 'osu_allreduce')
        if rec['session_tag'] in late:
            rec['osu_version'] = upgrade
        out.append('|'.join(rec.values()))
    log.write_text('\n'.join([header, *out]) + '\n')
    worsen(log, lambda r: 1.0 if r['session_tag'] not in late else
           (1.3 if r['perf_unit'] == 'us' else 1 / 1.3))
    return root


def _check(root: Path, tmp_path: Path) -> tuple[int, dict]:
    out = tmp_path / 'check.json'
    code = main(['check', str(root), '--no-cache', '--latest', '10', '--json', str(out)])
    return code, json.loads(out.read_text())


def _status(report: dict, benchmark: str) -> set[str]:
    return {s['status'] for s in report['series'] if s['benchmark'] == benchmark
            and '[OSU' not in s['test']}


def test_synthetic_upgrade_to_osu_7_5_splits_the_reduction_and_judges_the_bandwidth(tmp_path):
    code, report = _check(_relabelled(tmp_path, '7.5'), tmp_path)
    assert code == 1  # osu_bw, which OSU 7.5 did not change, is 30 % worse: a regression
    assert 'regression' in _status(report, 'osu_bw')
    assert 'regression' not in _status(report, 'osu_allreduce')
    allreduce = [s for s in report['series'] if s['benchmark'] == 'osu_allreduce']
    before = [s for s in allreduce if s['test'] == 'OsuPt2Pt [OSU 7.4: MPI_CHAR]']
    after = [s for s in allreduce if s['test'] == 'OsuPt2Pt']
    assert len(before) == len(after) >= 5
    assert all(s['status'] == 'insufficient' and s['reason'].startswith(NOTE) for s in before)
    assert all(s['reason'].startswith(f'{NOTE}: judged from the change on') for s in after)
    assert any(note.startswith(f'{NOTE}: {len(after)} series split there') for note in
               report['notes'])


def test_synthetic_same_step_without_an_osu_change_is_a_regression(tmp_path):
    """The control: the same 30 % with OSU 7.4 throughout is the MPI's, and named."""
    code, report = _check(_relabelled(tmp_path, '7.4'), tmp_path)
    assert code == 1
    assert 'regression' in _status(report, 'osu_allreduce')
    assert not any('[OSU' in s['test'] for s in report['series'])


@pytest.mark.parametrize('upgrade', ['7.5.1', '8.0b2'])
def test_synthetic_later_releases_split_at_the_first_mpi_int_one(tmp_path, upgrade):
    frame = load(_relabelled(tmp_path, upgrade), use_cache=False).frame
    out, parts, notes = split(frame)
    assert out.height == frame.height and out.columns == frame.columns
    assert notes == [f'OSU 7.4 -> {upgrade}: osu_allreduce now MPI_INT (was MPI_CHAR): '
                     f'{len(parts) // 2} series split there; the runs before it are kept apart '
                     'and not judged']
    moved = out.filter(out['test'].cast(str) == 'OsuPt2Pt [OSU 7.4: MPI_CHAR]')
    assert set(moved['benchmark'].cast(str)) == {'osu_allreduce'}
    assert set(moved['osu_version'].cast(str)) == {'7.4'}


def test_real_records_of_one_release_are_left_as_they_are():
    frame = load(DATA / 'trend', use_cache=False).frame
    out, parts, notes = split(frame)
    assert out is frame and not parts and not notes
