"""The example site configurations (EPYC, GPU, cloud) list and dry-run, and their
reference files are valid ReFrame external references."""

from __future__ import annotations

import pytest
import yaml
from rfm_helpers import job_scripts, run_reframe, two_family_registry
from testdata import REPO

SYSTEMS = ['example-epyc:compute', 'example-epyc:nic_near', 'example-gpu:gpu',
           'example-gpu:cpu', 'example-cloud:c3', 'generic-slurm:cpu', 'minicluster:compute']


@pytest.mark.parametrize('system', SYSTEMS)
def test_point_to_point_dry_run(tmp_path, system):
    out = run_reframe(tmp_path, '--system', system, '--dry-run', '-n', 'OsuPt2Pt',
                      '-E', "benchmark=='osu_latency' and buffers=='H H'",
                      registry=two_family_registry(tmp_path), checks=('osu_pt2pt.py',))
    assert out.returncode == 0, out.stdout + out.stderr
    scripts = job_scripts(tmp_path)
    assert scripts, out.stdout
    assert all('osu_latency -m 4194304' in s for s in scripts.values())
    if system == 'example-cloud:c3':   # one socket per small node: never inter_socket
        assert not any('inter_socket' in k for k in scripts)


def test_epyc_nic_near_partition_pins_inter_node_ranks_next_to_the_hca(tmp_path):
    out = run_reframe(tmp_path, '--system', 'example-epyc:nic_near', '--dry-run', '-n',
                      'OsuPt2Pt', '-E', "benchmark=='osu_latency' and buffers=='H H' and "
                      "placement=='inter_node'", '-p', 'test-openmpi',
                      registry=two_family_registry(tmp_path), checks=('osu_pt2pt.py',))
    assert out.returncode == 0, out.stdout + out.stderr
    (script,) = job_scripts(tmp_path).values()
    assert 'srun --mpi=pmix --distribution=cyclic --cpu-bind=map_cpu:96 ' in script
    assert 'export UCX_NET_DEVICES=mlx5_0:1' in script


@pytest.mark.parametrize('path', sorted((REPO / 'reframe/references').glob('*.yaml')),
                         ids=lambda p: p.name)
def test_reference_files_load_as_reframe_references(path):
    """Each class's entry matches its $index depth and every leaf is a reference tuple."""
    data = yaml.safe_load(path.read_text())
    for cls, entry in data.items():
        depth = len(entry['$index'])
        levels = [{k: v for k, v in entry.items() if k != '$index'}]
        for _ in range(depth):
            levels = [v for level in levels for v in level.values()]
            assert all(isinstance(v, dict) for v in levels), f'{cls}: too shallow'
        for perfvars in levels:
            for var, ref in perfvars.items():
                assert isinstance(ref, list) and len(ref) == 4, f'{cls}.{var}: {ref}'
                assert isinstance(ref[0], (int, float)) and isinstance(ref[3], str)
