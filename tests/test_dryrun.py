"""`reframe --list` and `--dry-run` of every check, asserting the generated job scripts."""

from __future__ import annotations

import pytest
from rfm_helpers import job_scripts, run_reframe, two_family_registry, write_registry

PT2PT = ('osu_pt2pt.py',)


@pytest.fixture
def registry(tmp_path):
    return two_family_registry(tmp_path)


def test_list_shows_every_check(tmp_path, registry):
    out = run_reframe(tmp_path, '--system', 'local', '-l', registry=registry)
    assert out.returncode == 0, out.stdout + out.stderr
    for name in ('OsuPt2Pt %benchmark=osu_latency %placement=intra_socket',
                 'OsuPt2Pt %benchmark=osu_bw_persistent %placement=inter_node',
                 'PlacementProbe %placement=inter_socket'):
        assert name in out.stdout


def test_dry_run_local_intra_socket(tmp_path, registry):
    out = run_reframe(tmp_path, '--system', 'local', '--dry-run', '-n',
                      'OsuPt2Pt%benchmark=osu_latency%placement=intra_socket',
                      '-S', 'iterations=100', '-S', 'warmup=10', registry=registry,
                      checks=PT2PT)
    assert out.returncode == 0, out.stdout + out.stderr
    scripts = job_scripts(tmp_path)
    ompi = next(s for k, s in scripts.items() if k.startswith('local/default/test-openmpi/'))
    launch = 'mpirun -np 2 --map-by core --bind-to core'
    assert f'{launch} ' in ompi and 'placement_probe > placement.out 2>&1' in ompi
    bench = next(line for line in ompi.splitlines() if 'osu_latency' in line)
    assert bench.startswith(launch) and bench.endswith('osu_latency -m 4194304 -x 10 -i 100')
    # the MPICH environment speaks Hydra and puts its own mpirun first on PATH
    mpich = next(s for k, s in scripts.items() if k.startswith('local/default/test-mpich/'))
    assert 'export PATH=/opt/mpich/bin:$PATH' in mpich
    assert 'mpirun -np 2 -bind-to core ' in mpich


def test_dry_run_skips_placements_local_cannot_offer(tmp_path, registry):
    out = run_reframe(tmp_path, '--system', 'local', '--dry-run', '-n',
                      'OsuPt2Pt%benchmark=osu_bw%placement=inter_node', registry=registry,
                      checks=PT2PT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "placement 'inter_node' needs 2 nodes but the partition has 1" in out.stdout


def test_dry_run_slurm_template_srun(tmp_path, registry):
    out = run_reframe(tmp_path, '--system', 'generic-slurm:cpu', '--dry-run', '-n',
                      'OsuPt2Pt%benchmark=osu_bibw', '-S', 'max_size=65536',
                      registry=registry, checks=PT2PT)
    assert out.returncode == 0, out.stdout + out.stderr
    scripts = job_scripts(tmp_path)
    by_placement = {}
    for script in scripts.values():
        if '/pt2pt/osu_bibw ' in script:
            line = next(x for x in script.splitlines() if x.endswith('osu_bibw -m 65536'))
            by_placement[line] = script
    lines = set(by_placement)
    assert any(x.startswith('srun --mpi=pmix --distribution=block:block --cpu-bind=cores ')
               for x in lines), lines
    assert any(x.startswith('srun --mpi=pmix --distribution=block:cyclic --cpu-bind=cores ')
               for x in lines), lines
    assert any(x.startswith('srun --mpi=pmi2 --distribution=cyclic --cpu-bind=cores ')
               for x in lines), lines
    inter_node = next(s for x, s in by_placement.items() if '--distribution=cyclic ' in x)
    assert '#SBATCH --ntasks=2' in inter_node and '#SBATCH --ntasks-per-node=1' in inter_node
    assert '#SBATCH --partition=cpu' in inter_node


def test_without_osu_only_the_probe_runs(tmp_path):
    registry = write_registry(tmp_path / 'environments.json', [
        {'name': 'bare-openmpi', 'mpi_family': 'openmpi', 'osu_root': None,
         'source': 'system'}])
    out = run_reframe(tmp_path, '--system', 'local', '-l', registry=registry,
                      extra_env={'PATH': '/usr/bin:/bin'},
                      checks=('osu_pt2pt.py', 'placement_probe.py'))
    assert out.returncode == 0, out.stdout + out.stderr
    assert '- PlacementProbe %placement=intra_socket' in out.stdout
    assert '- OsuPt2Pt' not in out.stdout


def test_program_missing_from_an_osu_install_skips_with_instructions(tmp_path):
    old_osu = tmp_path / 'osu-5.9'        # an install without the OSU 7 programs
    (old_osu / 'libexec/osu-micro-benchmarks/mpi/pt2pt').mkdir(parents=True)
    registry = write_registry(tmp_path / 'environments.json', [
        {'name': 'old-openmpi', 'mpi_family': 'openmpi', 'osu_root': str(old_osu),
         'source': 'system'}])
    out = run_reframe(tmp_path, '--system', 'local', '--dry-run', '-n', 'OsuPt2Pt', '-E',
                      "benchmark=='osu_bw_persistent' and placement=='intra_socket'",
                      registry=registry, extra_env={'PATH': '/usr/bin:/bin'},
                      checks=PT2PT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'osu_bw_persistent: not found' in out.stdout and 'omb-setup' in out.stdout
    assert 'exists since OSU 7.0' in out.stdout
