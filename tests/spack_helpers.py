"""A real Spack for the tests marked ``spack``: the ``spack`` on PATH, else the pinned one
omb-setup bootstrapped into this checkout's ``.omb/spack``; tests skip when neither exists.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from testdata import REPO

from omb_suite.setup import spack_bootstrap, spack_envs
from omb_suite.setup.spack_bootstrap import Spack

SKIP_REASON = ('no Spack: put Spack 1.1 on PATH, or run omb-setup once (it bootstraps the '
               'pinned one into .omb/spack)')
#: Where pip installs the venv's programs (spack style looks for flake8, isort, black on PATH).
VENV_BIN = str(Path(sys.executable).parent)


def real_spack() -> Spack | None:
    on_path = shutil.which('spack')
    if on_path:
        return Spack(on_path, {})
    return spack_bootstrap.bootstrapped(REPO)


def run_spack(spack: Spack, *args: str, site_dir: Path | None = None,
              check: bool = True) -> str:
    """Run spack; ``site_dir`` replaces the environments' default site (sites/local)."""
    env = {**os.environ, **spack.env, 'PATH': f'{VENV_BIN}:{os.environ["PATH"]}'}
    env.pop(spack_envs.SITE_DIR_VAR, None)
    if site_dir is not None:
        env[spack_envs.SITE_DIR_VAR] = str(site_dir)
    done = subprocess.run([spack.executable, *args], capture_output=True, text=True, env=env)
    out = done.stdout + done.stderr
    if check:
        assert done.returncode == 0, out
    return out
