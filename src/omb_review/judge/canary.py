"""The other libraries of a session are each library's canary: a change they share is the
machine's (or the system's), not the library's.

A machine has moments: the hypervisor, a neighbour, the kernel, a firmware setting slow every
program on the node for an hour or a day, and a library judged alone then looks as if it
changed. Sessions that measure several MPI libraries (lineages) side by side carry their own
control: the same benchmark, placement, algorithm and size measured by the other libraries
in the same sessions (as MongoDB runs fixed canary benchmarks beside the real ones).

For each regression or watch, its canaries are the series at the same position (every series
key but ``lineage`` and ``mpi_family``) of the other lineages measured in the same sessions
(matched within the session gap). Each canary's session values are taken as its deviation
from its own baseline median (their median over the canaries: the machine's move). In a
judged session where the canaries moved the same way by the threshold (and by one sigma of
their own noise or more), the library is judged on its **difference from them**: the
library's session values minus the canaries' move, whose own baseline (median and noise,
learned from the sessions both measured) says what an unchanged library looks like beside
its canaries. Session moments common to every library cancel there (on the 2-core VM the
libraries' session values correlate at 0.65, so the difference is no noisier than the
library alone). A library whose difference still moved by the threshold and by the z
needed is still its own regression; one whose did not is **shared** (a watch, which fails
nothing, becomes ``ok``): the machine's or the system's change (the other libraries moved
with it), not its own regression. Where the canaries did not move, the library's own verdict
stands. A series without a canary measured in enough of its baseline sessions (a site
measuring one library) is judged alone, as before.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import numpy as np

from omb_review.judge import sessions as sessions_
from omb_review.judge.detect import Settings
from omb_review.judge.gate import z_needed
from omb_review.judge.result import SeriesResult
from omb_review.read.series import SERIES_KEYS

#: Where a canary stands: a series' keys but the library's.
POSITION_KEYS = tuple(k for k in SERIES_KEYS if k not in ("lineage", "mpi_family"))
#: The canaries' own move must be at least this many of their noise sigmas to count.
CANARY_Z = 1.0


def _position(r: SeriesResult) -> tuple:
    return tuple(str(r.keys.get(k)) for k in POSITION_KEYS)


def _when(x: dict) -> datetime:
    return datetime.fromisoformat(x["start"])


class _Canary:
    """One canary series: its deviation from its own baseline median at any of its sessions,
    and its own session noise."""

    def __init__(self, c: SeriesResult) -> None:
        base = np.array([x["y"] for x in c.baseline_sessions])
        self.centre = float(np.median(base))
        self.sigma = max(sessions_.between(base), sessions_.FLOOR)
        self.points = [(_when(x), x["y"] - self.centre)
                       for x in [*c.baseline_sessions, *c.sessions]]
        self.lineage = str(c.keys["lineage"])

    def at(self, t: datetime, gap: timedelta) -> float | None:
        near = [(abs(s - t), d) for s, d in self.points if abs(s - t) <= gap]
        return min(near)[1] if near else None


def _move(canaries: list[_Canary], t: datetime, gap: timedelta) -> float | None:
    """The canaries' median deviation at the session starting at ``t``."""
    found = [d for c in canaries if (d := c.at(t, gap)) is not None]
    return float(np.median(found)) if found else None


def _verdicts(r: SeriesResult, canaries: list[_Canary], s: Settings,
              gap: timedelta) -> list[tuple[bool, float | None, float]] | None:
    """Per judged session (the last ``confirm``): whether the library is still worse, the
    canaries' move and the library's move beyond them (relative); ``None`` when too few of its
    baseline sessions have a canary to learn the difference from."""
    diffs = []
    for x in r.baseline_sessions:
        move = _move(canaries, _when(x), gap)
        if move is not None:
            diffs.append(x["y"] - move)
    if len(diffs) < s.min_baseline:
        return None
    e = np.array(diffs)
    centre, sigma = float(np.median(e)), max(sessions_.between(e), sessions_.FLOOR)
    need = z_needed(len(e), s)
    step = math.log1p(r.threshold)
    c_sigma = float(np.median([c.sigma for c in canaries]))
    out = []
    for x in r.sessions[-min(s.confirm, len(r.sessions)):]:
        move = _move(canaries, _when(x), gap)
        if move is None or move < step or move < CANARY_Z * c_sigma:
            out.append((True, move, math.expm1(x["y"] - centre - (move or 0.0))))
            continue
        excess = x["y"] - move - centre
        out.append((excess >= step and excess / sigma >= need, move, math.expm1(excess)))
    return out


def shared(results: list[SeriesResult], s: Settings, gap: timedelta) -> int:
    """Mark, in place, every regression its canaries share as ``shared`` (a watch as ``ok``,
    the method saying why); returns how many. Run after :func:`omb_review.judge.coherence.coherent`
    (and then that again: a run of sizes broken by a shared one is judged again)."""
    judged: dict[tuple, list[SeriesResult]] = {}
    for r in results:
        if r.verdict.method.startswith("sessions") and r.sessions and r.baseline_sessions:
            judged.setdefault(_position(r), []).append(r)
    count = 0
    for r in results:
        if r.verdict.status not in ("regression", "watch") or not r.baseline_sessions:
            continue
        canaries = [_Canary(c) for c in judged.get(_position(r), [])
                    if c.keys["lineage"] != r.keys["lineage"]]
        per_session = _verdicts(r, canaries, s, gap) if canaries else None
        if per_session is None or all(m is None or m < math.log1p(r.threshold)
                                      for _, m, _ in per_session):
            continue
        names = ", ".join(sorted({c.lineage for c in canaries}))
        moved = ", ".join("-" if m is None else f"{100 * math.expm1(m):+.0f} %"
                          for _, m, _ in per_session)
        beyond = ", ".join(f"{100 * e:+.0f} %" for _, _, e in per_session)
        if all(ok for ok, _, _ in per_session):
            r.verdict.method += f"; beyond its canaries ({names}: {moved}; this library {beyond})"
            continue
        # a watch fails nothing: shared, it is simply not this library's
        r.verdict.status = "shared" if r.verdict.status == "regression" else "ok"
        r.first_bad = None
        r.verdict.method += (f"; shared: {names} moved {moved} in the same sessions, this "
                             f"library {beyond} beyond them (the machine or the system, not "
                             "this library)")
        count += 1
    return count
