"""Read the MPI_T reader's output and judge which collective algorithm ran.

The reader (``job_sources/mpit_reader.c``, loaded into the benchmark with ``LD_PRELOAD``) prints, at
``MPI_Finalize``, every non-zero counter-class MPI_T performance variable whose name matches
``$OMB_MPIT_MATCH`` (default ``coll``), then one ``done`` line per rank::

    MPIT rank=0 name=mv2_coll_bcast_binomial value=12
    MPIT done rank=0 size=2 pvars=994 matched=734 read=734 failed=0 nonzero=31

MVAPICH2 built with ``--enable-mpit-pvars=mv2`` counts every call of every collective
algorithm (``mv2_coll_<collective>_<counter>``; the traffic counters ``..._bytes_send`` etc.
are not used). Which counters belong to which algorithm is data, in the algorithm table
(``data/algorithms/mvapich2.yaml``); this module only reads and judges.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

READER_SOURCE = "mpit_reader.c"
_LINE = re.compile(r"^MPIT rank=(?P<rank>\d+) name=(?P<name>[^\s\[]+)(?:\[\d+\])? "
                   r"value=(?P<value>\d+)\s*$")
_DONE = re.compile(r"^MPIT done rank=(?P<rank>\d+) size=(?P<size>\d+) pvars=(?P<pvars>\d+) "
                   r"matched=(?P<matched>\d+) read=(?P<read>\d+) failed=(?P<failed>\d+) "
                   r"nonzero=\d+\s*$")


class MpitError(ValueError):
    """The reader's output is missing or cut: nothing can be judged."""


@dataclass(frozen=True)
class Counters:
    """What the reader saw: counter totals over all ranks, and how many pvars it could read."""

    ranks: int
    pvars: int  # performance variables the library exposes (rank 0)
    matched: int  # of those, counters matching the pattern that the reader opened (rank 0)
    totals: dict[str, int]  # pvar name -> sum over ranks (array elements summed too)


def parse_counters(text: str) -> Counters:
    """Parse the reader's lines out of a run's output (other lines are ignored).

    Raises MpitError when no ``done`` line is there (the reader was not loaded, or the run
    died before ``MPI_Finalize``) or when a rank's ``done`` line is missing (output cut)."""
    totals: dict[str, int] = {}
    done: dict[int, re.Match[str]] = {}
    for line in text.splitlines():
        if m := _LINE.match(line.strip()):
            totals[m["name"]] = totals.get(m["name"], 0) + int(m["value"])
        elif m := _DONE.match(line.strip()):
            done[int(m["rank"])] = m
    if not done:
        raise MpitError("the MPI_T reader printed nothing: it was not loaded (LD_PRELOAD of "
                        f"the library built from {READER_SOURCE}) or the benchmark did not "
                        "reach MPI_Finalize")
    size = int(next(iter(done.values()))["size"])
    missing = sorted(set(range(size)) - set(done))
    if missing:
        raise MpitError(f"the MPI_T reader's output is cut: no 'MPIT done' line for ranks "
                        f"{missing} of {size}")
    first = done[min(done)]
    return Counters(size, int(first["pvars"]), int(first["matched"]), totals)


def moved(counters: Counters, prefix: str, names: list[str]) -> dict[str, int]:
    """Counter (named without ``prefix``) -> calls over all ranks, for each of ``names``, the
    collective's algorithm counters, that moved."""
    return {name: counters.totals[prefix + name] for name in names
            if counters.totals.get(prefix + name, 0) > 0}


class Outcome(Enum):
    PROVEN = "proven"  # the forced algorithm's counter moved, no other of the collective did
    OTHER = "other"  # another algorithm of the collective ran: the forcing did not take
    NOT_COUNTED = "not_counted"  # counters exist, none of this collective moved
    NO_COUNTERS = "no_counters"  # the library exposes no such counters: no evidence


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    moved: dict[str, int]  # counter -> value, of the collective
    message: str


def judge(counters: Counters, prefix: str, names: list[str], expected: tuple[str, ...],
          allowed: tuple[str, ...] = ()) -> Verdict:
    """Did every counter in ``expected`` move, and no other of ``names`` (the collective's
    algorithm counters, named without ``prefix``) but those in ``allowed`` (the stages an
    algorithm legitimately calls)?"""
    if counters.matched == 0:
        return Verdict(Outcome.NO_COUNTERS, {}, (
            f"the library exposes no MPI_T counters matching the reader's pattern "
            f"({counters.pvars} pvars in all): built without per-algorithm counters "
            f"(MVAPICH2: configure --enable-mpit-pvars=mv2)"))
    ran = moved(counters, prefix, names)
    shown = ", ".join(f"{prefix}{name}={value}" for name, value in ran.items())
    if not ran:
        return Verdict(Outcome.NOT_COUNTED, ran, (
            f"no {prefix}* counter moved ({counters.matched} counters read): the collective "
            f"ran in code the library does not count"))
    missing = [prefix + name for name in expected if name not in ran]
    others = [prefix + name for name in ran if name not in (*expected, *allowed)]
    if not missing and not others:
        return Verdict(Outcome.PROVEN, ran, shown)
    if not missing:
        return Verdict(Outcome.OTHER, ran, (
            f"{', '.join(others)} moved as well: the forced algorithm did not run alone "
            f"({shown})"))
    return Verdict(Outcome.OTHER, ran, (
        f"{', '.join(missing)} did not move; the library ran another algorithm ({shown})"))
