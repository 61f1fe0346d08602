"""``scripts/install-deps.sh`` where it may not install (not root, or OMB_NO_SYSTEM_INSTALL):
it installs nothing system-wide, names what is missing with its apt, dnf and zypper packages,
and goes on. Run in a copy of the scripts with a PATH that holds only a shell's basics (so the
MPI, compilers and git are missing) and this checkout's venv (so pip has nothing to do)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from testdata import REPO

BASICS = ('bash', 'id', 'sed', 'grep', 'cat', 'python3', 'dirname', 'touch', 'rm')


def sandbox(tmp: Path) -> tuple[Path, dict[str, str]]:
    (tmp / 'scripts').mkdir()
    for name in ('install-deps.sh', 'system-packages.txt'):
        shutil.copy(REPO / 'scripts' / name, tmp / 'scripts' / name)
    shutil.copy(REPO / 'pyproject.toml', tmp / 'pyproject.toml')
    venv = tmp / '.venv'                  # this checkout's venv, with an install stamp of its own
    venv.mkdir()
    for name in ('bin', 'lib', 'pyvenv.cfg'):
        (venv / name).symlink_to(REPO / '.venv' / name)
    (venv / '.omb-installed').touch()
    os.utime(tmp / 'pyproject.toml', (0, 0))          # older than the stamp: no pip
    bindir = tmp / 'bin'
    bindir.mkdir()
    for name in BASICS:
        (bindir / name).symlink_to(shutil.which(name))
    return tmp, {'PATH': str(bindir), 'HOME': str(tmp), 'OMB_NO_SYSTEM_INSTALL': '1'}


def test_missing_needs_are_named_for_apt_dnf_and_zypper_and_nothing_is_installed(tmp_path):
    root, env = sandbox(tmp_path)
    done = subprocess.run(['bash', 'scripts/install-deps.sh', '--modules'], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stderr
    reason = 'not root' if os.getuid() else 'OMB_NO_SYSTEM_INSTALL is set'
    assert f'NOTE: installing nothing system-wide ({reason}). Not found here:' in said
    assert '  - an MPI library (compiler wrapper, launcher)' in said
    assert 'Debian/Ubuntu: apt-get install openmpi-bin libopenmpi-dev mpich libmpich-dev' in said
    assert 'RHEL-like:     dnf install openmpi-devel mpich-devel' in said
    assert 'SUSE:          zypper install openmpi4-devel mpich-devel' in said
    assert 'Going on with what is there.' in said
    assert '== apt-get' not in done.stdout + said


def test_every_need_names_a_package_for_each_manager():
    rows = [line.split('|') for line in
            (REPO / 'scripts/system-packages.txt').read_text().splitlines()
            if line.strip() and not line.startswith('#')]
    assert rows and all(len(r) == 6 and all(c.strip() for c in r) for r in rows), rows
    assert {r[0].strip() for r in rows} == {'base', 'cluster', 'browser', 'modules', 'flux'}
