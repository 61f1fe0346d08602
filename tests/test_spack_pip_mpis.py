"""The pip MPIs' environments through a real Spack (skipped with the reason without one, or
when ``bash scripts/install-deps.sh --pip-mpi`` has not installed the library here): each
concretizes OSU over the pip library as an external at its prefix, never over the local
site's other MPI of the same package (Debian's Open MPI 4.1.4 is declared there too) and
never as a build of the library. Concretized in a copy of spack/ (about a minute each on the
2-core VM); CI builds and runs them for real (tests/pip-mpis-ci.sh)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from spack_helpers import SKIP_REASON, real_spack, run_spack
from testdata import REPO

from omb_suite.setup import pip_mpis, spack_envs

SPACK = real_spack()
pytestmark = [pytest.mark.spack, pytest.mark.skipif(SPACK is None, reason=SKIP_REASON),
              pytest.mark.xdist_group('spack-builds')]


@pytest.fixture(scope='module')
def checkout(tmp_path_factory) -> Path:
    """A copy of spack/ whose .omb/mpi is this checkout's, with the pip sites written."""
    repo = tmp_path_factory.mktemp('pip-checkout')
    shutil.copytree(REPO / 'spack', repo / 'spack',
                    ignore=shutil.ignore_patterns('.spack-env', 'spack.lock'))
    (repo / '.omb').mkdir()
    (repo / '.omb' / 'mpi').symlink_to(REPO / '.omb' / 'mpi', target_is_directory=True)
    spack_envs.write_pip_sites(repo)
    return repo


@pytest.mark.parametrize('lib', pip_mpis.libraries(), ids=lambda lib: lib.name)
def test_osu_concretizes_over_the_pip_library_as_an_external(checkout, lib):
    if not pip_mpis.is_installed(lib, REPO):
        pytest.skip(f'{lib.name} is not installed here: bash scripts/install-deps.sh --pip-mpi')
    assert SPACK is not None
    out = run_spack(SPACK, '-e', str(checkout / 'spack/environments' / lib.spack_env),
                    'concretize', '--fresh')
    version = pip_mpis.version(lib, REPO)
    mpi = [line for line in out.splitlines() if f'^{lib.spack_package}@' in line]
    assert len(mpi) == 1, out
    assert mpi[0].lstrip().startswith('[e]'), mpi[0]  # the external, not a build
    assert re.search(rf'\^{lib.spack_package}@{re.escape(str(version))}\b', mpi[0]), mpi[0]
    assert re.search(r'osu-micro-benchmarks@7\.\d', out)
