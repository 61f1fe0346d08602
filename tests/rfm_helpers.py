"""Run ReFrame on our configuration in a scratch directory, for tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from omb_suite import benchmarks

REPO = Path(__file__).resolve().parents[1]
REFRAME = str(Path(sys.executable).parent / 'reframe')
SETTINGS = str(REPO / 'reframe' / 'config' / 'settings.py')
CHECKS = str(REPO / 'reframe' / 'checks')


def fake_osu_tree(root: Path) -> Path:
    """An OSU install tree with every catalogued program (scripts that do nothing)."""
    for info in benchmarks.catalogue().values():
        exe = root / 'libexec/osu-micro-benchmarks/mpi' / info.group / info.name
        exe.parent.mkdir(parents=True, exist_ok=True)
        exe.write_text('#!/bin/sh\nexit 0\n')
        exe.chmod(0o755)
    return root


def write_registry(path: Path, entries: list[dict]) -> Path:
    path.write_text(json.dumps({'version': 1, 'environments': entries}))
    return path


def run_reframe(tmp: Path, *args: str, registry: Path | None = None,
                extra_env: dict[str, str] | None = None, checks: tuple[str, ...] = (),
                timeout: int = 600) -> subprocess.CompletedProcess:
    """Run ReFrame on ``checks`` (file names in reframe/checks; default: all of them,
    which takes longer to load: the collective checks alone make ~700 test cases)."""
    env = dict(os.environ)
    env.update({'OMB_RESULTS_DIR': str(tmp / 'results'), 'RFM_TOPOLOGY_DIR': str(tmp / 'topo')})
    env.pop('OSU_ROOT', None)
    if registry:
        env['OMB_ENVIRONMENTS_FILE'] = str(registry)
    env.update(extra_env or {})
    paths = [f'{CHECKS}/{name}' for name in checks] or [CHECKS]
    cmd = [REFRAME, '--nocolor', '-C', SETTINGS, *(x for p in paths for x in ('-c', p)),
           '--prefix', str(tmp / 'rfm'), *args]
    return subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True,
                          timeout=timeout)


def job_scripts(tmp: Path) -> dict[str, str]:
    """Generated job scripts by ``<system>/<partition>/<environ>/<test dir>``."""
    stage = tmp / 'rfm' / 'stage'
    return {str(p.parent.relative_to(stage)): p.read_text() for p in stage.rglob('rfm_job.sh')}


def two_family_registry(tmp: Path) -> Path:
    """Open MPI and MPICH environments over a fake OSU tree (for dry runs)."""
    osu = fake_osu_tree(tmp / 'osu')
    return write_registry(tmp / 'environments.json', [
        {'name': 'test-openmpi', 'mpi_family': 'openmpi', 'mpi_version': '4.1.4',
         'osu_root': str(osu), 'osu_version': '7.4', 'source': 'system'},
        {'name': 'test-mpich', 'mpi_family': 'mpich', 'mpi_version': '4.0.2',
         'osu_root': str(osu), 'path': ['/opt/mpich/bin'], 'source': 'system'},
    ])


def cuda_aware_mpi_bin(tmp: Path) -> Path:
    """A bin/ whose ompi_info says Open MPI was built CUDA-aware (Debian's is not)."""
    cuda_bin = tmp / 'cuda-mpi' / 'bin'
    cuda_bin.mkdir(parents=True)
    (cuda_bin / 'ompi_info').write_text(
        '#!/bin/sh\necho mca:mpi:base:param:mpi_built_with_cuda_support:value:true\n')
    (cuda_bin / 'ompi_info').chmod(0o755)
    return cuda_bin


#: Debian's MPI libraries, when installed (tests running real MPI skip without them).
OPENMPI = shutil.which('mpicc') and shutil.which('ompi_info')
MPICH = shutil.which('mpicc.mpich') and shutil.which('mpirun.mpich')


def mpich_prefix(root: Path) -> Path:
    """A prefix whose bin/ holds MPICH's wrappers under their plain names."""
    bin_dir = root / 'mpich' / 'bin'
    bin_dir.mkdir(parents=True)
    for name in ('mpicc', 'mpicxx', 'mpirun', 'mpiexec'):
        (bin_dir / name).symlink_to(shutil.which(f'{name}.mpich'))
    # hydra starts its proxy from the directory mpiexec was run from
    (bin_dir / 'hydra_pmi_proxy').symlink_to(shutil.which('hydra_pmi_proxy'))
    return bin_dir


def system_registry(tmp: Path, osu_openmpi: str | None = None,
                    osu_mpich: str | None = None) -> Path:
    """A registry of the Debian MPIs installed here, with the given OSU prefixes."""
    entries = []
    if OPENMPI:
        entries.append({'name': 'system-openmpi', 'mpi_family': 'openmpi',
                        'osu_root': osu_openmpi, 'source': 'system'})
    if MPICH:
        entries.append({'name': 'system-mpich', 'mpi_family': 'mpich',
                        'osu_root': osu_mpich, 'path': [str(mpich_prefix(tmp))],
                        'source': 'system'})
    return write_registry(tmp / 'environments.json', entries)


def perflog(tmp: Path, test: str) -> list[dict[str, str]]:
    """The rows of a perflog written by :func:`run_reframe` in ``tmp``."""
    path = tmp / 'results' / 'local' / 'default' / f'{test}.log'
    header, *rows = path.read_text().splitlines()
    cols = header.split('|')
    return [dict(zip(cols, r.split('|'), strict=True)) for r in rows]


def osu_root_from(var: str) -> str | None:
    """An OSU prefix named by environment variable ``var``, if it exists."""
    root = os.environ.get(var)
    return root if root and Path(root).is_dir() else None
