"""Find OSU benchmark programs by absolute path, for OSU 5.9 to 7.5.x.

Layouts covered:

- install tree (``make install``, Spack, EasyBuild):
  ``<root>/libexec/osu-micro-benchmarks/mpi/{pt2pt,pt2pt/persistent,congestion,
  collective,one-sided,startup}/<name>``
- build tree of OSU 6.x/7.x: ``<root>/c/mpi/{pt2pt/standard,pt2pt/persistent,
  congestion,collective/blocking,collective/non_blocking,...,one-sided,startup}/<name>``
- build tree of OSU 5.x: ``<root>/mpi/{pt2pt,collective,one-sided,startup}/<name>``

A program that is in none of the roots is looked up on ``PATH``. Nothing found gives
one message that says how to provide OSU.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

_INSTALL = 'libexec/osu-micro-benchmarks/mpi'
SUBDIRS: tuple[str, ...] = (
    f'{_INSTALL}/pt2pt', f'{_INSTALL}/pt2pt/persistent', f'{_INSTALL}/congestion',
    f'{_INSTALL}/collective', f'{_INSTALL}/one-sided', f'{_INSTALL}/startup',
    'c/mpi/pt2pt/standard', 'c/mpi/pt2pt/persistent', 'c/mpi/pt2pt', 'c/mpi/congestion',
    'c/mpi/collective/blocking', 'c/mpi/collective/non_blocking',
    'c/mpi/collective/neighborhood', 'c/mpi/collective/persistent', 'c/mpi/collective',
    'c/mpi/one-sided', 'c/mpi/startup',
    'mpi/pt2pt', 'mpi/collective', 'mpi/one-sided', 'mpi/startup',
    'bin',
)

HOW_TO_GET_OSU = (
    'OSU Micro-Benchmarks not found. Provide them in one of these ways:\n'
    '  1. build them with Spack and register the build:  omb-setup   (needs spack on PATH;\n'
    '     see docs/spack.md), or\n'
    '  2. point at an existing install or build tree:     export OSU_ROOT=/path/to/osu-prefix\n'
    '     then run  omb-setup  again, or\n'
    '  3. put the osu_* programs on PATH (e.g. `spack load osu-micro-benchmarks` or a module).'
)


class OsuNotFoundError(FileNotFoundError):
    """An OSU program could not be found; the message says how to provide OSU."""


def _is_exe(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_in_root(name: str, root: str | os.PathLike[str]) -> Path | None:
    """The absolute path of program ``name`` under an OSU prefix or build tree."""
    base = Path(root)
    for sub in SUBDIRS:
        candidate = base / sub / name
        if _is_exe(candidate):
            return candidate.resolve()
    return None


def find_osu_binary(name: str, roots: Iterable[str | os.PathLike[str] | None] = (),
                    search_path: str | None = None) -> Path:
    """Find ``name`` under the first root that has it, else on ``search_path``/``PATH``.

    Raises :class:`OsuNotFoundError` with the roots that were searched and how to get OSU.
    """
    tried = [str(r) for r in roots if r]
    for root in tried:
        found = find_in_root(name, root)
        if found:
            return found
    which = shutil.which(name, path=search_path if search_path is not None else None)
    if which:
        return Path(which).resolve()
    where = f' (searched OSU roots: {", ".join(tried)}; and PATH)' if tried else ' (on PATH)'
    raise OsuNotFoundError(f'{name}: not found{where}.\n{HOW_TO_GET_OSU}')


def list_benchmarks(root: str | os.PathLike[str]) -> dict[str, Path]:
    """Every ``osu_*`` program under ``root``, by name (first layout match wins)."""
    found: dict[str, Path] = {}
    base = Path(root)
    for sub in SUBDIRS:
        directory = base / sub
        if directory.is_dir():
            for entry in sorted(directory.glob('osu_*')):
                if _is_exe(entry):
                    found.setdefault(entry.name, entry.resolve())
    return found
