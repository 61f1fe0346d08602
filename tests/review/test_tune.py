"""omb-review tune: the recommendation from sweep records (synthetic frames for the statistics,
the real sweep of tests/review/data/tune for the command), and 'nothing to recommend'."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import polars as pl
import pytest

from omb_review.cli import main
from omb_review.judge import detect
from omb_review.tuning import tune
from omb_suite.tuning import rules as tuning
from omb_suite.tuning.rules import DEFAULT

REPO = Path(__file__).resolve().parents[2]
START = datetime(2026, 11, 25, tzinfo=timezone.utc)
SETTINGS = detect.Settings()


def points(curves: dict[str, dict[int, list[float]]], *, evidence: str = 'tuned:bcast:x',
           result: str = 'pass', ranks: int = 4, bench: str = 'osu_bcast') -> pl.DataFrame:
    """Sweep points: algorithm -> size -> one value per session (sessions interleave)."""
    rows = []
    for alg, by_size in curves.items():
        for size, values in by_size.items():
            for i, v in enumerate(values):
                rows.append({
                    'time': START + timedelta(minutes=i, seconds=len(rows)), 'result': result,
                    'system': 'local', 'partition': 'default', 'environ': 'spack-openmpi',
                    'test': tune.SWEEP_TEST, 'name': f'{tune.SWEEP_TEST} {alg} {ranks}',
                    'benchmark': bench, 'num_tasks': ranks, 'num_nodes': 1, 'mapping': 'core',
                    'algorithm': alg, 'mpi_family': 'openmpi', 'mpi_version': '4.1.4',
                    'algorithm_evidence': evidence if alg != DEFAULT else None,
                    'metric': tune.METRIC, 'size': size, 'value': v})
    return pl.DataFrame(rows, schema_overrides={'algorithm_evidence': pl.String})


STEADY = [10.0, 10.1, 9.9, 10.05, 9.95]


def test_an_algorithm_faster_beyond_the_noise_wins_from_its_crossover():
    frame = points({DEFAULT: {1: STEADY, 1024: STEADY, 65536: STEADY},
                    'knomial': {1: STEADY, 1024: [v * 0.7 for v in STEADY],
                                65536: [v * 0.6 for v in STEADY]}})
    kept, notes = tune.usable(frame, allow_unproven=False)
    s = tune.study(kept, 'spack-openmpi', 'core', 0.05, SETTINGS)
    assert notes == []
    assert s.rules == [tuning.Rule('bcast', 4, 1, (tuning.Step(0, DEFAULT),
                                                    tuning.Step(1024, 'knomial')), 65536)]
    assert s.rules[0].algorithm_at(2048) == 'knomial'
    assert s.rules[0].algorithm_at(1 << 20) == DEFAULT  # beyond the measured sizes
    gains = {c.size: round(c.gain, 2) for c in s.cells}
    assert gains == {1: 0.0, 1024: 0.3, 65536: 0.4}


def test_a_difference_within_the_noise_or_below_the_threshold_keeps_the_default():
    noisy = [10.0, 14.0, 8.0, 12.0, 9.0]
    frame = points({DEFAULT: {8: noisy, 16: STEADY},
                    'chain': {8: [9.0, 13.0, 7.5, 11.0, 8.5], 16: [v * 0.98 for v in STEADY]}})
    s = tune.study(tune.usable(frame, False)[0], 'spack-openmpi', 'core', 0.05, SETTINGS)
    assert s.rules == [] and {c.winner for c in s.cells} == {DEFAULT}


def test_unproven_and_failed_runs_are_left_out_with_the_reason():
    proven = points({DEFAULT: {8: STEADY}})
    unproven = points({'pipeline': {8: [5.0] * 5}}, evidence='forced-not-proven:bcast:3')
    failed = points({'chain': {8: [5.0] * 5}}, result='fail')
    kept, notes = tune.usable(pl.concat([proven, unproven, failed]), allow_unproven=False)
    assert set(kept['algorithm']) == {DEFAULT}
    assert any('the run failed' in n for n in notes)
    assert any('not proven (forced-not-proven: 5 points)' in n for n in notes)
    kept, _ = tune.usable(pl.concat([proven, unproven]), allow_unproven=True)
    assert set(kept['algorithm']) == {DEFAULT, 'pipeline'}


def test_no_sweep_or_only_failed_sweeps_is_nothing_to_recommend():
    with pytest.raises(tune.NothingToRecommend, match='no algorithm sweep'):
        tune.usable(points({DEFAULT: {8: STEADY}}).with_columns(test=pl.lit('OsuCollective')),
                    False)
    with pytest.raises(tune.NothingToRecommend, match='no passed, proven sweep point'):
        tune.usable(points({DEFAULT: {8: STEADY}}, result='fail'), False)


def test_a_scale_without_the_default_measured_is_said_not_studied():
    frame = points({'chain': {8: STEADY}})
    s = tune.study(tune.usable(frame, False)[0], 'spack-openmpi', 'core', 0.05, SETTINGS)
    assert s.rules == [] and 'measure_default=1' in s.notes[0]


def test_several_node_counts_at_one_scale_ask_for_nodes():
    two = pl.concat([points({DEFAULT: {8: STEADY}}),
                     points({DEFAULT: {8: STEADY}}).with_columns(num_nodes=pl.lit(2, pl.Int64))])
    with pytest.raises(tune.NothingToRecommend, match='--nodes'):
        tune.study(tune.usable(two, False)[0], 'spack-openmpi', 'core', 0.05, SETTINGS)


def test_the_command_says_nothing_to_recommend_and_writes_no_file(tmp_path, capsys):
    logs = tmp_path / 'perflogs' / 'local' / 'default'
    logs.mkdir(parents=True)
    (logs / 'OsuCollective.log').write_text(
        'job_completion_time|result|system|partition|environ|name|perf_var|perf_value|'
        'perf_unit\n2026-11-25T10:00:00+00:00|pass|local|default|e|OsuCollective|'
        'avg_latency_8|1.0|us\n')
    assert main(['tune', str(tmp_path / 'perflogs'), '--no-cache', '-o',
                 str(tmp_path / 'out')]) == 3
    assert 'nothing to recommend: no algorithm sweep' in capsys.readouterr().err
    assert not (tmp_path / 'out').exists()


def test_the_table_names_each_step_with_its_gain():
    frame = points({DEFAULT: {1: STEADY, 1024: STEADY},
                    'knomial': {1: STEADY, 1024: [v * 0.5 for v in STEADY]}})
    s = tune.study(tune.usable(frame, False)[0], 'spack-openmpi', 'core', 0.05, SETTINGS)
    text = '\n'.join(tune.table(s))
    assert '| bcast | 4 | 1 | 1024-1024 | knomial | 50.0% | 0.50 [0.49, 0.51] | 1 |' in text
    assert "| bcast | 4 | 1 | 0-1023 | default | 0.0% | 1 (the library's own) | 1 |" in text
    assert json.dumps([c.size for c in s.cells]) == '[1, 1024]'


def test_the_report_shows_the_recommendation_or_says_why_there_is_none():
    from omb_review.report import page

    frame = points({DEFAULT: {1: STEADY, 1024: STEADY},
                    'knomial': {1: STEADY, 1024: [v * 0.5 for v in STEADY]}})
    found, said = tune.studies(frame, 'core', 0.05, SETTINGS)
    html = page.tuning_table(found, said)
    assert "id='tuning-table'" in html and '<td>knomial</td>' in html
    same = points({DEFAULT: {8: STEADY}, 'chain': {8: STEADY}})
    assert 'nothing to recommend' in page.tuning_table(*tune.studies(same, 'core', 0.05,
                                                                      SETTINGS))


def test_algorithms_that_tie_do_not_alternate_from_size_to_size():
    fast = [v * 0.5 for v in STEADY]
    frame = points({DEFAULT: {8: STEADY, 16: STEADY, 32: STEADY},
                    'chain': {8: fast, 16: [v * 1.02 for v in fast], 32: fast},
                    'knomial': {8: [v * 1.01 for v in fast], 16: fast,
                                32: [v * 0.7 for v in fast]}})
    s = tune.study(tune.usable(frame, False)[0], 'spack-openmpi', 'core', 0.05, SETTINGS)
    # 16 B: knomial is 2 % faster than chain, within the noise: chain stays; 32 B: 30 %
    assert [(c.size, c.winner) for c in s.cells] == [(8, 'chain'), (16, 'chain'),
                                                      (32, 'knomial')]


def test_a_real_sweep_gives_a_file_the_library_reads_and_its_table(tmp_path, capsys):
    """tests/review/data/tune: Open MPI 4.1.4's bcast at 4 ranks, five sessions."""
    assert main(['tune', str(REPO / 'tests/review/data/tune'), '--no-cache', '-o',
                 str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| bcast | 4 | 1 | 512-65536 | default | 0.0% | 1 (the library's own) | 8 |" in out
    # every winner's whole 95 % interval below 1 - 5 %, and carried by the record
    assert '| bcast | 4 | 1 | 0-31 | basic_linear | 78.2% | 0.22 [0.09, 0.42] | 5 |' in out
    rec = json.loads((tmp_path / 'spack-openmpi' / 'recommendation.json').read_text())
    (rule,) = rec['rules']
    assert (rule['collective'], rule['ranks'], rule['last_size']) == ('bcast', 4, 65536)
    assert rule['steps'][0]['start'] == 0 and rule['steps'][-1] == {'start': 512,
                                                                    'algorithm': DEFAULT}
    written = (tmp_path / 'spack-openmpi' / rec['file']).read_text()
    assert rec['load']['OMPI_MCA_coll_tuned_dynamic_rules_filename'].endswith(rec['file'])
    assert '\n7 3\n' in written  # bcast, one communicator size bracketed by the library's own
    won = [c for c in rec['cells'] if c['winner'] != DEFAULT]
    assert won and all(c['ratio_low'] <= c['ratio'] <= c['ratio_high'] < 0.95 for c in won)
    # what the load changes: coll/tuned's collectives, no component excluded
    assert rec['valid_for'] == 'openmpi 4.1.4' and 'allgatherv' in rec['touches']
    assert 'OMPI_MCA_coll' not in rec['load'] and 'no component is excluded' in rec['changes']


def test_an_environment_without_sweeps_is_nothing_to_recommend(tmp_path, capsys):
    assert main(['tune', str(REPO / 'tests/review/data/tune'), '--no-cache', '--environ',
                 'spack-mpich', '-o', str(tmp_path)]) == 3
    assert ('nothing to recommend: no records with environ spack-mpich (present: '
            'spack-openmpi)') in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_algorithm_the_file_cannot_name_is_never_recommended():
    frame = points({DEFAULT: {8: STEADY, 16: STEADY},
                    'tree': {8: [v * 0.5 for v in STEADY], 16: [v * 0.5 for v in STEADY]},
                    'chain': {8: [v * 0.7 for v in STEADY], 16: [v * 0.7 for v in STEADY]}})
    said = {}

    def unwritable(family, version, coll, name):
        said[name] = (family, version, coll)
        return 'takes parameters' if name == 'tree' else None

    s = tune.study(tune.usable(frame, False)[0], 'spack-openmpi', 'core', 0.05, SETTINGS,
                   unwritable)
    assert {c.winner for c in s.cells} == {'chain'}
    assert s.notes == ['bcast tree not recommended: takes parameters']
    assert said['tree'] == ('openmpi', '4.1.4', 'bcast')
