"""MPI and OSU from environment modules (Lmod, Environment Modules): ``omb-setup --module
FAMILY=MODULE[,MODULE...]`` registers an environment whose ReFrame ``modules`` load them.

The modules are loaded in a ``bash`` (after ``module purge``) that then runs
:mod:`omb_suite.setup.module_facts`, so the MPI's family and version and the OSU prefix and
release are read from what the modules put on ``PATH``, as a job will see them. The registry
entry keeps the module names, the module search path they were found on (``module use`` in
every job script, so a run started from a shell that never did ``module use`` still finds
them) and the directories they added to ``PATH`` (for the tools the checks run on the login
node: ``ompi_info``, ``mpichversion``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from omb_suite.mpi import families
from omb_suite.setup import environs, module_facts

#: Shell start-up files that define ``module`` when the calling shell did not export it.
INIT_FILES = ('$MODULESHOME/init/bash', '/etc/profile.d/lmod.sh',
              '/usr/share/lmod/lmod/init/bash', '/etc/profile.d/modules.sh')
#: Defines ``module`` if the shell lacks it; prints the start-up file it used ('' if none).
ENSURE_MODULE = ('if ! type module >/dev/null 2>&1; then for f in ' + ' '.join(
    f'"{f}"' for f in INIT_FILES) + '; do [ -r "$f" ] && . "$f" >/dev/null 2>&1 && '
    'echo "OMB-INIT $f" && break; done; fi; type module >/dev/null 2>&1 || '
    '{ echo "OMB-NOMODULE"; exit 3; }')
_NAME_CHARS = re.compile(r'[^A-Za-z0-9_-]')


class ModuleError(ValueError):
    """Modules that cannot be registered; the message says which and what to do."""


def parse_item(item: str) -> tuple[str, list[str]]:
    """``FAMILY=MODULE[,MODULE...]`` -> (family, modules)."""
    family, sep, names = item.partition('=')
    modules = [m.strip() for m in names.split(',') if m.strip()]
    if not sep or not modules or not families.known(family):
        given = names if sep else item  # the modules, FAMILY= forgotten or misspelt
        guess = families.by_module(given.split(',')[0])
        hint = f'; {given.split(",")[0]} is a module of {guess}: --module {guess}={given}' \
            if guess else ''
        raise ModuleError(f'--module {item}: expected FAMILY=MODULE[,MODULE...] with FAMILY one '
                          f'of {", ".join(families.names())}, e.g. '
                          f'openmpi=openmpi/4.1.4,osu-micro-benchmarks/7.3{hint}')
    return family, modules


def environment_name(modules: list[str]) -> str:
    """A ReFrame environment name from module names: ``openmpi/4.1.5/gnu`` ->
    ``mod-openmpi-4_1_5-gnu`` (ReFrame allows letters, digits, ``_`` and ``-``)."""
    return 'mod-' + _NAME_CHARS.sub('_', '-'.join(modules).replace('/', '-'))


def name_uniquely(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries named after their MPI module, or after all their modules where two share it
    (two OSU builds on one MPI)."""
    firsts = [environment_name(e['modules'][:1]) for e in entries]
    return [{**e, 'name': first if firsts.count(first) == 1 else environment_name(e['modules'])}
            for e, first in zip(entries, firsts, strict=True)]


def load_script(modules: list[str], family: str | None, use: list[str]) -> list[str]:
    """``bash -c`` that loads ``modules`` (after ``module use`` of ``use``) and prints their
    facts and the module set-up."""
    facts = [shlex.quote(sys.executable), '-m', 'omb_suite.setup.module_facts', '--before',
             '"$before"']
    if family:
        facts += ['--family', family]
    using = f'module use {" ".join(shlex.quote(d) for d in reversed(use))}; ' if use else ''
    # purge first: modules already loaded in the calling shell would make `module load` a
    # no-op and hide what these modules add; the search path is read after the purge
    script = (f'{ENSURE_MODULE}; module purge >/dev/null 2>&1; {using}'
              f'echo "OMB-MODULEPATH $MODULEPATH"; '
              f'echo "OMB-MODULESHOME ${{MODULESHOME:-}}"; before=$PATH; '
              f'module load "$@" || {{ echo "OMB-LOADFAILED"; exit 4; }}; ' + ' '.join(facts))
    return ['bash', '-c', script, 'omb-setup', *modules]


def tagged(output: str, tag: str) -> str | None:
    """The rest of the last line starting with ``tag`` (``OMB-FACTS``...), if any."""
    lines = [ln[len(tag):].strip() for ln in output.splitlines() if ln.startswith(tag)]
    return lines[-1] if lines else None


def load_facts(modules: list[str], family: str | None, use: list[str],
               timeout: int = 120) -> tuple[dict[str, Any], dict[str, str]]:
    """(facts, set-up) of ``modules`` loaded in a fresh ``bash``; set-up holds the module
    search path before loading (``modulepath``) and the file that defines ``module`` in a
    shell that lacks it (``init``)."""
    try:
        done = subprocess.run(load_script(modules, family, use), capture_output=True, text=True,
                              timeout=timeout, env=os.environ)
    except (OSError, subprocess.SubprocessError) as err:
        raise ModuleError(f'cannot run bash to load {" ".join(modules)}: {err}') from err
    out = done.stdout
    said = done.stderr.strip()
    if 'OMB-NOMODULE' in out:
        raise ModuleError('no `module` command: start Lmod or Environment Modules in this shell '
                          '(e.g. `source /etc/profile.d/lmod.sh`) and run omb-setup again')
    if 'OMB-LOADFAILED' in out:
        raise ModuleError(f'`module load {" ".join(modules)}` failed:\n{said}\nCheck the names '
                          f'with `module avail` / `module spider`')
    text = tagged(out, module_facts.MARKER.strip())
    if text is None:
        raise ModuleError(f'reading the facts of {" ".join(modules)} failed:\n{out}{said}')
    facts = json.loads(text)
    if 'error' in facts:
        raise ModuleError(f'{" ".join(modules)}: {facts["error"]}')
    home = tagged(out, 'OMB-MODULESHOME')
    setup = {'modulepath': tagged(out, 'OMB-MODULEPATH') or '',
             'init': tagged(out, 'OMB-INIT') or (f'{home}/init/bash' if home else '')}
    return facts, setup


def registry_entry(family: str | None, modules: list[str],
                   use: Sequence[str] = ()) -> dict[str, Any]:
    """The registry entry of an environment that loads ``modules`` (facts read after loading),
    found on ``MODULEPATH`` after ``module use`` of ``use``."""
    facts, setup = load_facts(modules, family, list(use))
    return {
        'name': environment_name(modules[:1]), 'mpi_family': facts['family'],
        'mpi_version': facts['version'], 'mpi_bin': facts['bin'], 'osu_root': facts['osu_root'],
        'osu_version': facts['osu_version'], 'cuda': facts['cuda'], 'rocm': False,
        'path': [], 'tool_path': facts['added_path'], 'env_vars': {}, 'source': 'module',
        'modules': modules,
        'module_use': [d for d in setup['modulepath'].split(os.pathsep) if d],
        'module_init': setup['init'], 'spack_env': None, 'spack_lock': None,
        'osu_spec': None, 'mpi_spec': None,
    }


def module_entries(items: list[str]) -> list[dict[str, Any]]:
    """One entry per ``--module FAMILY=MODULE[,MODULE...]``."""
    return name_uniquely([registry_entry(*parse_item(item)) for item in items])


def with_series(entries: list[dict[str, Any]], items: list[str]) -> list[dict[str, Any]]:
    """Module environments with the series ``--series [FAMILY=]NAME`` declares for their
    family (a bare NAME: for all of them)."""
    named: dict[str, str] = {}
    for item in items:
        family, _, name = item.rpartition('=')
        if not name or _NAME_CHARS.search(name):
            raise ModuleError(f'--series {item}: NAME may hold letters, digits, _ and - only, '
                              'e.g. --series openmpi=openmpi')
        if family and family not in families.names():
            raise ModuleError(f'--series {item}: {family!r} is no MPI family; use one of '
                              f'{", ".join(families.names())}')
        named[family or '*'] = name
    modular = [e for e in entries if e.get('modules')]
    unused = set(named) - {e['mpi_family'] for e in modular} - ({'*'} if modular else set())
    if unused:
        raise ModuleError(f'--series {", ".join(sorted(unused))}: no environment from modules '
                          '(--module, --loaded-modules) of that MPI family')
    return [{**e, 'series': named.get(e['mpi_family'], named.get('*'))} if e.get('modules')
            and (e['mpi_family'] in named or '*' in named) else e for e in entries]


def shell_notes(entries: list[dict[str, Any]]) -> list[str]:
    """What to do when environments load modules but this shell shows no module tool, from
    which ReFrame's `local` takes its ``modules_system`` (without one it offers them not)."""
    if any(e.get('modules') for e in entries) and environs.detected_modules_system() == 'nomod':
        return ['omb-setup: note: $LMOD_CMD and $MODULES_CMD are unset in this shell, so '
                'ReFrame\'s `local` would have no modules system and not offer the environments '
                'that load modules: start ReFrame where Lmod is set up (a login shell, or '
                '`source /etc/profile.d/lmod.sh`)']
    return []
