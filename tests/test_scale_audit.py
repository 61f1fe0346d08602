"""The scale audit: the verdict set dry-run on example sites of 1024 nodes (EPYC 2 x 64 cores,
GPU 4 GPUs and 2 x 32 cores), every generated job script checked against OSU's limits and
the cost model (omb_suite.scale_audit): 0 violations, and the predicted cost printed. And
issue 20's reproduction: a size OSU announced it would not run is reported, not failed."""

from __future__ import annotations

import time

import pytest
from rfm_helpers import (
    job_scripts,
    local_registry,
    needs_osu,
    osu_root,
    run_reframe,
    two_family_registry,
)

from omb_suite import scale_audit

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
    check = '\n'.join(['#SBATCH --ntasks=1024', '#SBATCH --ntasks-per-node=128',
                       scale_audit.plan_line('collective_check', 1024, None, 10.0, 60),
                       'timeout 60s srun ./omb_rank.sh /b/collective_check 1048576 osu_bcast'])
    (why,) = scale_audit.audit_script('y', check, node_memory=64 * 2**30).violations
    assert why == 'collective_check 1048576: 256 GiB of buffers per node, the node has 64 GiB'


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


@pytest.mark.parametrize(('argv', 'expected'), [
    (['-c', 'x', '-l'], ['-c', 'x', '--dry-run']),
    (['-L', 'T', '--system', 'a'], ['--system', 'a', '--dry-run']),
    (['--list=C', '-n', 'OsuPt2Pt'], ['-n', 'OsuPt2Pt', '--dry-run']),
    (['-lC'], ['--dry-run']),
    (['-r', '-n', 'T'], None),                 # not a listing: nothing to add
])
def test_a_listing_becomes_the_same_selection_dry_run(argv, expected):
    from omb_suite.rfm.cost import dry_run_args
    assert dry_run_args(argv) == expected


def test_a_listing_prints_the_predicted_cost_and_leaves_no_perflog(tmp_path):
    """``-l`` sets no test up: the prediction comes from a dry run of the same selection in a
    scratch prefix, whose (null) perflogs do not land among the partition's history."""
    out = run_reframe(tmp_path, '--system', 'example-epyc-xl', '-l', '-n', 'OsuPt2Pt',
                      registry=two_family_registry(tmp_path))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert '-l dry-runs the selection' in out.stdout
    line = next(x for x in out.stdout.splitlines() if x.startswith('  example-epyc-xl:'))
    assert 'test(s)' in line and 'node-minutes' in line and 'largest: OsuPt2Pt' in line
    assert not list((tmp_path / 'results').rglob('*.log'))
    assert not (tmp_path / 'rfm' / 'stage').exists()
    quick = run_reframe(tmp_path, '--system', 'example-epyc-xl', '-l', '-n', 'OsuPt2Pt',
                        registry=two_family_registry(tmp_path),
                        extra_env={'OMB_LIST_PREDICTION': '0'})
    assert quick.returncode == 0 and 'Predicted cost' not in quick.stdout
