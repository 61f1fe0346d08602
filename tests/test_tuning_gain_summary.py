"""``benchmarks/tuning_gain.py``'s summary over real comparisons (tests/data/tuning/comparisons):
every cell counted, the non-blocking and untouched ones apart, each slower cell named, and
comparisons of runs split over several ``--tuned-prefix`` folders added up."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / 'tests' / 'data' / 'tuning' / 'comparisons' / 'openmpi-4.1.4'


def tuning_gain():
    spec = importlib.util.spec_from_file_location('tuning_gain',
                                                  REPO / 'benchmarks' / 'tuning_gain.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def place(where: Path, prefix: str, part: str, test: str, data: str) -> None:
    folder = where / prefix / part / 'local' / 'default' / 'spack-openmpi' / test
    folder.mkdir(parents=True)
    shutil.copy(DATA / data, folder / 'tuning-comparison.json')


def test_split_runs_add_up_and_the_slower_cell_is_named(tmp_path):
    place(tmp_path, 'tuned-nb', 'stage', 'OsuTunedCollective_58b4b0f0', 'bcast-4.json')
    place(tmp_path, 'tuned-big', 'output', 'OsuTunedNonBlocking_bbed28ee', 'iallreduce-4.json')
    (tmp_path / 'tuned-nb-perflogs').mkdir()  # the perflogs beside them are not comparisons
    lines, slower = tuning_gain().summary(tmp_path)
    text = '\n'.join(lines)
    assert 'cells measured with and without the load: 24 (2 collective' in text
    assert 'of them non-blocking (pure communication time): 11, slower 0' in text
    assert 'of them on collectives the load does not touch: 11, slower 0' in text
    # bcast's 8 ruled sizes (0-255 B), each faster with its interval below 1
    assert 'cells where a rule applies: 8; faster with the 95 % interval below 1: 8' in text
    assert slower == 1 and 'SLOWER: osu_bcast 4 ranks 4096 B (default: 1.35' in text


def test_a_retry_replaces_the_first_attempt(tmp_path):
    place(tmp_path, 'tuned', 'stage', 'OsuTunedCollective_58b4b0f0', 'bcast-4.json')
    place(tmp_path, 'tuned', 'output', 'OsuTunedCollective_58b4b0f0_retry1',
          'iallreduce-4.json')
    lines, slower = tuning_gain().summary(tmp_path)
    assert slower == 0
    assert 'measured with and without the load: 11 (1 collective' in '\n'.join(lines)


def test_a_re_measured_job_shows_why_its_first_attempt_failed(tmp_path):
    import json

    place(tmp_path, 'tuned', 'output', 'OsuTunedCollective_58b4b0f0', 'bcast-4.json')
    (tmp_path / 'tuned.log').write_text('[==========] Retrying 1 failed check(s) (retry 1/1)\n')
    name = 'OsuTunedCollective %case=osu_scatter/default %scale=7 %mapping=core'
    reason = 'sanity error: osu_scatter at 7 ranks: the load is slower than the default'
    case = {'display_name': name, 'environ': 'spack-openmpi'}
    (tmp_path / 'tuned-report.json').write_text(json.dumps({'runs': [
        {'testcases': [{**case, 'result': 'fail', 'fail_reason': reason}]},
        {'testcases': [{**case, 'result': 'pass', 'fail_reason': None}]}]}))
    (tmp_path / 'tuned-78-report.json').write_text('{"runs": [')  # cut short
    lines, _ = tuning_gain().summary(tmp_path)
    text = '\n'.join(lines)
    assert 'failed at the first attempt and re-measured (--max-retries 1): 1 test(s)' in text
    assert f'first attempt: {name}: {reason}' in text
    assert 'first attempt: tuned-78-report.json: unreadable report' in text


def test_a_test_a_later_run_passed_is_not_listed_failed(tmp_path):
    """ReFrame's lines of two runs split by --tuned-prefix (as tuning_gain.py logs them): a test
    that failed in the first and passed in the second is not named FAILED; one that failed in
    the second is, with its reason."""
    place(tmp_path, 'tuned', 'output', 'OsuTunedCollective_58b4b0f0', 'bcast-4.json')
    name = 'OsuTunedCollective %case=osu_bcast/default %scale=2 %mapping=core'
    other = 'OsuTunedCollective %case=osu_gather/default %scale=3 %mapping=core'
    fail = '[     FAIL ] (1/2) {} /0f442b54 @minicluster:alloc+spack-mpich\n'
    info = ('FAILURE INFO for {} (run: 1/1)\n  * Description: x\n  * Reason: sanity error: '
            '{}\n')
    (tmp_path / 'tuned-2.log').write_text(fail.format(name) + info.format(name, 'proof failed'))
    (tmp_path / 'tuned-p2.log').write_text(
        f'[       OK ] (1/2) {name} /0f442b54 @minicluster:alloc+spack-mpich\n'
        + fail.format(other) + info.format(other, 'slower at 2 B'))
    lines, _ = tuning_gain().summary(tmp_path)
    assert [line for line in lines if 'FAILED' in line] == [
        f'  FAILED: {other}: sanity error: slower at 2 B']


SESSION = '''[ FAILED ] Ran 8/8 test case(s) from 8 check(s) (1 failure(s))
==============================================================================
SUMMARY OF FAILURES
------------------------------------------------------------------------------
FAILURE INFO for OsuCollectiveSweep %case=osu_bcast/chain %scale=2 (run: 1/1)
  * Failing phase: performance
  * Reason: performance error: failed to meet reference(s): avg_latency_8=24.1 us
FAILURE INFO for OsuCollectiveSweep %case=osu_bcast/pipeline %scale=2 (run: 1/1)
  * Failing phase: {phase}
  * Reason: {reason}
'''


def step(tmp_path, phase: str, reason: str, **kw) -> int:
    """tuning_gain's _run of a step that prints a ReFrame failure summary and exits 1."""
    text = SESSION.format(phase=phase, reason=reason)
    return tuning_gain()._run(['bash', '-c', f'cat <<"X"\n{text}X\nexit 1'],
                              tmp_path / 'sweep-0.log', {}, **kw)


def test_a_sweep_case_beyond_its_guard_rail_is_left_out_and_said(tmp_path, capsys):
    reason = 'performance error: failed to meet reference(s): avg_latency_65536=61 us'
    assert step(tmp_path, 'performance', reason, out_of_bounds_ok=True) == 0
    said = capsys.readouterr().out
    assert 'LEFT OUT: 2 case(s) measured beyond their guard-rail references' in said
    assert 'failed (performance): performance error: failed to meet reference(s): ' \
           'avg_latency_8=24.1 us' in said
    # elsewhere (the load against the default) a missed reference stays a failure
    assert step(tmp_path, 'performance', reason) == 1


def test_a_sweep_case_with_wrong_results_still_fails(tmp_path, capsys):
    assert step(tmp_path, 'sanity', "osu_bcast algorithm 'pipeline' computed wrong results",
                out_of_bounds_ok=True) == 1
    said = capsys.readouterr().out
    assert 'failed (sanity): osu_bcast algorithm' in said and 'LEFT OUT' not in said
