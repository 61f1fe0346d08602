"""The scale audit: the verdict set dry-run on example sites of 1024 nodes (EPYC 2 x 64 cores,
GPU 4 GPUs and 2 x 32 cores), every generated job script checked against OSU's limits and
the cost model (omb_suite.cost.scale_audit): 0 violations, and the predicted cost printed. And
issue 20's reproduction: a size OSU announced it would not run is reported, not failed."""

from __future__ import annotations

import json
import re
import shutil
import time

import pytest
from rfm_helpers import (
    fake_osu_tree,
    job_scripts,
    local_registry,
    needs_osu,
    osu_root,
    run_reframe,
    two_family_registry,
    write_registry,
)
from testdata import REPO

from omb_suite.cost import scale_audit

#: Perflogs of real runs of the verdict set on `local` (spack-openmpi, spack-mpich).
REAL_PERFLOGS = REPO / 'tests' / 'review' / 'data' / 'ours' / 'local' / 'default'
SITES = {'example-epyc-xl': 512 * 2**30, 'example-gpu-xl': 512 * 2**30}


@pytest.mark.parametrize('system', sorted(SITES))
def test_verdict_set_at_1024_nodes_has_no_command_osu_would_cap_unknown(tmp_path, system):
    start = time.monotonic()
    out = run_reframe(tmp_path, '--system', system, '--dry-run',
                      registry=two_family_registry(tmp_path))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    audits = [a for path, script in job_scripts(tmp_path).items()
              if (a := scale_audit.audit_script(path, script, node_memory=SITES[system]))]
    bad = [(a.path, v) for a in audits for v in a.violations]
    assert not bad, bad
    largest = max(audits, key=lambda a: a.predicted_s)
    node_min = sum(a.predicted_s * a.nodes for a in audits) / 60
    print(f'\n{system}: {len(audits)} jobs, {node_min:.0f} node-minutes, largest predicted '
          f'{largest.path} {largest.predicted_s:.0f} s; 0 violations '
          f'({time.monotonic() - start:.0f} s)')
    assert 'Predicted cost' in out.stdout and f'{system}:' in out.stdout
    # past 512 ranks OSU caps alltoall and allgather: the plan knows where
    wide = [a for a in audits if a.benchmark == 'osu_alltoall' and a.ranks > 512]
    assert wide and all(a.nodes == 1024 for a in wide)


def test_the_audit_finds_a_cap_the_plan_does_not_know():
    """Synthetic script: osu_alltoall at 1024 ranks expecting 1 MiB, no -M; no timeout."""
    script = '\n'.join([
        '#SBATCH --ntasks=1024', '#SBATCH --nodes=8', '#SBATCH --time=0:4:0',
        scale_audit.plan_line('osu_alltoall', 1024, 1048576, 100.0, 300),
        'srun ./omb_rank.sh /osu/osu_alltoall -f -m 1048576'])
    audit = scale_audit.audit_script('x', script, node_memory=64 * 2**30)
    assert any('OSU stops at 524288 B, the plan expects 1048576' in v for v in audit.violations)
    assert any('GiB of buffers per node' in v for v in audit.violations)
    assert any('without the timeout' in v for v in audit.violations)
    assert any('shorter than the launch limit' in v for v in audit.violations)


@needs_osu()
def test_the_M_reproduction_passes_with_the_sizes_osu_did_not_run_reported(tmp_path):
    """Real run (OSU on this host): osu_alltoall at 2 ranks with -M 1 MiB stops at 512 KiB;
    the test passes and says which size was not measured and why."""
    out = run_reframe(tmp_path, '--system', 'local', '-n',
                      'OsuCollective%case=osu_alltoall/default%scale=2', '-p', 'system-openmpi',
                      '-S', 'extra_opts=-M,1048576', '-S', 'iterations=20', '-S', 'warmup=2',
                      '-r', registry=local_registry(tmp_path, osu_openmpi=osu_root('OSU_ROOT')),
                      checks=('osu_collectives.py',))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert ('sizes [1048576] not measured: OSU stops osu_alltoall at 524288 B '
            '(-M 1048576 / 2 ranks, check_mem_limit); -M was given on the command line'
            in out.stdout)


def predicted_lines(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = lines.index(next(x for x in lines if x.startswith('Predicted cost')))
    return [x for x in lines[start:] if x.strip()]


@pytest.mark.parametrize('system', ['local', 'example-epyc'])
def test_a_listing_predicts_what_a_dry_run_of_the_same_selection_predicts(tmp_path, system):
    """``-l`` sets each listed case up in memory (no dry run): its predicted cost is the
    dry run's, line for line, with the model fitted from real perflogs of ``local`` and the
    wall time of an earlier run report; it leaves no perflog, stage directory or report."""
    osu = fake_osu_tree(tmp_path / 'osu')
    registry = write_registry(tmp_path / 'environments.json', [
        {'name': 'spack-openmpi', 'mpi_family': 'openmpi', 'mpi_version': '4.1.4',
         'osu_root': str(osu), 'osu_version': '7.3', 'source': 'system'},
        {'name': 'spack-mpich', 'mpi_family': 'mpich', 'mpi_version': '4.0.2',
         'osu_root': str(osu), 'osu_version': '7.3', 'path': ['/opt/mpich/bin'],
         'source': 'system'}])
    shutil.copytree(REAL_PERFLOGS, tmp_path / 'results' / 'local' / 'default')
    # an earlier run report: osu_alltoall at 2 ranks took 40 x its model, three other programs
    # what the model said, which programs never run borrow (omb_suite.cost.wall)
    (tmp_path / 'results' / 'reports').mkdir()
    (tmp_path / 'results' / 'reports' / 'run-report-1.json').write_text(json.dumps(
        {'session_info': {'cmdline': 'reframe -r'}, 'runs': [{'testcases': [
            {'result': 'pass', 'system': 'local', 'partition': 'default',
             'environ': 'spack-openmpi', 'benchmark': benchmark, 'num_tasks': 2,
             'model_s': 1.0, 'time_run': took}
            for benchmark, took in [('osu_alltoall', 40.0), ('osu_latency', 1.0),
                                    ('osu_bw', 1.0), ('osu_mbw_mr', 1.0)]]}]}))
    listed = run_reframe(tmp_path, '--system', system, '-l', registry=registry)
    assert listed.returncode == 0, listed.stdout[-3000:] + listed.stderr[-3000:]
    assert not (tmp_path / 'rfm' / 'stage').exists()
    assert [p.name for p in (tmp_path / 'results').rglob('*.json')] == ['run-report-1.json']
    assert sorted(p.name for p in (tmp_path / 'results').rglob('*.log')) == \
        sorted(p.name for p in REAL_PERFLOGS.glob('*.log'))
    dry = run_reframe(tmp_path, '--system', system, '--dry-run', registry=registry)
    assert dry.returncode == 0, dry.stdout[-3000:] + dry.stderr[-3000:]
    assert predicted_lines(listed.stdout) == predicted_lines(dry.stdout)
    assert f'  {system}:' in predicted_lines(listed.stdout)[1]
    if system == 'local':      # the earlier run's wall time, not the model alone
        assert 'largest: OsuCollective %case=osu_alltoall/default %scale=2' in listed.stdout


def launch_and_plan(script: str) -> tuple[list[str], str]:
    """The OSU program's options and the omb-plan line of a job script."""
    launch = next(x for x in script.splitlines() if './omb_rank.sh' in x)
    plan = next(x for x in script.splitlines() if x.startswith(scale_audit.PLAN_MARK))
    return launch.split('/osu_', 1)[1].split()[1:], plan


def test_osu_75_at_1024_nodes_gets_no_M_and_its_sweep_stopped_by_the_suite_where_74_differs(
        tmp_path):
    """The exploration's alltoall dry-run on example-epyc-xl (1024 nodes, 512 GiB) for an
    environment with OSU 7.4 and one with OSU 7.5: the job scripts differ only in the plan
    line's release and the launch: where 7.4 relies on -M (OSU's own cap, or one the suite
    raises), 7.5 gets no -M but a -m the suite stopped where the node's memory holds the
    buffers."""
    osu = fake_osu_tree(tmp_path / 'osu')
    scripts = {}
    for version in ('7.4', '7.5'):
        tmp = tmp_path / version
        tmp.mkdir()
        registry = write_registry(tmp_path / f'{version}.json', [
            {'name': 'site-openmpi', 'mpi_family': 'openmpi', 'mpi_version': '4.1.4',
             'osu_root': str(osu), 'osu_version': version, 'source': 'system'}])
        out = run_reframe(tmp, '--system', 'example-epyc-xl', '--dry-run', '-n',
                          'OsuCollectiveSweep%case=osu_alltoall/default',
                          registry=registry, checks=('explore/osu_collectives.py',))
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        # the correctness library's build is per environment (its facts name the release)
        scripts[version] = {k.rsplit('/', 1)[1]: re.sub(r'build-cache/[0-9a-f]+', 'build', v)
                            for k, v in job_scripts(tmp).items()}
    assert scripts['7.4'].keys() == scripts['7.5'].keys() and len(scripts['7.4']) > 20
    lowered = 0
    for name, old in scripts['7.4'].items():
        new = scripts['7.5'][name]
        changed = [(a, b) for a, b in zip(old.splitlines(), new.splitlines(), strict=True)
                   if a != b]
        (old_opts, old_plan), (new_opts, new_plan) = launch_and_plan(old), launch_and_plan(new)
        assert new_plan == old_plan.replace('osu=7.4', 'osu=7.5'), name
        assert len(changed) == (1 if old_opts == new_opts else 2), (name, changed)
        # 7.5's options: 7.4's without -M, and -m the plan's largest size
        expected = [o for i, o in enumerate(old_opts) if '-M' not in (o, old_opts[i - 1])]
        at = expected.index('-m') + 1
        largest = re.search(r'largest=(\d+)', new_plan)[1]
        lowered += expected[at] != largest
        expected[at] = largest
        assert new_opts == expected, (name, old_opts, new_opts)
    assert lowered > 0


def test_the_audit_knows_osu_75_has_no_M_and_no_cap():
    """Synthetic scripts: osu_alltoall at 1024 ranks on 8 nodes, plan for OSU 7.5."""
    def audit(options: str):
        script = '\n'.join([
            '#SBATCH --ntasks=1024', '#SBATCH --nodes=8', '#SBATCH --time=1:0:0',
            scale_audit.plan_line('osu_alltoall', 1024, 1048576, 100.0, 300, '7.5'),
            f'timeout 300s srun ./omb_rank.sh /osu/osu_alltoall -f -m 1048576 {options}'])
        return scale_audit.audit_script('x', script, node_memory=2048 * 2**30).violations
    assert audit('') == []
    assert audit('-M 1073741824') == ['osu_alltoall: -M given to OSU 7.5, which has none '
                                      '(from 7.5)']
