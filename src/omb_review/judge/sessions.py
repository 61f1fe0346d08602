"""A series' runs as sessions, and the noise of a session's value learned from the series' own
history.

A **session** is one ``reframe`` command: its runs share the perflog column ``session_id``
(``--reruns`` repeats every test inside it, so one session gives several runs). A record
written before that column existed is a session of its own (one run per series per session,
as the suite ran then).

A session's value is its **best run** (the lowest latency, the highest bandwidth). Noise on a
quiet machine only ever slows a run down, and here it comes in states: a whole launch of
``osu_latency`` is fast (0.15-0.22 us) or slow (0.38-0.47 us), one launch in five slow
(tests/review/data/trend). The mean or median of a session inherits the slow launches; its best
run is slow only when every launch was, while a slower library makes every launch slower
(the minimum as the timing estimator: Chen and Revels, "Robust benchmarking in noisy
environments", 2016). The gate judges a session's value against the values of earlier
sessions, with the noise sessions have had:

- ``between``: the spread of the baseline sessions' values (MAD, normal-scaled);
- ``within``: the spread between runs of one session (median of the pairwise differences
  within each baseline session, normal-scaled), which bounds ``between`` from below for a
  short history;
- ``resolution``: OSU prints two decimals, so 0.15 us is known to 0.005 us (3 %), never better.

All values are the series' oriented logarithms (larger = worse, a difference is a relative
change), so one noise level serves a series whatever its unit and size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAD_SIGMA = 1.4826  # MAD -> standard deviation for normal noise
#: median |x - y| of two normal draws = PAIR_MEDIAN * sigma
PAIR_MEDIAN = 0.6745 * np.sqrt(2)
#: The smallest relative noise assumed for any series (the run-to-run floor of OSU's timers).
FLOOR = 0.005


def keys(session_id: np.ndarray) -> np.ndarray:
    """Session index (0, 1, ... in order of first run) of each run, runs in time order;
    ``session_id`` as text or None per run: a run without one is a session of its own."""
    index = np.empty(len(session_id), dtype=np.int64)
    seen: dict[object, int] = {}
    for i, sid in enumerate(session_id):
        key = ("id", sid) if sid is not None else ("run", i)
        index[i] = seen.setdefault(key, len(seen))
    return index


@dataclass(frozen=True)
class Sessions:
    """Per session (in time order): its value (best run), its runs' values and where they are."""

    values: np.ndarray
    runs: list[np.ndarray]  # oriented log values of each session's runs
    members: list[np.ndarray]  # indices of each session's runs in the series' arrays

    def __len__(self) -> int:
        return len(self.values)


def group(y: np.ndarray, session: np.ndarray) -> Sessions:
    """Sessions of the runs ``y`` (oriented logs) given each run's session index."""
    ids = np.unique(session)
    members = [np.nonzero(session == k)[0] for k in ids]
    runs = [y[m] for m in members]
    return Sessions(np.array([float(np.min(r)) for r in runs]), runs, members)


def within(runs: list[np.ndarray]) -> float | None:
    """Run-to-run spread inside sessions (None without a session of two runs)."""
    diffs = [abs(a - b) for r in runs for i, a in enumerate(r) for b in r[i + 1:]]
    return float(np.median(diffs)) / PAIR_MEDIAN if diffs else None


def between(values: np.ndarray) -> float:
    """Spread of session values (MAD, normal-scaled; 0 for fewer than 2)."""
    if len(values) < 2:
        return 0.0
    return MAD_SIGMA * float(np.median(np.abs(values - np.median(values))))


def resolution(values: np.ndarray) -> float:
    """Relative size of OSU's last printed digit (0.01) at the series' typical value."""
    typical = float(np.median(np.abs(values))) if len(values) else 0.0
    return 0.01 / typical if typical > 0 else 0.0


def noise(base: Sessions, n_runs: int, values: np.ndarray) -> float:
    """The expected spread of one new session's value (best of ``n_runs`` runs) around the
    baseline (log units): the baseline sessions' spread, never below what their runs and OSU's
    resolution allow, nor below :data:`FLOOR`."""
    w = within(base.runs)
    from_runs = 0.8 * w / np.sqrt(max(n_runs, 1)) if w is not None else 0.0
    return max(between(base.values), from_runs, resolution(values) / np.sqrt(12), FLOOR)
