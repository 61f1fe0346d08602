"""Our helper programs (``job_sources/*.c``) compiled once per environment and content, and
reused by every later test and run.

A program's place in the cache is named by a hash of its source, the compiler command and
flags, and everything the environment says about its MPI (name, modules, ``PATH``, library,
version, Spack spec and lock): a change to any of them is a new place, so a program is
never used with another MPI than the one it was built with. The job builds the program
there only if it is missing (to a temporary name, then renamed: two jobs building at once
leave one whole program); a hit costs a ``test -x``. Measured (benchmarks/harness_overhead.py):
compiling ``collective_check.c`` as a ReFrame fixture was a test case of its own per run.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path


def key(source: str, compiler: str, flags: list[str], environment: dict) -> str:
    """The hash naming one build: source text, compiler, flags and the environment's facts."""
    what = json.dumps({'source': source, 'compiler': compiler, 'flags': flags,
                       'environment': environment}, sort_keys=True, default=str)
    return hashlib.sha256(what.encode()).hexdigest()[:16]


def place(cache: Path, source: Path, compiler: str, flags: list[str],
          environment: dict) -> Path:
    """The directory of this build in ``cache`` (nothing is written)."""
    return cache / key(source.read_text(), compiler, flags, environment)


def stock(where: Path, source: Path) -> None:
    """Put a copy of the source in the build's directory (the job compiles that copy, where
    the job runs), unless it is there."""
    copy = where / source.name
    if not copy.is_file():
        text = source.read_text()
        where.mkdir(parents=True, exist_ok=True)
        partial = where / f'.{source.name}.tmp'
        partial.write_text(text)
        partial.replace(copy)


def build_command(where: Path, source_name: str, program: str, compiler: str,
                  flags: list[str], libs: list[str] | None = None) -> str:
    """The job's shell line: build ``program`` in ``where`` unless it is there (``libs``
    linked after the source); a failed build stops the job saying so, and a cache the node
    cannot see (the host stocked it on a file system this node does not share) says that."""
    target = shlex.quote(str(where / program))
    source = shlex.quote(str(where / source_name))
    partial = shlex.quote(str(where / f'.{program}.tmp')) + '.$$'
    compile_ = shlex.join([compiler, *flags, '-o']) + f' {partial} ' + \
        shlex.join([str(where / source_name), *(libs or [])])
    unseen = (f'echo "omb: the build cache {where} is not on $(hostname) (the host ReFrame runs '
              f'on wrote it): set OMB_BUILD_CACHE=DIR (or -S build_cache=DIR) on a file system the '
              f'compute nodes share"')
    return (f'[ -x {target} ] || {{ [ -r {source} ] || {{ {unseen} >&2; exit 1; }}; }} && '
            f'{{ [ -x {target} ] || {{ {compile_} && mv -f {partial} {target}; }} || '
            f'{{ echo "omb: building {program} in {where} failed" >&2; exit 1; }}; }}')
