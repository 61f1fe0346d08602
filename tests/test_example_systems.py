"""The example site configurations (EPYC, GPU, cloud, Flux, Summit-like LSF/jsrun, HPE Cray
EX with srun and PALS) list and dry-run, their launch lines per placement and mapping are the
dialect's (skipped with the reason where it cannot express them), and their reference files
are valid ReFrame external references. Flux, jsrun and PALS never ran here: their lines are
checked against their documentation in tests/mpi/test_dialects.py."""

from __future__ import annotations

import ast
import re

import pytest
import yaml
from rfm_helpers import fake_osu_tree, job_scripts, run_reframe, two_family_registry, write_registry
from testdata import REPO

SYSTEMS = ['example-epyc:compute', 'example-epyc:nic_near', 'example-gpu:gpu',
           'example-gpu:cpu', 'example-cloud:c3', 'generic-slurm:cpu', 'minicluster:compute',
           'example-flux:alloc', 'example-summit:batch', 'example-cray-ex:slurm',
           'example-cray-ex:pbs']


@pytest.mark.parametrize('system', SYSTEMS)
def test_point_to_point_dry_run(tmp_path, system):
    out = run_reframe(tmp_path, '--system', system, '--dry-run', '-n', 'OsuPt2Pt',
                      '-E', "benchmark=='osu_latency' and buffers=='H H'",
                      registry=two_family_registry(tmp_path), checks=('osu_pt2pt.py',))
    assert out.returncode == 0, out.stdout + out.stderr
    scripts = job_scripts(tmp_path)
    assert scripts, out.stdout
    # '-m :MAX' where the environment names no OSU release (test-mpich): every release reads it
    assert all(re.search(r'osu_latency -m :?4194304\b', s) for s in scripts.values())
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


#: Per system: its MPI family, then per placement (OsuPt2Pt) and per mapping (the bcast sweep
#: at 4 ranks) the start of its launch line, or the skip reason's start.
LAUNCHES = {
    'example-summit:batch': ('spectrum-mpi', {
        'intra_socket': 'jsrun -n 1 -a 2 -c 2 -r 1 -b packed:1 ./omb_rank.sh',
        'inter_socket': 'jsrun -n 2 -a 1 -c 21 -r 2 -b packed:1 ./omb_rank.sh',
        'inter_node': 'jsrun -n 2 -a 1 -c 1 -r 1 -b packed:1 ./omb_rank.sh',
        'core': 'jsrun -n 4 -a 1 -c 1 -r 4 -b packed:1 ./omb_rank.sh',
        'socket': "SKIP jsrun (IBM Job Step Manager) resource sets cannot express mapping "
                  "'socket': jsrun deals tasks round-robin only over resource sets",
        'node': "SKIP jsrun (IBM Job Step Manager) resource sets cannot express mapping 'node'",
    }),
    'example-cray-ex:pbs': ('cray-mpich', {
        'intra_socket': 'mpiexec -n 2 --ppn 2 --cpu-bind list:0:1 ./omb_rank.sh',
        'inter_socket': 'mpiexec -n 2 --ppn 2 --cpu-bind list:0:64 ./omb_rank.sh',
        'inter_node': 'mpiexec -n 2 --ppn 1 --cpu-bind list:0 ./omb_rank.sh',
        'core': 'mpiexec -n 4 --ppn 4 --cpu-bind list:0:1:2:3 ./omb_rank.sh',
        'socket': 'mpiexec -n 4 --ppn 4 --cpu-bind list:0:64:1:65 ./omb_rank.sh',
        'node': "SKIP HPE Cray PALS mpiexec cannot express mapping 'node'",
    }),
    'example-cray-ex:slurm': ('cray-mpich', {
        'intra_socket': 'srun --mpi=cray_shasta --distribution=block:block --cpu-bind=cores ',
        'inter_socket': 'srun --mpi=cray_shasta --distribution=block:cyclic --cpu-bind=cores ',
        'inter_node': 'srun --mpi=cray_shasta --distribution=cyclic --cpu-bind=cores ',
        'core': 'srun --mpi=cray_shasta --distribution=block:block --cpu-bind=cores ',
        'socket': 'srun --mpi=cray_shasta --distribution=block:cyclic --cpu-bind=cores ',
        'node': 'srun --mpi=cray_shasta --distribution=cyclic:block --cpu-bind=cores ',
    }),
    'example-flux:alloc': ('openmpi', {     # one socket of 4 cores: no inter_socket, socket
        'intra_socket': "flux run -N 1 -n 2 -x -o 'cpu-affinity=map:0;1' ./omb_rank.sh",
        'inter_node': 'flux run -N 2 -n 2 -o cpu-affinity=per-task ./omb_rank.sh',
        'core': "flux run -N 1 -n 4 -x -o 'cpu-affinity=map:0;1;2;3' ./omb_rank.sh",
        'node': "flux run -N 2 -n 4 --taskmap=cyclic -x -o 'cpu-affinity=map:0;1' ./omb_rank.sh",
    }),
}


def dry_run_launches(tmp_path, system: str, family: str) -> dict[str, str]:
    """Placement or mapping name: the launch line of its OSU program, or ``SKIP <reason>``."""
    osu = fake_osu_tree(tmp_path / 'osu')
    registry = write_registry(tmp_path / 'environments.json', [
        {'name': 'site-mpi', 'mpi_family': family, 'mpi_version': '1.0', 'osu_root': str(osu),
         'osu_version': '7.4', 'source': 'system'}])
    runs = [(('osu_pt2pt.py',), '-n', 'OsuPt2Pt', '-E',
             "benchmark=='osu_latency' and buffers=='H H'"),
            (('explore/osu_collectives.py',), '-n', 'OsuCollectiveSweep%case=osu_bcast/default',
             '-E', 'scale==4')]
    found, names = {}, {}
    for checks, *select in runs:
        out = run_reframe(tmp_path, '--system', system, '--dry-run', *select,
                          registry=registry, checks=checks)
        assert out.returncode == 0, out.stdout + out.stderr
        for verdict, name, test_hash, reason in re.findall(
                r'^\[\s*(OK|SKIP)\s*\] .*?%(?:placement|mapping)=(\w+) .*?/([0-9a-f]{8}) @'
                r'\S+(?: \[(.*)\])?$', out.stdout, re.M):
            names[test_hash] = name
            if verdict == 'SKIP':
                found[name] = f'SKIP {reason}'
    for where, script in job_scripts(tmp_path).items():
        launch = [x.strip() for x in script.splitlines() if './omb_rank.sh' in x]
        found[names[where[-8:]]] = launch[0]
    return found


@pytest.mark.parametrize('system', sorted(LAUNCHES))
def test_launch_lines_per_placement_and_mapping_are_the_dialects(tmp_path, system):
    family, expected = LAUNCHES[system]
    found = dry_run_launches(tmp_path, system, family)
    assert set(found) == set(expected), found
    for name, start in expected.items():
        assert found[name].startswith(start), (name, found[name])


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
