"""A verdict holds over adjacent message sizes, or it is noise: the curve-level rule of the gate.

One noisy size of one benchmark is the commonest false alarm of a per-series gate; a real
change of the library moves a range of sizes (a protocol, a copy mechanism, an algorithm
serves a range). Among the series of one curve and metric (``osu_bw inter_node ...
bandwidth_*``), ordered by size, a regression, watch or improvement stands only inside a run of
at least ``min_sizes`` adjacent judged sizes that moved the same way (all the curve's sizes
when it has fewer), one less where a figure of the whole curve (``peak_bandwidth``,
``min_latency``: a summary of every size OSU measured, of which the perflog reports six) moved
the same way too; a curve figure stands only beside such a run of its curve, or, for a curve
of figures alone (``osu_barrier``), with ``min_sizes`` of its figures. A verdict that does not
stand becomes ``ok`` and says why (``method``: ``alone``).
"""

from __future__ import annotations

from omb_review.judge.detect import Settings
from omb_review.judge.result import SeriesResult
from omb_review.read.series import SERIES_KEYS

CURVE_KEYS = tuple(k for k in SERIES_KEYS if k not in ("perf_var", "unit"))
#: Statuses that count as the same direction for the run of adjacent sizes.
WORSE = ("regression", "watch")


def _split(perf_var: str) -> tuple[str, int | None]:
    head, _, tail = perf_var.rpartition("_")
    return (head, int(tail)) if head and tail.isdigit() else (perf_var, None)


def _runs(flags: list[bool]) -> list[list[int]]:
    """Index runs of consecutive True values."""
    found, current = [], []
    for i, flag in enumerate(flags):
        if flag:
            current.append(i)
        elif current:
            found.append(current)
            current = []
    return found + ([current] if current else [])


def _keep(members: list[SeriesResult], statuses: tuple[str, ...], need: int,
          figure: bool = False) -> set[int]:
    """Positions (in ``members``, ordered by size) inside runs of >= ``need`` of ``statuses``;
    with ``figure`` (a figure of the whole curve moved the same way, itself a summary of every
    size OSU measured, most of which the perflog does not report), one size less."""
    flags = [m.verdict.status in statuses for m in members]
    return {i for run in _runs(flags) if len(run) >= max(need - figure, 1) for i in run}


def _moved(r: SeriesResult, sign: int, confirm: int) -> list[dict] | None:
    """The last ``confirm`` judged sessions of ``r`` if each moved by its threshold in the
    direction ``sign`` (+1 worse, -1 better), else ``None``."""
    last = r.sessions[-confirm:]
    if not last or r.verdict.method != "sessions" or \
            any(sign * x["change"] < r.threshold for x in last):
        return None
    return last


def _together(members: list[SeriesResult], sign: int, need: int, s: Settings) -> set[int]:
    """Positions inside runs of >= ``need`` adjacent sizes that moved together: in each of the
    last ``confirm`` sessions every size moved by its threshold the same way, their z summed
    over the run (/sqrt of its length) reaches the z needed, and one of them does alone. A
    noisy size between two that moved is carried by them; a size alone never is."""
    moved = [_moved(m, sign, s.confirm) for m in members]
    keep: set[int] = set()
    for run in _runs([x is not None for x in moved]):
        for a in range(len(run)):
            for b in range(a + need, len(run) + 1):
                part = [moved[i] for i in run[a:b]]
                ok = all(
                    sum(sign * x[j]["z"] for x in part) / len(part) ** 0.5 >= part[0][j]["z_needed"]
                    and max(sign * x[j]["z"] for x in part) >= part[0][j]["z_needed"]
                    for j in range(len(part[0])))
                if ok:
                    keep |= set(run[a:b])
    return keep


def _promote(members: list[SeriesResult], need: int, s: Settings) -> None:
    """Series inside a run of sizes that moved together take the run's verdict."""
    for sign, status in ((1, "regression"), (-1, "improvement")):
        for i in _together(members, sign, need, s):
            r = members[i]
            if r.verdict.status in ("ok", "watch" if sign > 0 else "ok"):
                confirmed = r.verdict.n_latest >= s.confirm
                r.verdict.status = status if confirmed else ("watch" if sign > 0 else "ok")
                r.verdict.method = f"{r.verdict.method}; with its adjacent sizes"


def _demote(r: SeriesResult, why: str) -> None:
    r.verdict.status, r.first_bad = "ok", None
    r.verdict.method = f"{r.verdict.method}; alone: {why}"


def coherent(results: list[SeriesResult], s: Settings) -> None:
    """Demote, in place, every verdict that does not hold over ``s.min_sizes`` adjacent sizes."""
    curves: dict[tuple, dict[str, list[SeriesResult]]] = {}
    for r in results:
        if r.verdict.status == "insufficient":
            continue
        metric, _ = _split(str(r.keys["perf_var"]))
        curve = tuple(str(r.keys.get(k)) for k in CURVE_KEYS)
        curves.setdefault(curve, {}).setdefault(metric, []).append(r)
    for metrics in curves.values():
        sized = {m: sorted(rs, key=lambda r: _split(str(r.keys["perf_var"]))[1] or 0)
                 for m, rs in metrics.items()
                 if all(_split(str(r.keys["perf_var"]))[1] is not None for r in rs)}
        figures = [r for m, rs in metrics.items() if m not in sized for r in rs]
        held: set[str] = set()  # directions held by a run of sizes somewhere on the curve
        figure = {r.verdict.status for r in figures}  # what the curve's figures say
        for members in sized.values():
            need = min(s.min_sizes, len(members))
            _promote(members, max(need - bool(figure - {"ok", "shared"}), 1), s)
            keep_reg = _keep(members, ("regression",), need, "regression" in figure)
            keep_worse = _keep(members, WORSE, need, bool(figure & set(WORSE)))
            keep_better = _keep(members, ("improvement",), need, "improvement" in figure)
            for i, r in enumerate(members):
                status = r.verdict.status
                if status == "regression" and i not in keep_reg:
                    if i in keep_worse:
                        r.verdict.status = "watch"
                    else:
                        _demote(r, f"no adjacent size moved with it ({need} needed)")
                elif status == "watch" and i not in keep_worse:
                    _demote(r, f"no adjacent size moved with it ({need} needed)")
                elif status == "improvement" and i not in keep_better:
                    _demote(r, f"no adjacent size moved with it ({need} needed)")
            held |= {m.verdict.status for m in members} - {"ok"}
        if figures and not sized:
            figures.sort(key=lambda r: str(r.keys["perf_var"]))
            need = min(s.min_sizes, len(figures))
            worse = len([r for r in figures if r.verdict.status in WORSE]) >= need
            better = len([r for r in figures if r.verdict.status == "improvement"]) >= need
            held = ({"regression", "watch"} if worse else set()) | (
                {"improvement"} if better else set())
        for r in figures:
            status = r.verdict.status
            if status in WORSE and not held & set(WORSE):
                _demote(r, "no message size of its curve moved with it")
            elif status == "improvement" and "improvement" not in held:
                _demote(r, "no message size of its curve moved with it")
