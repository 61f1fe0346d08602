"""Which OSU the test command runs end to end: `bash scripts/run-tests.sh` evaluates what this
prints (shell code).

The OSU end-to-end tests take OSU_ROOT (built with Open MPI) and OSU_ROOT_MPICH. When the
caller exported neither (CI exports both), the OSU that omb-setup registered is used: the
first command of the README (`bash scripts/quickstart.sh`) builds OSU into the Spack views
and records them in the environment registry (`.omb/environments.json`, or
$OMB_ENVIRONMENTS_FILE). The printed `osu_note` says which OSU the tests use, or that the
real runs are skipped and how to enable them.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from omb_suite.setup import environs

#: The variable the tests read for an OSU built with each MPI family (tests/rfm_helpers.py).
VARIABLES = {'openmpi': 'OSU_ROOT', 'mpich': 'OSU_ROOT_MPICH'}
ENABLE = ('run `bash scripts/quickstart.sh` first (it builds OSU and registers it), or '
          'export OSU_ROOT=<OSU prefix built with Open MPI> and OSU_ROOT_MPICH=<... MPICH>')


def registered(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Variable -> the registry entry whose OSU it names: per family, an entry with an
    installed OSU, the Spack-built ones (what the quickstart builds) first."""
    found: dict[str, dict[str, Any]] = {}
    ranked = sorted(entries, key=lambda e: e.get('source') != 'spack')
    for entry in ranked:
        var = VARIABLES.get(entry.get('mpi_family', ''))
        root = entry.get('osu_root')
        installed = root and Path(root, 'libexec', 'osu-micro-benchmarks').is_dir()
        if var and var not in found and installed:
            found[var] = entry
    return found


def shell(environ: dict[str, str] | os._Environ, registry: Path) -> str:
    """Shell code: exports of the registered OSU, and `osu_note`."""
    given = [var for var in VARIABLES.values() if environ.get(var)]
    if given:
        note = 'OSU end-to-end tests: ' + ', '.join(f'{v}={environ[v]}' for v in given) + \
            ' (exported by the caller)'
        return f'osu_note={shlex.quote(note)}\n'
    try:
        found = registered(environs.load_registry(registry))
    except ValueError as err:  # a broken registry skips the runs; the tests say the rest
        return f'osu_note={shlex.quote(f"OSU end-to-end tests SKIPPED: {err}")}\n'
    if not found:
        note = (f'OSU end-to-end tests SKIPPED: no OSU_ROOT exported and none registered in '
                f'{registry}; to run them, {ENABLE}')
        return f'osu_note={shlex.quote(note)}\n'
    lines = [f'export {var}={shlex.quote(entry["osu_root"])}' for var, entry in found.items()]
    which = ', '.join(f'{var}={entry["osu_root"]} ({entry["name"]}, OSU '
                      f'{entry.get("osu_version") or "?"})' for var, entry in found.items())
    note = f'OSU end-to-end tests: {which}, registered by omb-setup in {registry}'
    return '\n'.join([*lines, f'osu_note={shlex.quote(note)}']) + '\n'


if __name__ == '__main__':
    print(shell(os.environ, environs.registry_path(Path(__file__).resolve().parents[1])), end='')
