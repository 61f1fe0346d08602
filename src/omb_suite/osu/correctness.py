"""Read our correctness check (``job_sources/collective_check.c``): did the MPI library's
collectives compute the right data, every element of every message size?

The check runs as a program of its own or, preloaded into OSU (:data:`LIBRARY`), inside the
launch that measures, on what :data:`ASK_VAR` names. It checks one or several collectives;
rank 0 prints the library that ran
(``COLLCHECK library <MPI_Get_library_version's first line>``), a ``COLLCHECK`` line per
collective and ``COLLCHECK done ranks=N`` at the end. Anything else (no line for a collective
asked for, no final line) is an incomplete run, never a pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from omb_suite.mpi import families

PROGRAM = 'collective_check'
SOURCE = 'collective_check.c'
#: The check as a library preloaded into OSU, and the variable that says what it checks
#: (``MAX_BYTES,NAME,...``, the program's arguments; commas, since ReFrame writes
#: ``export VAR=value`` unquoted).
LIBRARY = 'libcollective_check.so'
ASK_VAR = 'OMB_COLLCHECK'
#: The collectives the program can check (OSU program names).
CHECKABLE = ('osu_allreduce', 'osu_bcast', 'osu_alltoall', 'osu_allgather', 'osu_reduce',
             'osu_barrier', 'osu_iallreduce', 'osu_gather', 'osu_scatter')

_LINE = re.compile(r'^COLLCHECK (?P<name>osu_\w+) (?P<verdict>ok|wrong) ?(?P<detail>.*)$', re.M)
_DONE = re.compile(r'^COLLCHECK done ranks=(\d+)\s*$', re.M)
_LIBRARY = re.compile(r'^COLLCHECK library (.*)$', re.M)


class CorrectnessError(ValueError):
    """Wrong results, or an output that does not say for every collective asked for."""


@dataclass(frozen=True)
class Verdict:
    name: str
    ok: bool
    detail: str


def library_ran(text: str) -> str | None:
    """The MPI library that ran the program, as it names itself (``MPI_Get_library_version``)."""
    match = _LIBRARY.search(text)
    return match[1].strip() if match else None


def other_library(said: str | None, family: str | None, version: str | None) -> str | None:
    """Why the library that ran (``said``) is not the environment's ``family`` and
    ``version``; ``None`` when it is, or when no family record reads its text."""
    found = families.from_library_version(said or '')
    if found is None or not families.known(family):
        return None
    ran_family, ran_version = found
    if ran_family != family or (version and ran_version != version):
        return (f'the job ran {ran_family} {ran_version} ({said!r}), not the environment\'s '
                f'{family} {version}: its PATH or LD_LIBRARY_PATH picks another library')
    return None


def parse(text: str, asked: list[str], ranks: int) -> dict[str, Verdict]:
    """Every collective asked for, by name; raises :class:`CorrectnessError` on an incomplete
    output (a cut-off or crashed run) naming what is missing."""
    found = {m['name']: Verdict(m['name'], m['verdict'] == 'ok', m['detail'].strip())
             for m in _LINE.finditer(text)}
    missing = [name for name in asked if name not in found]
    done = _DONE.search(text)
    if missing or done is None:
        what = f'no verdict for {", ".join(missing)}' if missing else 'no final line'
        raise CorrectnessError(f'{PROGRAM} output is incomplete ({what}): it was cut off or '
                               'crashed, or (no COLLCHECK line at all) its library was not '
                               'loaded into OSU (an OSU linked statically against MPI; '
                               '-S validation=0 measures unchecked); see the job\'s stderr')
    if int(done[1]) != ranks:
        raise CorrectnessError(f'{PROGRAM} ran on {done[1]} ranks, the job has {ranks}')
    return {name: found[name] for name in asked}


def wrong(verdicts: dict[str, Verdict]) -> str | None:
    """One message naming every collective that computed wrong data, or ``None``."""
    bad = [f'{v.name} wrong {v.detail}' for v in verdicts.values() if not v.ok]
    return '; '.join(bad) or None
