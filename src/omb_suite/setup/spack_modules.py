"""Register a built Spack environment through its Lmod modules instead of its view
(``omb-setup --spack-modules``).

Spack writes the modules of what the environment built with our module configuration
(``spack/module-config/modules.yaml``: hierarchical by MPI, ``name/version``; a site's
``sites/<site>/modules/modules.yaml``, given after it, overrides it: e.g. the root a site
publishes on its ``MODULEPATH``), then the MPI's
and OSU's modules are loaded and read like ``--module`` (:mod:`omb_suite.setup.module_envs`); the
Spack facts (specs, ``spack.lock``) come from the environment as for a view.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from omb_suite.setup import module_envs, spack_envs
from omb_suite.setup.spack_envs import SpackSetupError

CONFIG = Path('spack') / 'module-config'
#: Keys of a module entry that replace those of the view's entry.
FROM_MODULES = ('mpi_version', 'osu_root', 'osu_version', 'path', 'tool_path', 'modules',
                'module_use', 'module_init')


def spack_output(argv: list[str], env: dict[str, str]) -> str:
    """stdout of a Spack command; a failure says the command and Spack's words."""
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as err:
        raise SpackSetupError(f'{" ".join(argv)}: {err}') from err
    if done.returncode != 0:
        raise SpackSetupError(f'{" ".join(argv)} failed:\n{done.stderr.strip()[-2000:]}')
    return done.stdout


def module_file(text: str, package: str) -> Path:
    """The one module file ``spack module lmod find --full-path`` printed for ``package``."""
    files = [Path(line.strip()) for line in text.splitlines() if line.strip().endswith('.lua')]
    if len(files) != 1:
        raise SpackSetupError(f'Spack found {len(files)} Lmod module(s) of {package}, expected '
                              f'one: {text.strip() or "none"}')
    return files[0]


def use_name(path: Path) -> str:
    """``<dir>/osu-micro-benchmarks/7.3.lua`` -> ``osu-micro-benchmarks/7.3``."""
    return f'{path.parent.name}/{path.stem}'


def scopes(repo: Path, site_dir: Path) -> list[str]:
    """``-C`` options: our module configuration, then the site's (which wins)."""
    dirs = [repo / CONFIG, *([site_dir / 'modules'] if (site_dir / 'modules').is_dir() else [])]
    return [arg for d in dirs for arg in ('-C', str(d))]


def write_modules(argv: list[str], env: dict[str, str], scope_args: list[str], env_dir: Path,
                  mpi_name: str) -> tuple[Path, list[str]]:
    """Refresh the environment's Lmod modules; (the directory to ``module use``, [the MPI's
    module, OSU's module])."""
    base = [*argv, *scope_args, '-e', str(env_dir), 'module', 'lmod']
    spack_output([*base, 'refresh', '-y'], env)  # no --delete-tree: a root may be shared
    mpi = module_file(spack_output([*base, 'find', '--full-path', mpi_name], env), mpi_name)
    osu = module_file(spack_output([*base, 'find', '--full-path', 'osu-micro-benchmarks'], env),
                      'osu-micro-benchmarks')
    return mpi.parent.parent, [use_name(mpi), use_name(osu)]


def registry_entry(argv: list[str], env: dict[str, str], repo: Path, env_dir: Path,
                   site_dir: Path) -> dict[str, Any]:
    """The environment's entry (Spack facts) loading its modules instead of using its view."""
    view = spack_envs.registry_entry(repo, env_dir)
    mpi_name = view['mpi_spec'].split('@')[0]
    use, modules = write_modules(argv, env, scopes(repo, site_dir), env_dir, mpi_name)
    try:
        loaded = module_envs.registry_entry(view['mpi_family'], modules, use=[str(use)])
    except module_envs.ModuleError as err:
        raise SpackSetupError(f'{env_dir.name}: the modules Spack wrote in {use}: {err}') from err
    return {**view, **{k: loaded[k] for k in FROM_MODULES}}
