"""Run ReFrame on our configuration in a scratch directory, and what every ReFrame test of
ours shares: the Debian MPIs found here, OSU builds named by the environment, registries,
perflog rows, generated job scripts."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from omb_suite.mpi import mpilib
from omb_suite.osu import catalogue

REPO = Path(__file__).resolve().parents[1]
REFRAME = str(Path(sys.executable).parent / 'reframe')
SETTINGS = str(REPO / 'reframe' / 'config' / 'settings.py')
CHECKS = str(REPO / 'reframe' / 'checks')

#: Debian's Open MPI and MPICH, when installed.
OPENMPI = bool(shutil.which('mpicc') and shutil.which('ompi_info'))
MPICH = bool(shutil.which('mpicc.mpich') and shutil.which('mpirun.mpich'))


def osu_root(var: str) -> str | None:
    """An OSU install named by ``$OSU_ROOT`` (Open MPI) or ``$OSU_ROOT_MPICH``, if it exists."""
    root = os.environ.get(var)
    return root if root and Path(root).is_dir() else None


def needs_osu(var: str = 'OSU_ROOT', family: str = 'openmpi'):
    """Skip unless the Debian MPI of ``family`` and an OSU built with it are here; the test
    runs OSU, so it is marked ``launches`` (run one at a time: scripts/run-tests.sh)."""
    mpi = OPENMPI if family == 'openmpi' else MPICH
    skip = pytest.mark.skipif(
        not (mpi and osu_root(var)),
        reason=f'needs Debian {family} and {var}=<OSU 7.x prefix built with it> '
               '(docs/getting-started.md); skipped: OSU end-to-end runs')
    return lambda test: pytest.mark.launches(skip(test))


def fake_osu_tree(root: Path) -> Path:
    """An OSU install tree with every catalogued program (scripts that do nothing)."""
    for info in catalogue.catalogue().values():
        exe = root / 'libexec/osu-micro-benchmarks/mpi' / info.group / info.name
        exe.parent.mkdir(parents=True, exist_ok=True)
        exe.write_text('#!/bin/sh\nexit 0\n')
        exe.chmod(0o755)
    return root


def write_registry(path: Path, entries: list[dict]) -> Path:
    path.write_text(json.dumps({'version': 1, 'environments': entries}))
    return path


def mpich_prefix(root: Path) -> Path:
    """A prefix whose bin/ holds Debian MPICH's wrappers under their plain names."""
    bin_dir = root / 'mpich' / 'bin'
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in ('mpicc', 'mpicxx', 'mpirun', 'mpiexec'):
        if not (bin_dir / name).exists():
            (bin_dir / name).symlink_to(shutil.which(f'{name}.mpich'))
    # hydra starts its proxy from the directory mpiexec was run from
    for name in ('hydra_pmi_proxy', 'mpichversion', 'mpivars'):
        if shutil.which(name) and not (bin_dir / name).exists():
            (bin_dir / name).symlink_to(shutil.which(name))
    return bin_dir


def local_registry(tmp: Path, osu_openmpi: str | None = None,
                   osu_mpich: str | None = None) -> Path:
    """The Debian MPIs installed here, with the given OSU builds (None: no OSU), and their
    versions as omb-setup registers them."""
    entries = []
    if OPENMPI:
        entries.append({'name': 'system-openmpi', 'mpi_family': 'openmpi',
                        'mpi_version': mpilib.library_version('openmpi'),
                        'osu_root': osu_openmpi, 'source': 'system'})
    if MPICH:
        bin_dir = str(mpich_prefix(tmp))
        entries.append({'name': 'system-mpich', 'mpi_family': 'mpich',
                        'mpi_version': mpilib.library_version('mpich', bin_dir),
                        'osu_root': osu_mpich, 'path': [bin_dir], 'source': 'system'})
    return write_registry(tmp / 'environments.json', entries)


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


def run_reframe(tmp: Path, *args: str, registry: Path | None = None,
                extra_env: dict[str, str] | None = None, checks: tuple[str, ...] = (),
                timeout: int = 600, inside: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Run ReFrame on ``checks`` (paths under reframe/checks; default: the verdict set),
    as the argument of ``inside`` when given (``tests/flux/instance --``: in a Flux instance)."""
    env = dict(os.environ)
    env.update({'OMB_RESULTS_DIR': str(tmp / 'results'), 'RFM_TOPOLOGY_DIR': str(tmp / 'topo')})
    env.pop('OSU_ROOT', None)
    if registry:
        env['OMB_ENVIRONMENTS_FILE'] = str(registry)
    env.update(extra_env or {})
    paths = [f'{CHECKS}/{name}' for name in checks] or [CHECKS]
    checks_args = [x for p in paths for x in ('-c', p)]
    cmd = [*inside, REFRAME, '--nocolor', '-C', SETTINGS, *checks_args,
           '--prefix', str(tmp / 'rfm'), *args]
    return subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True,
                          timeout=timeout)


def job_scripts(tmp: Path) -> dict[str, str]:
    """Generated job scripts by ``<system>/<partition>/<environ>/<test dir>``."""
    stage = tmp / 'rfm' / 'stage'
    return {str(p.parent.relative_to(stage)): p.read_text() for p in stage.rglob('rfm_job.sh')}


def perflog(tmp: Path, test: str, system: str = 'local/default') -> list[dict[str, str]]:
    """The rows of a test's perflog (written under ``tmp/results`` by :func:`run_reframe`)."""
    header, *rows = (tmp / 'results' / system / f'{test}.log').read_text().splitlines()
    cols = header.split('|')
    return [dict(zip(cols, r.split('|'), strict=True)) for r in rows]


def without_limit(line: str) -> str:
    """A launch line without the ``timeout ... <limit>s`` that runs it under its time limit."""
    return re.sub(r'^timeout (--\S+ )*\d+s ', '', line)


def launches(script: str, launcher: str) -> list[str]:
    """The lines of a job script that run ``launcher`` (under their time limit or not)."""
    return [without_limit(x) for x in script.splitlines()
            if without_limit(x).startswith(launcher)]


def launch_line(script: str, program: str) -> str:
    """The line of a job script that launches ``program`` through the rank wrapper (without
    the ``timeout`` of its time limit)."""
    return next(without_limit(line) for line in script.splitlines()
                if 'omb_rank.sh' in line and f'/{program} ' in line + ' ')
