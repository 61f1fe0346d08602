"""`reframe --list` and `--dry-run` of the verdict set and the exploration, asserting what is
generated and the job scripts: one launch per test, through the per-rank wrapper."""

from __future__ import annotations

import re

import pytest
from rfm_helpers import (
    job_scripts,
    launch_line,
    run_reframe,
    two_family_registry,
    write_registry,
)
from rfm_helpers import (
    launches as launcher_lines,
)

from omb_suite.osu import catalogue

PT2PT = ('osu_pt2pt.py',)


@pytest.fixture
def registry(tmp_path):
    return two_family_registry(tmp_path)


def _listed(stdout: str) -> list[str]:
    return re.findall(r'^- (\S+ .*?) /[0-9a-f]{8}$', stdout, re.M)


def test_default_run_is_the_verdict_set(tmp_path, registry):
    out = run_reframe(tmp_path, '--system', 'local', '-l', registry=registry)
    assert out.returncode == 0, out.stdout + out.stderr
    names = _listed(out.stdout)
    # a 1-node, 1-socket, 2-core machine: one case per verdict program (intra-socket
    # placements only, host buffers, scale 2, one node)
    assert len(names) == sum(map(len, catalogue.verdict_set().values())), names
    # the collectives' results are checked in their own launches: no test of its own
    assert 'Correctness' not in out.stdout
    assert 'OsuPt2Pt %benchmark=osu_latency %placement=intra_socket %buffers=H H' in names
    assert 'OsuCollective %case=osu_alltoall/default %scale=2 %mapping=core' in names
    assert 'OsuNonBlockingCollective %case=osu_iallreduce/default %scale=2 %mapping=core' \
        in names
    assert 'OsuMbwMr %placement=intra_socket %window_size=64' in names
    assert 'OsuStartup %benchmark=osu_init %nodes=1' in names
    assert not any('inter_node' in n or 'PlacementProbe' in n for n in names)


def test_explore_mode_has_a_check_for_every_catalogue_program(tmp_path, registry):
    out = run_reframe(tmp_path, '--system', 'local', '--mode', 'explore', '-l',
                      registry=registry)
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    listed = {name for name in catalogue.catalogue()
              if re.search(rf'(=|%case=){name}[/ ]', text)}
    by_class = {'osu_mbw_mr': 'OsuMbwMr', 'osu_multi_lat': 'OsuMultiLat',
                'osu_latency_mp': 'OsuLatencyMp'}
    listed |= {name for name, cls in by_class.items() if f'- {cls} ' in text}
    assert listed == set(catalogue.catalogue())


def test_verdict_run_loads_only_the_verdict_checks(tmp_path, registry):
    out = run_reframe(tmp_path, '--system', 'generic-slurm', '-l', '-v', registry=registry)
    assert out.returncode == 0, out.stdout + out.stderr
    generated = int(re.search(r'Generated (\d+) test case', out.stdout).group(1))
    # 64 nodes x 2 sockets x 64 cores, 2 partitions, 2 environments: still tens, not thousands
    assert generated < 200, generated
    assert 'OsuCollectiveSweep' not in out.stdout and 'OsuOneSided' not in out.stdout


def test_dry_run_one_launch_through_the_wrapper(tmp_path, registry):
    out = run_reframe(tmp_path, '--system', 'local', '--dry-run', '-n',
                      'OsuPt2Pt%benchmark=osu_latency%placement=intra_socket',
                      '-S', 'iterations=100', '-S', 'warmup=10', registry=registry,
                      checks=PT2PT)
    assert out.returncode == 0, out.stdout + out.stderr
    scripts = job_scripts(tmp_path)
    ompi = next(s for k, s in scripts.items() if k.startswith('local/default/test-openmpi/'))
    launches = launcher_lines(ompi, 'mpirun')
    assert launches == [launch_line(ompi, 'osu_latency')]
    assert launches[0].startswith('mpirun -np 2 --map-by core --bind-to core ./omb_rank.sh /')
    assert launches[0].endswith('/osu_latency -m 4194304 -x 10 -i 100')
    # the MPICH environment speaks Hydra and puts its own mpirun first on PATH
    mpich = next(s for k, s in scripts.items() if k.startswith('local/default/test-mpich/'))
    assert 'export PATH=/opt/mpich/bin:$PATH' in mpich
    assert 'mpirun -np 2 -bind-to core ./omb_rank.sh ' in mpich


def test_dry_run_slurm_template_srun(tmp_path, registry):
    out = run_reframe(tmp_path, '--system', 'generic-slurm:cpu', '--dry-run', '-n',
                      'OsuPt2Pt%benchmark=osu_bibw', '-S', 'max_size=65536',
                      registry=registry, checks=PT2PT)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = {launch_line(s, 'osu_bibw'): s for s in job_scripts(tmp_path).values()}
    starts = {line.split(' ./omb_rank.sh')[0] for line in lines}
    assert starts == {'srun --mpi=pmix --distribution=block:block --cpu-bind=cores',
                      'srun --mpi=pmix --distribution=block:cyclic --cpu-bind=cores',
                      'srun --mpi=pmix --distribution=cyclic --cpu-bind=cores',
                      'srun --mpi=pmi2 --distribution=block:block --cpu-bind=cores',
                      'srun --mpi=pmi2 --distribution=block:cyclic --cpu-bind=cores',
                      'srun --mpi=pmi2 --distribution=cyclic --cpu-bind=cores'}
    inter_node = next(s for x, s in lines.items() if '--distribution=cyclic ' in x)
    assert '#SBATCH --ntasks=2' in inter_node and '#SBATCH --ntasks-per-node=1' in inter_node
    assert '#SBATCH --partition=cpu' in inter_node


def test_without_osu_only_the_probe_runs(tmp_path):
    registry = write_registry(tmp_path / 'environments.json', [
        {'name': 'bare-openmpi', 'mpi_family': 'openmpi', 'osu_root': None,
         'source': 'system'}])
    out = run_reframe(tmp_path, '--system', 'local', '-l', registry=registry,
                      extra_env={'PATH': '/usr/bin:/bin'})
    assert out.returncode == 0, out.stdout + out.stderr
    assert '- PlacementProbe %placement=intra_socket' in out.stdout
    assert '- Osu' not in out.stdout


def test_with_osu_the_probe_is_in_every_launch_not_a_check(tmp_path, registry):
    out = run_reframe(tmp_path, '--system', 'local', '-l', registry=registry)
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'PlacementProbe' not in out.stdout


def test_program_missing_from_an_osu_install_skips_with_instructions(tmp_path):
    old_osu = tmp_path / 'osu-7.0'        # an install without the MPI-4 collectives
    (old_osu / 'libexec/osu-micro-benchmarks/mpi/pt2pt').mkdir(parents=True)
    registry = write_registry(tmp_path / 'environments.json', [
        {'name': 'old-openmpi', 'mpi_family': 'openmpi', 'mpi_version': '4.1.4',
         'osu_root': str(old_osu), 'source': 'system'}])
    out = run_reframe(tmp_path, '--system', 'local', '--dry-run', '-n',
                      'OsuCollectiveSweep%case=osu_allreduce_persistent/default%scale=2',
                      registry=registry, extra_env={'PATH': '/usr/bin:/bin'},
                      checks=('explore/osu_collectives.py',))
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'osu_allreduce_persistent: not found' in out.stdout and 'omb-setup' in out.stdout
    assert ('exists since OSU 7.3, and OSU builds it only against an MPI with mpi-4 '
            'persistent collectives') in out.stdout
