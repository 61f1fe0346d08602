"""The other libraries of a session are each library's canary: a change they share is the
machine's (or the system's), not the library's.

A machine has moments: the hypervisor, a neighbour, the kernel, a firmware setting slow every
program on the node for an hour or a day, and a library judged alone then looks as if it
changed. Sessions that measure several MPI libraries (lineages) side by side carry their own
control: the same benchmark, placement, algorithm and size measured by the other libraries
in the same sessions (as MongoDB runs fixed canary benchmarks beside the real ones).

For each regression or watch, its canaries are the series at the same position (every series
key but ``lineage`` and ``mpi_family``) of the other lineages judged in the same sessions
(each judged session matched within the session gap). In a judged session where the
canaries moved the same way by the threshold (their median change, at one noise sigma or
more), the library must have moved by the threshold **beyond** them, and that excess must
reach the z needed against the noise of both (the difference of two sessions' changes); a
library that did not is **shared** (a watch, which fails nothing, becomes ``ok``): said as
the machine's or the system's change (the other libraries moved with it), not as its own
regression. Where the canaries did not move,
the library's own verdict stands. A series with no canary (a site measuring one library)
is judged alone, as before.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import numpy as np

from .detect import Settings
from .gate import SeriesResult
from .series import SERIES_KEYS

#: Where a canary stands: a series' keys but the library's.
POSITION_KEYS = tuple(k for k in SERIES_KEYS if k not in ("lineage", "mpi_family"))
#: The canaries' own move must be at least this many of their noise sigmas to count.
CANARY_Z = 1.0


def _position(r: SeriesResult) -> tuple:
    return tuple(str(r.keys.get(k)) for k in POSITION_KEYS)


def _sigma(session: dict) -> float | None:
    """The noise sigma (log units) a session's z was computed against."""
    d, z = math.log1p(session["change"]), session["z"]
    return abs(d / z) if z else None


def _matched(judged: list[dict], other: list[dict], gap: timedelta) -> list[dict] | None:
    """``other``'s session at each of ``judged``'s (start within ``gap``), or ``None``."""
    starts = [datetime.fromisoformat(x["start"]) for x in other]
    found = []
    for x in judged:
        t = datetime.fromisoformat(x["start"])
        near = [i for i, s in enumerate(starts) if abs(s - t) <= gap]
        if not near:
            return None
        found.append(other[min(near, key=lambda i: abs(starts[i] - t))])
    return found


def _excess(own: dict, canaries: list[dict], threshold: float) -> tuple[bool, float, float]:
    """Whether the library is still worse in this session beyond its canaries, the canaries'
    median change (relative) and the library's change beyond them (relative)."""
    c_d = float(np.median([math.log1p(c["change"]) for c in canaries]))
    sigmas = [s for c in canaries if (s := _sigma(c))]
    c_sigma = float(np.median(sigmas)) if sigmas else 0.0
    step = math.log1p(threshold)
    moved = c_d >= step and (c_sigma == 0 or c_d / c_sigma >= CANARY_Z)
    d = math.log1p(own["change"])
    if not moved:
        return True, math.expm1(c_d), math.expm1(d)
    e = d - c_d
    sigma = math.hypot(_sigma(own) or 0.0, c_sigma)
    z = e / sigma if sigma else math.inf
    return e >= step and z >= own["z_needed"], math.expm1(c_d), math.expm1(e)


def shared(results: list[SeriesResult], s: Settings, gap: timedelta) -> int:
    """Mark, in place, every regression its canaries share as ``shared`` (a watch as ``ok``,
    the method saying why); returns how many. Run after :func:`omb_review.coherence.coherent`
    (and then that again: a run of sizes broken by a shared one is judged again)."""
    judged: dict[tuple, list[SeriesResult]] = {}
    for r in results:
        if r.verdict.method.startswith("sessions") and r.sessions:
            judged.setdefault(_position(r), []).append(r)
    count = 0
    for r in results:
        if r.verdict.status not in ("regression", "watch"):
            continue
        last = r.sessions[-min(s.confirm, len(r.sessions)):]
        others = [(c, m) for c in judged.get(_position(r), [])
                  if c.keys["lineage"] != r.keys["lineage"]
                  and (m := _matched(last, c.sessions, gap)) is not None]
        if not others:
            continue
        per_session = [_excess(own, [m[j] for _, m in others], r.threshold)
                       for j, own in enumerate(last)]
        names = ", ".join(sorted({str(c.keys["lineage"]) for c, _ in others}))
        moved = ", ".join(f"{100 * c:+.0f} %" for _, c, _ in per_session)
        if all(ok for ok, _, _ in per_session):
            if any(c >= r.threshold for _, c, _ in per_session):
                r.verdict.method += (f"; beyond its canaries ({names}: {moved}; this library "
                                     + ", ".join(f"{100 * e:+.0f} %" for _, _, e in per_session)
                                     + " more)")
            continue
        # a watch fails nothing: shared, it is simply not this library's
        r.verdict.status = "shared" if r.verdict.status == "regression" else "ok"
        r.first_bad = None
        r.verdict.method += (f"; shared: {names} moved {moved} in the same sessions "
                             "(the machine or the system, not this library)")
        count += 1
    return count
