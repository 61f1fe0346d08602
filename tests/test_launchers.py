"""Every launcher option set of data/placements.yaml, run through the real Open MPI ``mpirun``
and MPICH's Hydra ``mpiexec`` with the per-rank wrapper: a launcher that rejects an option
(Hydra 4.0 has no ``-map-by node``) fails here, not in a user's first run.

On a one-node, one-socket machine the options must be *accepted*; whether they place ranks as
named is the sanity check's job (and skips what the partition cannot offer).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from omb_suite import placements, probe

ROOT_OK = {'OMPI_ALLOW_RUN_AS_ROOT': '1', 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1'}
WRAPPER = os.path.join(probe.source_dir(), probe.WRAPPER)
LAUNCHERS = {'ompi': ('mpirun.openmpi', 'openmpi'), 'hydra': ('mpiexec.hydra', 'mpich')}
CASES = [(dialect, kind, name) for dialect in LAUNCHERS
         for kind, names in (('placement', placements.placement_names()),
                             ('mapping', placements.mapping_names()))
         for name in names]


@pytest.mark.parametrize(('dialect', 'kind', 'name'), CASES)
def test_real_launcher_accepts_every_option_set(dialect, kind, name):
    launcher, family = LAUNCHERS[dialect]
    if not shutil.which(launcher):
        pytest.skip(f'{launcher} not installed')
    where = placements.placement(name) if kind == 'placement' else placements.mapping(name)
    options = placements.launch_options(where, 'mpirun', family, nodes=1)
    ranks = 2
    out = subprocess.run([launcher, '-np', str(ranks), *options, WRAPPER, 'true'],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, **ROOT_OK})
    assert out.returncode == 0, f'{launcher} {" ".join(options)}: {out.stderr[-800:]}'
    assert len(probe.parse_probe(out.stderr, expect_ranks=ranks)) == ranks
