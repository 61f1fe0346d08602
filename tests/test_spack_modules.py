"""``omb-setup --spack-modules``: a built environment registered through the Lmod modules Spack
writes for it, loaded by a real Lmod. The ``spack`` here is a stand-in that writes what Spack
1.1 wrote for our openmpi environment on this machine (hierarchy by MPI; the module of
Debian's Open MPI, a /usr external, adds nothing to PATH) and logs its arguments; the
environment's spack.lock is a real one (tests/data/spack/locks)."""

from __future__ import annotations

import os
import shutil

import pytest
from modules_helpers import LMOD_HOME, needs_debian, needs_lmod, stand_in_osu
from setup_helpers import copy_checkout, script
from testdata import DATA

from omb_suite.setup import spack_modules

pytestmark = [needs_lmod, needs_debian('openmpi')]

MPI_LUA = '''family("mpi")
prepend_path("MODULEPATH", "{root}/openmpi/4.1.4-d2lqwco/Core")
setenv("LMOD_MPI_NAME", "openmpi")
setenv("LMOD_MPI_VERSION", "4.1.4-d2lqwco")
setenv("MPICC", "/usr/bin/mpicc")
'''
OSU_LUA = '''setenv("OSU_ROOT", "{osu}")
prepend_path("PATH", "{osu}/libexec/osu-micro-benchmarks/mpi/pt2pt", ":")
'''
SPACK = r'''#!/bin/bash
echo "$*" >> "$LOG"
env_dir=; prev=
for a in "$@"; do [ "$prev" = -e ] && env_dir=$a; prev=$a; done
root=$env_dir/.spack-env/lmod
case " $* " in
  *" refresh "*) branch=$root/openmpi/4.1.4-d2lqwco/Core/osu-micro-benchmarks
     mkdir -p "$root/Core/openmpi" "$branch"
     cp "$MPI_LUA" "$root/Core/openmpi/4.1.4.lua"
     cp "$OSU_LUA" "$branch/7.4.lua" ;;
  *" find --full-path openmpi "*) echo "$root/Core/openmpi/4.1.4.lua" ;;
  *" find --full-path osu-micro-benchmarks "*)
     echo "$root/openmpi/4.1.4-d2lqwco/Core/osu-micro-benchmarks/7.4.lua" ;;
  *) echo "stand-in spack: unexpected $*" >&2; exit 2 ;;
esac
'''


@pytest.fixture
def built(tmp_path, monkeypatch):
    """A checkout whose openmpi environment is built (real lock), a site with its own module
    scope, and the stand-in spack."""
    repo = copy_checkout(tmp_path / 'repo')
    env_dir = repo / 'spack' / 'environments' / 'openmpi'
    shutil.copy(DATA / 'spack' / 'locks' / 'openmpi.spack.lock', env_dir / 'spack.lock')
    root = env_dir / '.spack-env' / 'lmod'
    osu = stand_in_osu(tmp_path / 'osu', 'openmpi', '7.4')
    (tmp_path / 'mpi.lua').write_text(MPI_LUA.format(root=root))
    (tmp_path / 'osu.lua').write_text(OSU_LUA.format(osu=osu))
    site = repo / 'spack' / 'environments' / 'sites' / 'mysite'
    (site / 'modules').mkdir(parents=True)
    spack = script(tmp_path / 'bin' / 'spack', SPACK)
    for var, value in (('LOG', tmp_path / 'spack.log'), ('MPI_LUA', tmp_path / 'mpi.lua'),
                       ('OSU_LUA', tmp_path / 'osu.lua'), ('MODULESHOME', LMOD_HOME),
                       ('MODULEPATH', '')):
        monkeypatch.setenv(var, str(value))
    return repo, env_dir, site, spack, osu


def test_environment_registered_through_the_modules_spack_wrote(built, tmp_path):
    repo, env_dir, site, spack, osu = built
    entry = spack_modules.registry_entry([str(spack)], dict(os.environ), repo,
                                         env_dir, site)
    assert entry['name'] == 'spack-openmpi' and entry['source'] == 'spack'
    assert entry['modules'] == ['openmpi/4.1.4', 'osu-micro-benchmarks/7.4']
    assert entry['module_use'][0] == str(env_dir / '.spack-env' / 'lmod' / 'Core')
    assert entry['path'] == []
    # facts after loading: the family from the library OSU links (the /usr module adds no
    # PATH), OSU's prefix and release from the program; Spack's facts from the lock
    assert (entry['mpi_family'], entry['mpi_version']) == ('openmpi', '4.1.4')
    assert (entry['osu_root'], entry['osu_version']) == (str(osu), '7.4')
    assert entry['osu_spec'].startswith('osu-micro-benchmarks@7.4')
    calls = (tmp_path / 'spack.log').read_text().splitlines()
    scopes = f'-C {repo}/spack/module-config -C {site}/modules -e {env_dir} module lmod'
    assert calls == [f'{scopes} refresh -y', f'{scopes} find --full-path openmpi',
                     f'{scopes} find --full-path osu-micro-benchmarks']


def test_spack_finding_no_module_says_so(built):
    repo, env_dir, site, spack, _ = built
    script(spack, SPACK.replace('echo "$root/Core/openmpi/4.1.4.lua"', 'true'))
    with pytest.raises(spack_modules.SpackSetupError,
                       match=r'Spack found 0 Lmod module\(s\) of openmpi, expected one'):
        spack_modules.registry_entry([str(spack)], dict(os.environ), repo, env_dir, site)
