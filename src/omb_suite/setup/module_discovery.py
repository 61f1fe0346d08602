"""Find OSU modules on ``MODULEPATH`` and the MPI each was built with (``omb-setup
--discover-modules``): every OSU module Lmod's spider knows, with each chain of modules that
makes it loadable (in a hierarchy, the MPI module above it; a flat OSU module loads its MPI
itself), loaded and read like ``--module`` (:mod:`omb_suite.setup.module_envs`). What cannot be
registered is skipped with the reason.

Discovery needs Lmod: ``spider`` is what knows the hierarchy. With Environment Modules,
register each pair with ``--module FAMILY=MPI_MODULE,OSU_MODULE``.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from typing import Any

from omb_suite.setup import module_envs

#: Module names taken for OSU (Spack: osu-micro-benchmarks; EasyBuild: OSU-Micro-Benchmarks).
OSU_NAMES = ('osu-micro-benchmarks',)
SPIDER = (f'{module_envs.ENSURE_MODULE}; [ -n "${{LMOD_DIR:-}}" ] || {{ echo "OMB-NOLMOD"; '
          'exit 5; }; "$LMOD_DIR/spider" -o spider-json "$MODULEPATH"')


@dataclass
class Discovery:
    """Environments found, and the module chains skipped with why."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def report(self) -> str:
        lines = [f'omb-setup: module discovery: {len(self.entries)} MPI + OSU pair(s) found, '
                 f'{len(self.skipped)} skipped']
        lines += [f'  found    {" ".join(e["modules"])}: {e["mpi_family"]} {e["mpi_version"]}, '
                  f'OSU {e["osu_version"]}' for e in self.entries]
        lines += [f'  skipped  {chain}: {why}' for chain, why in self.skipped]
        return '\n'.join(lines)


def spider() -> dict[str, Any]:
    """Lmod's spider database of every module on ``MODULEPATH`` (``-o spider-json``)."""
    try:
        done = subprocess.run(['bash', '-c', SPIDER], capture_output=True, text=True,
                              timeout=300)
    except (OSError, subprocess.SubprocessError) as err:
        raise module_envs.ModuleError(f'cannot run Lmod\'s spider: {err}') from err
    if 'OMB-NOMODULE' in done.stdout:
        raise module_envs.ModuleError('no `module` command: start Lmod in this shell first')
    if 'OMB-NOLMOD' in done.stdout:
        raise module_envs.ModuleError('module discovery needs Lmod (its spider); with another '
                                      'module system register each MPI + OSU pair with '
                                      '--module FAMILY=MPI_MODULE,OSU_MODULE')
    text = done.stdout[done.stdout.find('{'):]
    try:
        return json.loads(text)
    except ValueError as err:
        raise module_envs.ModuleError(f'Lmod\'s spider printed no JSON ({err}): '
                                      f'{done.stderr.strip()[:500]}') from err


def osu_chains(database: dict[str, Any],
               names: tuple[str, ...] = OSU_NAMES) -> list[list[str]]:
    """Module lists to load, OSU last: one per parent chain of each OSU module file."""
    chains = []
    for name, files in sorted(database.items()):
        if name.lower() not in names:
            continue
        for info in files.values():
            if info.get('hidden'):
                continue
            parents = info.get('parentAA') or [[]]
            chains += [[*parent, info['fullName']] for parent in parents]
    return chains


def discover(names: tuple[str, ...] = OSU_NAMES) -> Discovery:
    """Load each OSU module chain and register those that give an MPI and OSU."""
    found = Discovery()
    for chain in osu_chains(spider(), names):
        try:
            entry = module_envs.registry_entry(None, chain)
        except module_envs.ModuleError as err:
            found.skipped.append((' '.join(chain), str(err).splitlines()[0]))
            continue
        if entry['osu_version'] is None:
            found.skipped.append((' '.join(chain), 'no osu_latency on PATH after loading'))
            continue
        found.entries.append(entry)
    found.entries = module_envs.name_uniquely(found.entries)
    return found
