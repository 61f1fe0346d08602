"""A budget and a campaign for real on ``local`` (OSU built, ReFrame ``-r``): each session
buys what fits its budget of what the campaign has not run yet, and the campaign finishes
the study with no case run twice."""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import partial

import pytest
import rfm_helpers
from rfm_helpers import local_registry, needs_osu, osu_root

run_reframe = partial(rfm_helpers.run_reframe, checks=('osu_pt2pt.py', 'osu_collectives.py'))
# a small study: point-to-point and two collectives of one library, short runs
STUDY = ('-p', 'system-openmpi', '-n', 'OsuPt2Pt|OsuCollective%case=osu_(allreduce|bcast)/',
         '-S', 'iterations=100', '-S', 'warmup=10', '-S', 'max_size=1024')
_TO_GO = re.compile(r'campaign \S+: (\d+) of (\d+) case\(s\) done, (\d+) left; '
                    r'([\d.]+) node-minutes spent \((?:measured|rehearsed in dry runs: '
                    r'predicted, not measured)\), ([\d.]+) predicted to go')
_BOUGHT = re.compile(r'Budget \S+ node-minutes: (\d+) case\(s\) selected, predicted ([\d.]+)')


def campaign_cases(tmp_path, name: str) -> list[str]:
    """The test cases of the campaign in the session reports, one entry per run."""
    cases = []
    for path in sorted((tmp_path / 'results' / 'reports').glob('*.json')):
        report = json.loads(path.read_text())
        cases += [tc['name'] for run in report['runs'] for tc in run['testcases']
                  if tc.get('campaign') == name]
    return cases


@pytest.mark.e2e
@needs_osu()
def test_a_campaign_finishes_a_study_in_slices_with_no_case_run_twice(tmp_path):
    registry = local_registry(tmp_path, osu_openmpi=osu_root('OSU_ROOT'))
    run = partial(run_reframe, tmp_path, '--system', 'local', *STUDY, registry=registry)
    listed = run('-S', 'campaign=study', '-l')
    assert listed.returncode == 0, listed.stdout + listed.stderr
    done, total, left, _, to_go = _TO_GO.search(listed.stdout).groups()
    assert (int(done), int(left)) == (0, int(total)) and int(total) >= 4
    # about half the study per session, as first predicted (the partition's model is
    # fitted again from each session's perflogs, so later slices may buy less)
    budget = f'{float(to_go) / 2 * 1.05:.4f}'
    sessions = []
    for _ in range(6):
        out = run('-S', 'campaign=study', '-S', f'budget={budget}', '-r')
        assert out.returncode == 0, out.stdout + out.stderr
        sessions.append(out.stdout)
        if 'complete' in out.stdout:
            break
    assert 'campaign study: complete' in sessions[-1]
    slices = sessions[:-1]
    assert 2 <= len(slices) <= 5, [s[-800:] for s in sessions]
    for text in slices:
        bought, predicted = _BOUGHT.search(text).groups()
        assert 0 < float(predicted) <= float(budget)
        assert f'Ran {bought}/{bought} test case(s)' in text
    runs = Counter(campaign_cases(tmp_path, 'study'))
    assert len(runs) == int(total) and set(runs.values()) == {1}      # each case once
    assert 'Ran 0/0 test case(s)' in sessions[-1] or 'Running 0 check(s)' in sessions[-1]


@pytest.mark.e2e
@needs_osu()
def test_a_budget_below_the_cheapest_case_runs_nothing(tmp_path):
    registry = local_registry(tmp_path, osu_openmpi=osu_root('OSU_ROOT'))
    out = run_reframe(tmp_path, '--system', 'local', *STUDY, '-S', 'budget=0.0001', '-r',
                      registry=registry)
    assert out.returncode == 1
    assert 'budget=0.0001 node-minutes is below the cheapest selected case' in out.stdout
    assert '[ RUN' not in out.stdout and not (tmp_path / 'results' / 'local').exists()
    wrong = run_reframe(tmp_path, '--system', 'local', *STUDY, '-S', 'budget=2h', '-l',
                        registry=registry)
    assert wrong.returncode == 2 and '-S budget=NODE_MINUTES (e.g. -S budget=600)' in \
        wrong.stdout + wrong.stderr


def test_a_campaign_rehearsed_in_dry_runs_covers_the_study_exactly_once(tmp_path):
    """example-epyc (8 nodes of 128 cores): the bcast sweep of one library, every algorithm
    at every scale on whole cores, 3.6 node-minutes a night (about half of it); each dry
    run of the campaign counts the earlier ones as done."""
    from rfm_helpers import two_family_registry
    study = ('--system', 'example-epyc:compute', '-p', 'test-openmpi',
             '-n', 'OsuCollectiveSweep%case=osu_bcast/', '-E', "mapping == 'core'",
             '-S', 'campaign=tune', '-S', 'budget=3.6', '--dry-run')
    nights, skipped = [], []
    for _ in range(6):
        out = rfm_helpers.run_reframe(tmp_path, *study, registry=two_family_registry(tmp_path),
                                      checks=('explore/osu_collectives.py',))
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr
        if 'campaign tune: complete' in out.stdout:
            break
        _, total, _, spent, _ = _TO_GO.search(out.stdout).groups()
        # what the rehearsal counts as spent is what its nights bought, never more
        assert float(spent) <= 3.6 * len(nights) + 1e-6, out.stdout[-2000:]
        if not nights:
            forecast = int(re.search(r'at least (\d+) session', out.stdout).group(1))
        nights.append(re.findall(r'^\[ +OK \] \(\s*\d+/\d+\) (OsuCollectiveSweep .*?) /\w+ @',
                                 out.stdout, re.M))
        # what its setup skips (a scale the partition cannot hold) costs nothing: every night
        skipped.append(re.findall(r'^\[ +SKIP \] \(\s*\d+/\d+\) (OsuCollectiveSweep .*?) /\w+ @',
                                  out.stdout, re.M))
    ran = Counter(n for night in nights for n in night)
    assert len(ran) == int(total) > 30 and set(ran.values()) == {1}
    assert all(s == skipped[0] for s in skipped) and not set(skipped[0]) & set(ran)
    assert 2 <= forecast <= len(nights) <= forecast + 2
