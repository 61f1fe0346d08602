"""The OMB_* and OSU_* variables of the caller's shell, and the few the test command takes
from it on purpose.

Everything else a caller exports (the variables README.md and docs/ tell users to set, such
as OMB_ENVIRONMENTS_FILE, and the suite's internal ones) would change what a test runs:
tests/conftest.py removes them for every test, which sets its own. `python
tests/caller_env.py` prints `export` lines setting every documented variable that is not
passed in to a harmless value: .ci/run runs part of the suite with them to prove it.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PREFIXES = ('OMB_', 'OSU_')
#: Passed in on purpose (.ci/run exports them): the OSU installs the end-to-end tests run,
#: the mini-cluster's state, the sources (and OSU version) of the real Spack bootstrap,
#: which tests read when they are collected, and a Flux installed elsewhere.
PASSED_IN = frozenset({
    'OSU_ROOT', 'OSU_ROOT_MPICH', 'OSU_ROOT_MVAPICH', 'OMB_CLUSTER_UP', 'OMB_CLUSTER_DIR',
    'OMB_SPACK_GIT', 'OMB_SPACK_PACKAGES_GIT', 'OMB_SPACK_MIRROR', 'OMB_SPACK_INSTALL_ARGS',
    'OMB_OSU_VERSION', 'OMB_OMPI5_MPIRUN', 'OMB_IMPI_MPIEXEC', 'OMB_FLUX_PREFIX',
})
NAME_RE = re.compile(r'\b(?:OMB|OSU)_[A-Z0-9_]*[A-Z0-9]\b')


def from_caller(environ: dict[str, str] | os._Environ) -> list[str]:
    """The caller's variables no test may see."""
    return sorted(k for k in environ if k.startswith(PREFIXES) and k not in PASSED_IN)


def documented() -> set[str]:
    """Every OMB_*/OSU_* variable README.md and docs/ name."""
    pages = [REPO / 'README.md', *sorted((REPO / 'docs').rglob('*.md'))]   # docs/dev too
    return {name for page in pages for name in NAME_RE.findall(page.read_text())}


def harmless_values() -> dict[str, str]:
    """A value for each documented variable not passed in: a path nothing is at where the
    name asks for a place, else '1'."""
    places = ('_FILE', '_DIR', '_PATH', '_GIT', '_MIRROR', '_ROOT')
    return {name: f'/nonexistent/{name.lower()}' if name.endswith(places) else '1'
            for name in sorted(documented() - PASSED_IN)}


if __name__ == '__main__':
    for name, value in harmless_values().items():
        print(f'export {name}={shlex.quote(value)}')
