"""The CI definitions and the README's first command, run for real with stand-ins.

Each test copies the script under test into a sandbox where every program it calls
(scripts/*, .ci/run, tests/cluster/*, .venv/bin/*, `ip`, `id`) is a stand-in that logs its
arguments, then runs it with bash: what is checked is what the script does (which commands,
in which order, with which arguments, what happens on failure), not what its text contains.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from setup_helpers import script
from testdata import REPO

LOGGER = 'echo "$(basename "$0") $*" >> "$STANDIN_LOG"; exit "${STANDIN_RC:-0}"'


def readme_commands() -> list[str]:
    """The commands of README's "Two commands on a fresh machine" block."""
    readme = (REPO / 'README.md').read_text()
    section = readme.split('## Two commands on a fresh machine', 1)[1]
    block = re.search(r'```bash\n(.*?)```', section, re.S)[1]
    return [line.split('#')[0].strip() for line in block.splitlines() if line.strip()]


def console_scripts() -> list[str]:
    text = (REPO / 'pyproject.toml').read_text()
    return re.findall(r'^([\w-]+) = "', text.split('[project.scripts]')[1], re.M)


class Sandbox:
    """A directory holding the script under test and logging stand-ins of its commands."""

    def __init__(self, root: Path, real: list[str]) -> None:
        self.root, self.log = root, root / 'calls.log'
        for rel in real:
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / rel, target)
        standins = [p.relative_to(REPO) for pattern in ('scripts/*', '.ci/*', 'tests/cluster/*',
                                                        'tests/flux/*', 'tests/*.sh')
                    for p in REPO.glob(pattern) if p.is_file()]
        standins += [Path('.venv/bin') / n for n in ('reframe', 'python', *console_scripts())]
        for rel in standins:
            if str(rel) not in real:
                script(root / rel, LOGGER)
        script(root / 'bin' / 'ip', 'exit "${STANDIN_IP_RC:-1}"')
        script(root / 'bin' / 'id', 'echo "${STANDIN_UID:-1000}"')

    def run(self, command: str, **env: str) -> subprocess.CompletedProcess:
        environ = {'PATH': f'{self.root / "bin"}:/usr/bin:/bin', 'STANDIN_LOG': str(self.log),
                   'HOME': str(self.root), **env}
        return subprocess.run(['bash', '-c', command], cwd=self.root, env=environ,
                              capture_output=True, text=True)

    def calls(self) -> list[str]:
        return [c.strip() for c in self.log.read_text().splitlines()] if self.log.exists() else []


def test_readme_names_the_two_commands():
    assert readme_commands() == ['bash scripts/quickstart.sh', 'bash scripts/run-tests.sh']


def test_ci_runs_the_readme_commands_without_a_build_when_it_has_no_sources(tmp_path):
    box = Sandbox(tmp_path / 'main', ['.ci/run'])
    done = box.run('bash .ci/run')
    assert done.returncode == 0, done.stdout + done.stderr
    assert box.calls() == ['install-deps.sh --cluster --browser --flux',
                           'quickstart.sh --no-build', 'reframe-oldest.sh', 'modules-ci.sh',
                           'run-tests.sh']
    assert 'SKIP mini-cluster: not root' in done.stdout
    assert 'SKIP Flux: no flux-core source in' in done.stdout
    assert 'SKIP the fleet on 4 nodes: needs the mini-cluster and OSU_ROOT' in done.stdout
    assert 'no Spack sources, so no OSU build' in done.stdout
    assert "SKIP today's MPI releases: no Spack sources" in done.stdout
    assert 'CI phase times (exit 0)' in done.stdout


def test_ci_builds_osu_when_given_spack_sources(tmp_path):
    box = Sandbox(tmp_path / 'main', ['.ci/run'])
    sources = {'OMB_SPACK_GIT': '/srv/spack.git', 'OMB_SPACK_PACKAGES_GIT': '/srv/pk.git',
               'OMB_SPACK_MIRROR': '/srv/mirror'}
    assert box.run('bash .ci/run', **sources).returncode == 0
    assert 'quickstart.sh' in box.calls()


def test_ci_builds_osu_73_from_the_mirror_beside_the_checkout_and_tests_with_it(tmp_path):
    box = Sandbox(tmp_path / 'main', ['.ci/run'])
    mirror = tmp_path / 'shared' / 'mirror'
    for sub in ('spack.git', 'spack-packages.git', 'spack-mirror/_source-cache'):
        (mirror / sub).mkdir(parents=True)
    script(box.root / 'scripts/quickstart.sh', 'echo "quickstart$* OSU=$OMB_OSU_VERSION '
           'GIT=$OMB_SPACK_GIT MIRROR=$OMB_SPACK_MIRROR" >> "$STANDIN_LOG"')
    script(box.root / 'scripts/run-tests.sh', 'echo "run-tests OSU_ROOT=$OSU_ROOT '
           'OSU_ROOT_MPICH=${OSU_ROOT_MPICH:-none}" >> "$STANDIN_LOG"')
    view = box.root / 'spack/environments/openmpi/.spack-env/view'
    (view / 'libexec/osu-micro-benchmarks').mkdir(parents=True)
    done = box.run('bash .ci/run')
    assert done.returncode == 0, done.stdout + done.stderr
    assert f'using the source mirror {mirror}' in done.stdout
    assert box.calls()[1:] == [
        f'quickstart OSU=7.3 GIT={mirror}/spack.git MIRROR={mirror}/spack-mirror',
        'reframe-oldest.sh', 'pip-mpis-ci.sh', 'modules-ci.sh',
        f'run-tests OSU_ROOT={view} OSU_ROOT_MPICH=none']
    assert 'SKIP Flux: no flux-core source' in done.stdout


def test_ci_builds_flux_from_the_mirror_and_runs_the_verdict_set_under_it(tmp_path):
    """flux-core's build is a phase of its own (its time in the summary), then the verdict
    set in the Flux instances, before the tests (which then find the build)."""
    box = Sandbox(tmp_path / 'main', ['.ci/run'])
    mirror = tmp_path / 'shared' / 'mirror'
    mirror.mkdir(parents=True)
    (mirror / 'flux-core-0.88.0.tar.gz').touch()
    done = box.run('bash .ci/run')
    assert done.returncode == 0, done.stdout + done.stderr
    assert box.calls()[-3:] == ['build-flux.sh', 'flux-ci.sh', 'run-tests.sh']
    assert 'flux-core build (scripts/build-flux.sh)' in done.stdout
    assert 'Flux: verdict set (this machine, mini-cluster)' in done.stdout


def test_ci_tears_the_mini_cluster_down_when_a_command_fails(tmp_path):
    box = Sandbox(tmp_path / 'main', ['.ci/run'])
    script(box.root / 'scripts/quickstart.sh', f'{LOGGER.replace("${STANDIN_RC:-0}", "3")}')
    done = box.run('bash .ci/run', STANDIN_UID='0', STANDIN_IP_RC='0')
    assert done.returncode == 3
    assert box.calls() == ['install-deps.sh --cluster --browser --flux', 'up',
                           'quickstart.sh --no-build', 'down']
    assert 'CI phase times (exit 3)' in done.stdout and 'mini-cluster down' in done.stdout


RFM = ('.venv/bin/reframe -C reframe/config/settings.py -c reframe/checks -r --max-retries 1 '
       "--exec-policy serial -p ^spack-(openmpi|mpich)$ --system flux-test:")


@pytest.mark.parametrize(('cluster_rc', 'env', 'rc', 'calls', 'said'), [
    ('0', {}, 0, [f'instance -- {RFM}host', 'status',
                  f'instance --minicluster -- {RFM}minicluster'], 'Flux across the mini-cluster'),
    ('1', {}, 0, [f'instance -- {RFM}host', 'status'], 'SKIP Flux across the mini-cluster'),
    ('1', {'OMB_CLUSTER_UP': '1'}, 1, [f'instance -- {RFM}host', 'status'],
     'OMB_CLUSTER_UP=1 but the mini-cluster is not healthy'),
])
def test_flux_ci_runs_the_verdict_set_in_one_instance_per_form(tmp_path, cluster_rc, env, rc,
                                                                calls, said):
    box = Sandbox(tmp_path, ['tests/flux-ci.sh'])
    script(tmp_path / 'tests/cluster/status',
           f'echo "status $*" >> "$STANDIN_LOG"; exit {cluster_rc}')
    done = box.run('bash tests/flux-ci.sh', **env)
    assert done.returncode == rc, done.stdout + done.stderr
    assert box.calls() == calls
    assert said in done.stdout + done.stderr


@pytest.mark.parametrize(('args', 'setup', 'reframe'), [
    ('--mode quick -n OsuPt2Pt', 'omb-setup', '--mode quick -n OsuPt2Pt'),
    ('--no-build --mode quick', 'omb-setup --no-build', '--mode quick'),
])
def test_quickstart_gives_no_build_to_omb_setup_and_the_rest_to_reframe(tmp_path, args,
                                                                         setup, reframe):
    box = Sandbox(tmp_path, ['scripts/quickstart.sh'])
    done = box.run(f'bash scripts/quickstart.sh {args}')
    assert done.returncode == 0, done.stdout + done.stderr
    assert box.calls() == ['install-deps.sh', setup, 'reframe -C reframe/config/settings.py '
                           '-c reframe/checks --system local -r --max-retries 1 '
                           f'--exec-policy serial {reframe}']


def test_quickstart_stops_when_setup_fails(tmp_path):
    box = Sandbox(tmp_path, ['scripts/quickstart.sh'])
    script(tmp_path / '.venv/bin/omb-setup', LOGGER.replace('${STANDIN_RC:-0}', '1'))
    assert box.run('bash scripts/quickstart.sh --mode quick').returncode == 1
    assert box.calls() == ['install-deps.sh', 'omb-setup']


def gitlab_jobs() -> dict[str, dict]:
    ci = yaml.safe_load((REPO / '.gitlab-ci.yml').read_text())
    return {k: v for k, v in ci.items() if isinstance(v, dict) and 'script' in v}


def test_gitlab_jobs_run_our_commands_with_their_variables(tmp_path):
    ci = yaml.safe_load((REPO / '.gitlab-ci.yml').read_text())
    jobs = gitlab_jobs()
    assert set(jobs) == {'unit-tests', 'suite-and-gate'}
    assert all(job['stage'] in ci['stages'] for job in jobs.values())
    box = Sandbox(tmp_path, [])
    for job in jobs.values():
        for line in job['script'] + job.get('after_script', []):
            done = box.run(line, **{k: str(v) for k, v in ci['variables'].items()})
            assert done.returncode == 0, f'{line}: {done.stderr}'
    assert box.calls() == ['run-tests.sh -m not cluster',
                           'cluster-ci.sh mycluster:alloc nightly --mode nightly',
                           'omb-review report /shared/omb-results/mycluster -o review/']


@pytest.mark.parametrize(('step', 'call'), [
    ('before', 'upgrade.sh before mycluster:alloc'), ('after', 'upgrade.sh after'),
    ('side-by-side', 'upgrade.sh side-by-side mycluster:alloc openmpi-4.1.5 openmpi-4.1.6')])
def test_gitlab_upgrade_runs_the_upgrade_procedure(tmp_path, step, call):
    ci = yaml.safe_load((REPO / '.gitlab-ci.yml').read_text())
    job = gitlab_jobs()['suite-and-gate']
    box = Sandbox(tmp_path, [])
    for line in job['script']:
        assert box.run(line, UPGRADE_STEP=step, UPGRADE_OLD='openmpi-4.1.5',
                       UPGRADE_NEW='openmpi-4.1.6', **{k: str(v) for k, v in
                                                       ci['variables'].items()}).returncode == 0
    assert box.calls() == [call]


def test_gitlab_report_uses_omb_review_on_path_without_the_checkouts_venv(tmp_path):
    """A site's own configuration skips the set-up: no .venv, the site's omb-review."""
    ci = yaml.safe_load((REPO / '.gitlab-ci.yml').read_text())
    box = Sandbox(tmp_path, [])
    (tmp_path / '.venv/bin/omb-review').unlink()
    script(tmp_path / 'bin' / 'omb-review', 'echo "site-omb-review $*" >> "$STANDIN_LOG"')
    for line in gitlab_jobs()['suite-and-gate']['after_script']:
        assert box.run(line, **{k: str(v) for k, v in ci['variables'].items()}).returncode == 0
    assert box.calls() == ['site-omb-review report /shared/omb-results/mycluster -o review/']


def test_github_workflow_runs_the_ci_entry_point_on_debian(tmp_path):
    wf = yaml.safe_load((REPO / '.github/workflows/ci.yml').read_text())
    job = wf['jobs']['ci']
    assert job['container']['image'] == 'debian:12'
    box = Sandbox(tmp_path, [])
    script(tmp_path / '.ci/run', 'echo "run CI=$CI" >> "$STANDIN_LOG"')
    runs = [s['run'] for s in job['steps'] if '.ci/run' in s.get('run', '')]
    assert len(runs) == 1
    assert box.run(runs[0]).returncode == 0
    assert box.calls() == ['run CI=true']


def test_stand_ins_cover_every_program_the_ci_calls():
    """A new program called by .ci/run must get a stand-in here, or the tests above lie."""
    text = (REPO / '.ci/run').read_text()
    called = set(re.findall(r'(?:bash |^|\s)((?:scripts|tests)/[\w./-]+)', text, re.M))
    assert called <= {str(p.relative_to(REPO)) for pattern in ('scripts/*', 'tests/cluster/*',
                                                              'tests/*.sh')
                      for p in REPO.glob(pattern)}


def test_cluster_ci_help_says_what_it_does_and_installs_nothing(tmp_path):
    box = Sandbox(tmp_path, ['scripts/cluster-ci.sh'])
    done = box.run('bash scripts/cluster-ci.sh --help')
    assert done.returncode == 0 and 'SYSTEM[:PARTITION] [TAG]' in done.stdout
    assert box.calls() == []  # no install, no omb-setup, no reframe
    done = box.run('bash scripts/cluster-ci.sh --mode nightly')
    assert done.returncode == 2 and 'usage:' in done.stderr and box.calls() == []


def test_cluster_ci_dry_run_writes_job_scripts_and_judges_nothing(tmp_path):
    box = Sandbox(tmp_path, ['scripts/cluster-ci.sh'])
    script(tmp_path / 'scripts' / 'results-dir.sh', f'echo {tmp_path / "results"}')
    done = box.run('bash scripts/cluster-ci.sh mycluster:batch ci --mode nightly --dry-run',
                   OMB_NO_SETUP='1')
    assert done.returncode == 0, done.stdout + done.stderr
    [reframe] = box.calls()
    assert ' --dry-run' in reframe and ' -r ' not in f'{reframe} '
    assert 'skipped (--dry-run: nothing was measured)' in done.stdout


def test_upgrade_keeps_the_users_selection_through_every_session(tmp_path):
    """``upgrade.sh before SYSTEM -p P`` passes ``-p P`` to each session before and, kept,
    after (beside ``--mode``, which our modes keep: tests/test_mode_selection.py)."""
    box = Sandbox(tmp_path, ['scripts/upgrade.sh'])
    script(tmp_path / 'scripts' / 'results-dir.sh', f'echo {tmp_path / "results"}')
    site = {'OMB_RFM_CONFIG': 'site.py:reframe/config/modes.py', 'OMB_UPGRADE_SESSIONS': '1',
            'RFM_REFERENCE_PREFIX': str(tmp_path)}
    (tmp_path / 'mycluster.yaml').write_text('{}\n')  # the site's references exist
    done = box.run("bash scripts/upgrade.sh before mycluster:batch -p '^openmpi-4_1_6$'",
                   **site)
    assert done.returncode == 0, done.stdout + done.stderr
    done = box.run('bash scripts/upgrade.sh after', **site)
    calls = [c for c in box.calls() if c.startswith('cluster-ci.sh')]
    assert calls == ['cluster-ci.sh mycluster:batch upgrade=pre --mode nightly -p ^openmpi-4_1_6$',
                     'cluster-ci.sh mycluster:batch upgrade=post --mode nightly -p ^openmpi-4_1_6$',
                     'cluster-ci.sh mycluster:batch upgrade=post --mode nightly -p ^openmpi-4_1_6$']


def test_side_by_side_runs_the_tests_of_blind_curves_again(tmp_path):
    """Where compare passes but writes the -n patterns of blind curves (--again), their tests
    run again in both orders, the user's -n replaced by theirs, other options kept, and
    compare judges all the pairs; OMB_SIDE_BY_SIDE_AGAIN=0, or a regression: no second
    round."""
    box = Sandbox(tmp_path, ['scripts/upgrade.sh'])
    script(tmp_path / 'scripts' / 'results-dir.sh', f'echo {tmp_path / "results"}')
    (tmp_path / 'results').mkdir()
    script(tmp_path / 'scripts' / 'cluster-ci.sh',
           'echo "cluster-ci.sh reruns=$OMB_RERUNS $*" >> "$STANDIN_LOG"')
    # the first compare finds two blind curves' tests, the second none
    script(tmp_path / '.venv' / 'bin' / 'omb-review', '\n'.join([
        'echo "omb-review $*" >> "$STANDIN_LOG"',
        'while [ $# -gt 0 ]; do [ "$1" = --again ] && again=$2; shift; done',
        'if [ ! -e "$again.seen" ]; then printf "^A%%x=1\\$\\n^B\\$\\n" > "$again"',
        '  touch "$again.seen"; else : > "$again"; fi',
        'exit "${STANDIN_RC:-0}"']))
    done = box.run("bash scripts/upgrade.sh side-by-side sys ompi-4 ompi-5 -n X -E 'a == 1'")
    assert done.returncode == 0, done.stdout + done.stderr
    calls = box.calls()
    assert [c.split()[0] for c in calls] == ['cluster-ci.sh', 'cluster-ci.sh', 'omb-review',
                                             'cluster-ci.sh', 'cluster-ci.sh', 'omb-review']
    assert calls[0].endswith('-S iterations_from_history=0 -S enforce_references=0 -n X -E a == 1')
    assert calls[3] == calls[4] and calls[3].endswith(
        '-S iterations_from_history=0 -S enforce_references=0 -E a == 1 -n ^A%x=1$ -n ^B$'), calls
    assert '2 test(s) whose curves were ok but blind' in done.stdout
    for env, rc in (({'OMB_SIDE_BY_SIDE_AGAIN': '0'}, '0'), ({}, '1')):
        box.log.unlink()
        for seen in (tmp_path / 'results').glob('*.seen'):
            seen.unlink()
        box.run('bash scripts/upgrade.sh side-by-side sys ompi-4 ompi-5', STANDIN_RC=rc, **env)
        assert [c.split()[0] for c in box.calls()] == ['cluster-ci.sh', 'cluster-ci.sh',
                                                       'omb-review']


def test_side_by_side_runs_half_its_pairs_with_the_environments_reversed(tmp_path):
    """``upgrade.sh side-by-side``: 12 pairs as 6 in the site's configured order, then 6 with
    reframe/config/reversed_environs.py layered after the site's configuration (its own -C
    files kept), the user's selection in both, both libraries with OSU's counts (not each
    one's from its history); OMB_SIDE_BY_SIDE_ORDER=configured: one."""
    box = Sandbox(tmp_path, ['scripts/upgrade.sh'])
    script(tmp_path / 'scripts' / 'results-dir.sh', f'echo {tmp_path / "results"}')
    script(tmp_path / 'scripts' / 'cluster-ci.sh',
           'echo "cluster-ci.sh reruns=$OMB_RERUNS config=${OMB_RFM_CONFIG:-} $*" '
           '>> "$STANDIN_LOG"')
    site = {'OMB_RFM_CONFIG': 'site.py:reframe/config/modes.py'}
    done = box.run('bash scripts/upgrade.sh side-by-side mycluster:batch ompi-4 ompi-5 -n X',
                   **site)
    assert done.returncode == 0, done.stdout + done.stderr
    calls = [c for c in box.calls() if c.startswith('cluster-ci.sh')]
    select = ("upgrade=side-by-side -p ^(ompi-4|ompi-5)$ --exec-policy serial --max-retries 0 "
              "-S iterations_from_history=0 -S enforce_references=0 -n X")
    assert calls == [
        f'cluster-ci.sh reruns=5 config=site.py:reframe/config/modes.py mycluster:batch {select}',
        f'cluster-ci.sh reruns=5 config=site.py:reframe/config/modes.py:{tmp_path}/reframe/'
        f'config/reversed_environs.py mycluster:batch {select}']
    assert box.calls()[-1].startswith('omb-review compare')
    box.log.unlink()
    done = box.run('bash scripts/upgrade.sh side-by-side mycluster:batch ompi-4 ompi-5',
                   OMB_SIDE_BY_SIDE_ORDER='configured', OMB_SIDE_BY_SIDE_PAIRS='7')
    assert [c.split(' config=')[0] for c in box.calls() if c.startswith('cluster-ci')] == [
        'cluster-ci.sh reruns=6']
