"""The CI gate: judge every series' latest sessions against the sessions before them.

A series is judged by **sessions** (:mod:`omb_review.judge.sessions`: one ``reframe`` command, its
``--reruns`` included), each by its best run; runs measured on a busy node
(perflog column ``node_state``) and failed runs are left out (counted apart):

- judged sessions: the last ``confirm`` (2) sessions of the series; with ``since``, every
  session at or after it (and the sessions just before, up to ``confirm``); with ``latest``,
  the last ``latest`` sessions;
- baseline: up to ``baseline_runs`` sessions before the first judged one (or those in the
  explicit ``baseline`` time range); at least ``min_baseline``;
- each judged session is **worse** when its value is worse than the baseline's median by the
  threshold and by ``z_session`` times the noise a session has shown in this series' own history
  (:func:`omb_review.judge.sessions.noise`, widened for a short baseline);
- the series is a **regression** when each of its last ``confirm`` judged sessions is worse,
  so one session at an unlucky moment of the machine is never a finding; with fewer judged
  sessions than ``confirm``, each worse, it is a **watch** (said, not failing: the next session
  confirms or clears it). With more judged sessions than ``confirm`` (``--since`` a week ago),
  their median is judged the same way (noise shrunk by their number) and each of the last
  ``confirm`` must have moved by the threshold. Improvements alike.

A regression of one message size alone is noise more often than not: :mod:`.coherence` keeps a
verdict only where it holds over ``min_sizes`` adjacent sizes of its curve. Change points of
the session values (``detect.change_points``) date a finding and cut the baseline: before a
step that made the series worse (so a regression that began before the judged sessions is
still judged against the level before it), after one that made it better (the new normal).

The judged session of a system is its newest: runs within ``session_gap`` of its newest run
(those with the newest run's session tag, where it has one). A series measured there with
fewer than ``min_baseline`` sessions before its judged ones is ``new``: not judged, and
``omb-review check`` does not call that a pass. Each verdict keeps the software of its two
windows (environment, MPI and OSU versions) to say what was judged.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from tqdm import tqdm

from omb_review.judge import sessions
from omb_review.judge.detect import Settings, Verdict, bh_adjust, change_points, hampel
from omb_review.judge.result import ORDER, SeriesResult, Windows, stamp
from omb_review.judge.runs import Run, in_session, runs, session_starts, window
from omb_review.read.series import label, threshold_for, worse_when
from omb_suite.machine import node_state


def _judged(first_us: np.ndarray, w: Windows, s: Settings) -> int:
    """How many of the last sessions (first runs at ``first_us``, in order) are judged."""
    if w.latest is not None:
        return min(w.latest, len(first_us))
    since = 0 if w.since is None else int(len(first_us) - np.searchsorted(
        first_us, w.since.timestamp() * 1e6))
    return min(max(since, s.confirm), len(first_us)) if since or w.since is None else 0


def _baseline_sessions(first_us: np.ndarray, n_judged: int, w: Windows, s: Settings) -> range:
    end = len(first_us) - n_judged
    if w.baseline is not None:
        lo, hi = (np.searchsorted(first_us[:end], t.timestamp() * 1e6, side) for t, side in
                  zip(w.baseline, ("left", "right"), strict=True))
        return range(int(lo), int(hi))
    return range(max(end - s.baseline_runs, 0), end)


def _cut(base: range, cps: list[tuple[int, float]], w: Windows, s: Settings) -> range:
    """The baseline cut at its most recent change point: before a step that made the series
    worse (that level is not the reference, it is what is judged), after one that made it
    better (the new normal), where that leaves ``min_baseline`` sessions."""
    inside = [(i, step) for i, step in cps if base.start < i < base.stop]
    if w.baseline is not None or not inside:
        return base
    i, step = inside[-1]
    if step > 0:
        before = [j for j, _ in cps if j < i]
        cut = range(max(base.start, before[-1] if before else 0), i)
    else:
        cut = range(i, base.stop)
    return cut if len(cut) >= s.min_baseline else base


def _unlike_counts(run: Run, ok: np.ndarray, ses: sessions.Sessions, base: range,
                   n_judged: int) -> tuple[set[int], str, str] | None:
    """Baseline sessions whose OSU counts (``-i/-x``: what a mode sets) are not those of the
    newest judged session, that count, and what the others ran; ``None`` when all match."""
    if run.counts is None or not n_judged:
        return None
    newest = run.counts[ok[ses.members[len(ses) - 1][0]]]
    other = {i: run.counts[ok[ses.members[i][0]]] for i in base
             if run.counts[ok[ses.members[i][0]]] != newest}
    if not other:
        return None
    seen = sorted(set(other.values()))
    return set(other), newest, f"{len(other)} ran {', '.join(seen)}"


def _too_few(n_base: int, n_latest: int, s: Settings) -> str:
    if n_latest == 0:
        return "no session in the latest window"
    if n_base == 0:
        return "no baseline window: every session is judged (give --latest N or --baseline)"
    return f"too few baseline sessions ({n_base}, the gate needs {s.min_baseline})"


def z_needed(k: int, s: Settings) -> float:
    """``z_session``, widened for a baseline of few sessions (its noise is then a rough guess)."""
    return s.z_session * math.sqrt(1 + s.short_baseline / max(k, 1))


def judge(run: Run, w: Windows, s: Settings, overrides: list[tuple[str, float]]) -> SeriesResult:
    """Verdict for one series."""
    name = label(run.keys)
    unit = run.keys["unit"]
    sign = worse_when(unit)
    thr = threshold_for(name, s.threshold, overrides)
    measured = ~np.isnan(run.values)
    result = SeriesResult(name, run.keys, unit, thr, Verdict("insufficient"))
    if not measured.any() or sign == 0:
        result.verdict.reason = (f"unit {unit!r}: not known whether higher or lower is worse"
                                 if measured.any() else "no value: every run failed")
        return result
    session = np.arange(len(run.values)) if run.session is None else run.session
    busy = np.zeros(len(run.values), bool) if run.busy is None else run.busy
    usable = measured & ~busy & (run.values > 0)
    ok = np.nonzero(usable)[0]
    newest = session[measured].max()
    if not usable[session == newest].any():
        n = int((measured & (session == newest)).sum())
        state = _busiest(run, session == newest)
        result.busy_latest = n
        result.verdict.reason = (f"the node was busy in the judged session ({n} run"
                                 f"{'s' * (n != 1)}; {state}): run it again on a quiet node")
        result.verdict.n_latest = n
        return result
    y = sign * np.log(run.values[ok])
    ses = sessions.group(y, session[ok])
    first_us = np.array([run.times[ok[m[0]]] for m in ses.members])
    cps = change_points(hampel(np.exp(ses.values)), s)
    result.change_points = [
        {"time": stamp(first_us[i]), "change": step,
         "jobid": run.meta(int(ok[ses.members[i][0]]))["jobid"]} for i, step in cps]
    n_judged = _judged(first_us, w, s)
    base_idx = _cut(_baseline_sessions(first_us, n_judged, w, s), cps, w, s)
    unlike = _unlike_counts(run, ok, ses, base_idx, n_judged)
    if unlike:
        base_idx = [i for i in base_idx if i not in unlike[0]]
    judged_idx = range(len(ses) - n_judged, len(ses))
    base_runs = np.concatenate([ok[ses.members[i]] for i in base_idx]) if len(base_idx) else \
        np.array([], int)
    latest_runs = np.concatenate([ok[ses.members[i]] for i in judged_idx]) if n_judged else \
        np.array([], int)
    since = run.times[latest_runs].min() if len(latest_runs) else np.inf
    result.failed_latest = int((~measured & (run.times >= since)).sum())
    result.busy_latest = int((busy & measured & (run.times >= since)).sum())
    result.software = {"baseline": run.versions(base_runs), "latest": run.versions(latest_runs)}
    result.baseline_window = window(run.times[base_runs], len(base_idx))
    result.latest_window = window(run.times[latest_runs], n_judged)
    if len(base_idx) < s.min_baseline or n_judged == 0:
        reason = _too_few(len(base_idx), n_judged, s)
        if unlike and n_judged:
            reason = (f"the judged sessions ran OSU with -i/-x {unlike[1]} and {len(base_idx)} "
                      f"baseline sessions did, {s.min_baseline} needed ({unlike[2]}): a session "
                      "of another mode or count is not compared; run the judged mode "
                      f"{s.min_baseline} times, or judge with the mode of the history")
        result.verdict = Verdict("insufficient", n_baseline=len(base_idx), n_latest=n_judged,
                                 reason=reason)
        # new: too little history at all (sessions left out as busy are history too)
        measured_sessions = np.unique(session[measured])
        core = s.confirm if w.since is None and w.latest is None else n_judged
        if w.since is not None:
            core = int((first_us >= w.since.timestamp() * 1e6).sum())
        result.new = bool(n_judged and len(measured_sessions) - core < s.min_baseline)
        return result
    base = sessions.Sessions(ses.values[list(base_idx)], [ses.runs[i] for i in base_idx],
                             [ses.members[i] for i in base_idx])
    centre = float(np.median(base.values))
    need = z_needed(len(base), s)
    step = math.log1p(thr)
    worse, better = [], []
    for i in judged_idx:
        sigma = sessions.noise(base, len(ses.runs[i]), run.values[ok])
        d = float(ses.values[i]) - centre
        z = d / (sigma * math.sqrt(1 + math.pi / (2 * len(base))))
        worse.append(d >= step and z >= need)
        better.append(d <= -step and z <= -need)
        result.sessions.append({"start": stamp(first_us[i]), "runs": len(ses.runs[i]),
                                "change": math.expm1(d), "z": z, "z_needed": need,
                                "y": float(ses.values[i])})
    result.baseline_sessions = [{"start": stamp(first_us[i]), "y": float(ses.values[i])}
                                for i in base_idx]
    pooled = float(np.median(ses.values[list(judged_idx)])) - centre
    zs = [x["z"] for x in result.sessions]
    confirm = min(s.confirm, n_judged)
    if n_judged > s.confirm:  # many sessions: their median, each of the last `confirm` moved
        sigma = sessions.noise(base, int(np.median([len(ses.runs[i]) for i in judged_idx])),
                               run.values[ok])
        z_med = pooled / (sigma * math.sqrt(math.pi / 2 * (1 / n_judged + 1 / len(base))))
        moved = [x["change"] for x in result.sessions[-confirm:]]
        worse = [pooled >= step and z_med >= need and min(moved) >= thr]
        better = [pooled <= -step and z_med <= -need and max(moved) <= -thr]
        zs, confirm = [z_med], 1
    status = "ok"
    if all(worse[-confirm:]):
        status = "regression" if n_judged >= s.confirm else "watch"
        z_low = min(zs[-confirm:])
    elif all(better[-confirm:]) and n_judged >= s.confirm:
        status = "improvement"
        z_low = -max(zs[-confirm:])
    else:
        z_low = 0.0
    result.verdict = Verdict(
        status, math.expm1(pooled), _tail(z_low) if status != "ok" else 1.0, "sessions",
        len(base), n_judged, float(np.exp(sign * centre)),
        float(np.exp(sign * (pooled + centre))))
    if status in ("regression", "watch"):
        bar = centre + max(step, need * sessions.noise(base, 1, run.values[ok]))
        start = len(ses) - confirm
        while start > 0 and ses.values[start - 1] >= bar:  # the worse level began earlier
            start -= 1
        first = ok[ses.members[start][0]]
        result.first_bad = {"time": stamp(run.times[first]), **run.meta(int(first)),
                            "value": float(run.values[first])}
    return result


def _tail(z: float) -> float:
    """One-sided normal tail of ``z`` (the verdict's p-value, for its confidence)."""
    return 0.5 * math.erfc(z / math.sqrt(2))


def _busiest(run: Run, where: np.ndarray) -> str:
    """The node state of the busiest of these runs, as its perflog column says."""
    states = [st for i in np.nonzero(where)[0] if (st := run.meta(int(i)).get("node_state"))]
    parsed = [x for x in map(node_state.parse_column, states) if x is not None and x.busy]
    if not parsed:
        return "node_state busy"
    worst = max(parsed, key=lambda x: (x.other or 0, x.steal or 0, x.load or 0))
    return worst.reason().removeprefix("the node was busy: ")


def run(
    frame: pl.DataFrame, w: Windows, s: Settings, overrides: list[tuple[str, float]]
) -> list[SeriesResult]:
    """Judge every series of ``frame``; regressions first, largest change first."""
    from omb_review.judge.canary import shared
    from omb_review.judge.coherence import coherent

    series = runs(frame)
    results = [judge(r, w, s, overrides) for r in tqdm(series, desc="judging", disable=None)]
    starts = session_starts(frame, w)
    for r, result in zip(series, results, strict=True):
        result.in_session = in_session(r, starts)
        result.new = result.new and result.in_session
    if s.fdr:
        control_fdr(results, s.alpha)
    coherent(results, s)
    if s.canary and shared(results, s, w.session_gap):
        coherent(results, s)  # a run of sizes a shared size broke is judged again
    return sorted(results, key=lambda r: (ORDER[r.verdict.status], -r.verdict.change))


def control_fdr(results: list[SeriesResult], alpha: float) -> None:
    """Benjamini-Hochberg over every judged series: a verdict stands only if its adjusted p
    (q, from the weakest of its confirming sessions' z) is <= ``alpha``, so that of all series
    named at most a fraction ``alpha`` is expected to be noise, however many series the gate
    looks at."""
    tested = [r for r in results if r.verdict.method == "sessions"]
    if not tested:
        return
    q = bh_adjust([r.verdict.p_value for r in tested])
    for r, qv in zip(tested, q, strict=True):
        r.verdict.q_value = float(qv)
        if qv > alpha and r.verdict.status in ("regression", "watch", "improvement"):
            r.verdict.status, r.first_bad = "ok", None
