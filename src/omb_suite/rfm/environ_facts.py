"""The contract with a site's own ReFrame configuration (docs/site-config.md): an environment
says ``features: [mpi]``; the suite finds the rest in the environment as its job sees it.

Environments that ``omb-setup`` registered carry the feature ``omb_setup`` and their facts in
``extras`` (``mpi_family``, ``mpi_version``, ``osu_root``, ``env_path``): those are taken as
they are. Any other environment with feature ``mpi`` is probed once
(:mod:`omb_suite.mpi.environ_probe`: its prepare commands, ``module load`` lines and variables in
one shell, as the job script has them), and a fact its ``extras`` states still overrides the
probe's. What cannot be found is said, per environment, never guessed.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import reframe as rfm
from reframe.core.builtins import run_after, run_before
from reframe.core.logging import getlogger
from reframe.core.runtime import runtime

from omb_suite.mpi import environ_probe
from omb_suite.mpi.environ_probe import EnvironFacts
from omb_suite.setup.environs import REGISTERED_FEATURE as REGISTERED

#: ``valid_prog_environs`` alternatives of OSU checks: registered ones that have OSU, and any
#: other MPI environment (the probe finds its OSU, or the test says where it looked).
OSU_ENVIRONS = [f'+mpi +osu +{REGISTERED}', f'+mpi -{REGISTERED}']


def cache_dir() -> Path:
    """Where probes of earlier processes are kept (``$XDG_CACHE_HOME/omb-suite``)."""
    base = os.environ.get('XDG_CACHE_HOME') or Path.home() / '.cache'
    return Path(base) / 'omb-suite' / 'environ-probe'


def registered(environ) -> bool:
    return REGISTERED in environ.features


def facts(environ) -> EnvironFacts | None:
    """The probed facts of a site's environment; ``None`` for a registered one."""
    if registered(environ):
        return None
    loads = [*environ.prepare_cmds]
    modules = runtime().modules_system
    for module in environ.modules:
        loads += modules.emit_load_commands(module)
    # a listing or dry run may reuse an earlier process's probe; a run probes afresh
    fresh = not {'-l', '-L', '--list', '--list-detailed', '--dry-run'} & set(sys.argv)
    return environ_probe.environ_facts(loads, dict(environ.env_vars), cache_dir(), fresh=fresh)


def mpi_library(environ) -> tuple[str | None, str | None]:
    """(family, version) of an environment: its ``extras`` first, else its probe."""
    family, version = environ.extras.get('mpi_family'), environ.extras.get('mpi_version')
    found = facts(environ) if not family else None
    if found is not None:
        family, version = found.family, version or found.version
    return (str(family) if family else None), (str(version) if version else None)


def search_path(environ) -> str:
    """The ``PATH`` the environment's job sees (its MPI tools and OSU first)."""
    found = facts(environ)
    if found is not None and found.path:
        return found.path
    return os.pathsep.join([*(environ.extras.get('env_path') or []), os.environ.get('PATH', '')])


def osu_roots(environ) -> list[str | None]:
    """OSU prefixes the environment names: ``extras['osu_root']``, its own ``OSU_ROOT``."""
    found = facts(environ)
    return [environ.extras.get('osu_root'), found.osu_root if found else None]


def where_looked(environ) -> str:
    """For a site's environment where OSU was not found: the PATH its job has."""
    found = facts(environ)
    if found is None:
        return ''
    where = (f' in environment {environ.name} as its job sees it (PATH: '
             f'{found.looked_in() or "empty"})')
    if found.failed_loads:
        why = ('this host has no module command (Lmod or Environment Modules), which the suite '
               'runs here to read what the modules give the job: install or initialise it on '
               'the host ReFrame runs on' if not found.has_module else
               'check the module names with `module avail` on the host ReFrame runs on')
        where += f"; here `{'`, `'.join(found.failed_loads)}` failed: {why}"
    return where


def unknown_family(environ, launcher: str) -> str | None:
    """Why a launch cannot be built when the family is unknown, else ``None``."""
    family, _ = mpi_library(environ)
    if family or launcher not in ('mpirun', 'mpiexec'):
        return None
    found = facts(environ)
    seen = found.evidence if found else 'its extras name no mpi_family'
    return (f'environment {environ.name}: cannot tell which MPI family its {launcher} is '
            f'({seen}); its options differ per family, so nothing is launched. Put the MPI on '
            f"the environment's PATH (modules or env_vars), or set extras: {{mpi_family: ...}} "
            '(docs/site-config.md)')


_TOLD: set[str] = set()


def say_what_is_missing() -> None:
    """Once per session: each partition of the selected system where no environment has
    feature ``mpi`` (so no OSU check can be generated there), with what to add."""
    for part in runtime().system.partitions:
        if part.fullname in _TOLD or any('mpi' in env.features for env in part.environs):
            continue
        _TOLD.add(part.fullname)
        names = ', '.join(env.name for env in part.environs) or 'none'
        getlogger().warning(
            f"partition {part.fullname}: no environment has feature 'mpi' (environments: "
            f'{names}), so no OSU check runs there: add features: [mpi] to the environment '
            'that provides the MPI library (docs/site-config.md)')


#: What a job prints (on its error output) when a module of its environment is not loaded;
#: :mod:`omb_suite.launch.failures` names it as the job's cause.
MODULE_MISSING = 'OMB-MODULE-MISSING'


def modules_guard(modules: Sequence[str]) -> list[str]:
    """Job-script lines, after ReFrame's ``module load`` lines, that stop the job where a module
    of its environment is not loaded: a job shell without ``module`` (a non-login shell of the
    scheduler) or a load that failed (an unknown or conflicting module). Without them the
    benchmark runs with whatever MPI is on ``PATH`` and passes, measuring the wrong library.
    Needs ``module is-loaded`` (Lmod, Environment Modules 4 and later)."""
    if not modules:
        return []
    names = ' '.join(modules)
    out = [f'type module >/dev/null 2>&1 || {{ echo "{MODULE_MISSING}: the job\'s shell has no '
           f'module command: {names} not loaded (define it in the environment\'s prepare_cmds, '
           'e.g. . /usr/share/lmod/lmod/init/bash)" >&2; exit 1; }']
    out += [f'module is-loaded {shlex.quote(m)} || {{ echo "{MODULE_MISSING}: {m} is not loaded '
            'in the job: its module load failed (above)" >&2; exit 1; }' for m in modules]
    return out


def failed_load(environ) -> str | None:
    """Why a site's environment cannot be measured when its module loads failed on the host
    ReFrame runs on (that host has a module command: the job would load the same); ``None``
    when every load worked, or where the host has no module command (said by
    :func:`where_looked` when OSU is then not found)."""
    found = facts(environ)
    if found is None or not found.failed_loads or not found.has_module:
        return None
    return (f"environment {environ.name}: `{'`, `'.join(found.failed_loads)}` failed on the "
            'host ReFrame runs on, so its MPI and OSU are not what it names (the job would '
            'measure whatever is on PATH): check the module names with `module avail` there')


class ModulesLoaded(rfm.RegressionTestPlugin):
    """A site's environment whose module loads fail where ReFrame runs is skipped, saying so
    (:func:`failed_load`); a job stops, naming the module, where its environment's modules
    are not loaded (:func:`modules_guard`); module collections are not checked."""

    @run_after('setup', always_last=True)
    def skip_if_a_module_failed_to_load(self):
        why = failed_load(self.current_environ)
        self.skip_if(why is not None, why or '')

    @run_before('run')
    def stop_unless_modules_loaded(self):
        names = [m['name'] for m in self.current_environ.modules_detailed
                 if not m.get('collection')]
        self.prerun_cmds = [*modules_guard(names), *self.prerun_cmds]
