"""Programming environments for ReFrame, from the registry that ``omb-setup`` writes.

``omb-setup`` records every MPI + OSU combination it built or found (Spack environment
views, Debian/site MPIs with ``OSU_ROOT``) in ``.omb/environments.json``. This module
turns those entries into ReFrame ``environments`` entries with features that checks
select on: ``+mpi``, ``+<family>`` (``+openmpi``, ``+mpich``, ``+mvapich``...),
``+osu`` when OSU is present, ``+cuda``/``+rocm`` for GPU builds, ``+spack``, ``+modules``
when the environment loads environment modules (``omb-setup --module``): their names go to
the environment's ``modules``, which ReFrame turns into ``module load`` lines of every job
script, after a ``module use`` of the module search path they were registered from.

Without a registry (setup not run yet) one environment, ``default-mpi``, describes the
``mpirun`` on ``PATH`` and ``$OSU_ROOT``, so the suite still works without editing.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from omb_suite.mpi import families, mpilib

REGISTRY_ENV = 'OMB_ENVIRONMENTS_FILE'

#: Loggable facts a check copies from the environment's ``extras``.
FACTS = ('mpi_family', 'mpi_version', 'osu_root', 'osu_version', 'osu_spec', 'mpi_spec',
         'spack_lock', 'spack_env', 'source', 'modules', 'series')
#: ReFrame's ``modules_system`` of the module command a variable reveals (Lmod, Environment
#: Modules 4+), in the order they are tried.
MODULE_COMMANDS = (('LMOD_CMD', 'lmod'), ('MODULES_CMD', 'envmod'))


def repo_root() -> Path:
    """The checkout this package was installed from (editable install) or the CWD."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / 'reframe' / 'config' / 'settings.py').is_file():
            return parent
    return Path.cwd()


def registry_path(repo: Path | None = None) -> Path:
    """``$OMB_ENVIRONMENTS_FILE``, else ``<repo>/.omb/environments.json``."""
    return Path(os.environ.get(REGISTRY_ENV) or
                (repo or repo_root()) / '.omb' / 'environments.json')


def load_registry(path: Path | None = None) -> list[dict[str, Any]]:
    """Entries of the registry, or ``[]`` when ``omb-setup`` has not written one."""
    path = path or registry_path()
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text())
        return list(data['environments'])
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f'{path}: not a valid environment registry ({err}); '
                         f're-create it with: omb-setup') from err


def detected_modules_system(env: dict[str, str] | None = None) -> str:
    """``lmod`` or ``envmod`` when this shell has that module command, else ``nomod``."""
    env = os.environ if env is None else env
    return next((name for var, name in MODULE_COMMANDS if env.get(var)), 'nomod')


def tool_path(entry: dict[str, Any]) -> list[str]:
    """Directories of the environment's tools: its ``PATH`` entries, then those its modules
    added when they were registered (for tools the checks run before the job)."""
    return [*(entry.get('path') or []), *(entry.get('tool_path') or [])]


def has_osu(entry: dict[str, Any]) -> bool:
    """OSU registered for this environment, or ``osu_latency`` on its ``PATH`` (a module)."""
    search = os.pathsep.join([*tool_path(entry), os.environ.get('PATH', '')])
    return bool(entry.get('osu_root')) or shutil.which('osu_latency', path=search) is not None


#: Feature of every environment omb-setup registers: its ``extras`` hold its facts (a site's
#: own environments lack it, and the suite finds theirs: omb_suite.rfm.environ_facts).
REGISTERED_FEATURE = 'omb_setup'


def features(entry: dict[str, Any]) -> list[str]:
    family = entry['mpi_family']
    # a record's extra features: MVAPICH2's environments also select as '+mvapich'
    feats = ['mpi', family, REGISTERED_FEATURE,
             *(families.get(family)['features'] if families.known(family) else [])]
    if has_osu(entry):
        feats.append('osu')
    feats += [gpu for gpu in ('cuda', 'rocm') if entry.get(gpu)]
    if entry.get('source') == 'spack':
        feats.append('spack')
    if entry.get('modules'):
        feats.append('modules')
    return sorted(set(feats))


def module_setup(entry: dict[str, Any]) -> list[str]:
    """Job-script lines before the ``module load``s: define ``module`` where the job's shell
    lacks it, and ``module use`` the search path the modules were registered from."""
    cmds = []
    if entry.get('module_init'):
        cmds.append(f'type module >/dev/null 2>&1 || . {entry["module_init"]}')
    if entry.get('module_use'):
        cmds.append('module use ' + ' '.join(reversed(entry['module_use'])))
    return cmds


def to_reframe(entry: dict[str, Any]) -> dict[str, Any]:
    """One registry entry as a ReFrame environment configuration."""
    env_vars: list[list[str]] = []
    if entry.get('path'):
        env_vars.append(['PATH', os.pathsep.join([*entry['path'], '$PATH'])])
    if entry.get('osu_root'):
        env_vars.append(['OSU_ROOT', entry['osu_root']])
    env_vars += [[k, str(v)] for k, v in sorted((entry.get('env_vars') or {}).items())]
    extras = {k: entry.get(k) for k in FACTS}
    extras['env_path'] = tool_path(entry)
    return {
        'name': entry['name'],
        'target_systems': entry.get('target_systems', ['*']),
        'features': features(entry),
        'cc': 'mpicc', 'cxx': 'mpicxx', 'ftn': 'mpif90',
        'modules': list(entry.get('modules') or []),
        'prepare_cmds': module_setup(entry) if entry.get('modules') else [],
        'env_vars': env_vars,
        'extras': extras,
    }


def detect_path_mpi() -> dict[str, Any] | None:
    """Describe the ``mpirun`` on ``PATH`` (family, version), or ``None`` if absent."""
    mpirun = shutil.which('mpirun')
    if not mpirun:
        return None
    try:
        out = mpilib.run_tool(mpirun, '--version', timeout=20)
    except mpilib.MpiToolError:
        out = ''
    family, version = mpilib.launcher_family(out)
    osu_root = os.environ.get('OSU_ROOT') or None
    return {'name': 'default-mpi', 'mpi_family': family, 'mpi_version': version,
            'osu_root': osu_root, 'source': 'path'}


def reframe_environments() -> list[dict[str, Any]]:
    """All environments for the site configuration (registry, else PATH fallback)."""
    entries = load_registry()
    if not entries:
        fallback = detect_path_mpi()
        entries = [fallback] if fallback else []
    return [to_reframe(e) for e in entries]
