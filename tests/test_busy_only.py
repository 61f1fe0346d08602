"""tests/busy-only.sh: a CI phase's verdict set failed only because the node was busy is said
and not failed; any other failure, or a log without ReFrame's failure summary, stays a failure."""

from __future__ import annotations

import subprocess

from testdata import REPO

SUMMARY = '''[ FAILED ] Ran 12/12 test case(s) from 12 check(s) (2 failure(s))
==============================================================================
SUMMARY OF FAILURES
------------------------------------------------------------------------------
FAILURE INFO for OsuPt2Pt %benchmark=osu_latency (run: 2/2)
  * Reason: performance error: the node was busy: other work took 25 % of its CPU time
FAILURE INFO for OsuPt2Pt %benchmark=osu_bw (run: 2/2)
  * Reason: {second}
'''


def busy_only(tmp_path, text: str) -> subprocess.CompletedProcess:
    log = tmp_path / 'verdict.log'
    log.write_text(text)
    return subprocess.run(['bash', str(REPO / 'tests' / 'busy-only.sh'), str(log)],
                          capture_output=True, text=True)


def test_only_busy_failures_are_not_judged(tmp_path):
    out = busy_only(tmp_path, SUMMARY.format(
        second='performance error: the node was busy: load 3.1 on 2 CPUs'))
    assert out.returncode == 0 and 'NOT JUDGED: 2 failure(s)' in out.stdout


def test_a_real_failure_beside_a_busy_one_fails(tmp_path):
    out = busy_only(tmp_path, SUMMARY.format(
        second='performance error: failed to meet reference(s): bw_1048576=900 MB/s'))
    assert out.returncode == 1
    assert busy_only(tmp_path, 'Traceback: reframe crashed\n').returncode == 1
