"""The example site configurations (EPYC, GPU, cloud) list and dry-run, and their
reference files are valid ReFrame external references."""

from __future__ import annotations

import ast

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


REFERENCES = sorted((REPO / 'reframe/references').glob('*.yaml'))
CHECK_CLASSES = {node.name for path in (REPO / 'reframe/checks').rglob('*.py')
                 for node in ast.parse(path.read_text()).body if isinstance(node, ast.ClassDef)}


@pytest.mark.parametrize('path', REFERENCES, ids=lambda p: p.name)
def test_references_are_for_check_classes_and_algorithms_they_run(path):
    """A reference under a class that never runs its case is never used: the verdict set's
    collectives run only the default algorithm, the forced ones are the sweeps'."""
    data = yaml.safe_load(path.read_text())
    assert set(data) <= CHECK_CLASSES, set(data) - CHECK_CLASSES
    for cls in {'OsuCollective', 'OsuNonBlockingCollective'} & set(data):
        levels = [{k: v for k, v in data[cls].items() if k != '$index'}]
        for _ in range(data[cls]['$index'].index('algorithm')):
            levels = [v for level in levels for v in level.values()]
        assert {name for level in levels for name in level} == {'default'}, (cls, levels)
