"""One series' verdict (:class:`SeriesResult`, as printed and written to JSON), how the gate
chooses its two windows (:class:`Windows`) and the order of the statuses."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone

from omb_review.judge.detect import Verdict

#: Run attributes a verdict reports per window: what software was judged.
SOFTWARE = ("environ", "mpi_version", "osu_version")
#: Order of the statuses in the gate's output (``watch``: worse in too few sessions yet;
#: ``shared``: worse with the other libraries of its sessions, :mod:`.canary`).
ORDER = {"regression": 0, "watch": 1, "shared": 2, "improvement": 3, "ok": 4, "insufficient": 5}


@dataclass
class Windows:
    """How to choose the two windows (see module docstring); ``latest`` counts sessions."""

    since: datetime | None = None
    latest: int | None = None
    session_gap: timedelta = timedelta(hours=12)
    baseline: tuple[datetime, datetime] | None = None


@dataclass
class SeriesResult:
    """One series' verdict, as printed and written to JSON."""

    series: str
    keys: dict
    unit: str
    threshold: float
    verdict: Verdict
    change_points: list[dict] = field(default_factory=list)
    first_bad: dict | None = None
    failed_latest: int = 0
    #: ``{"start", "end", "runs", "sessions"}`` of the runs judged as baseline and as latest
    baseline_window: dict | None = None
    latest_window: dict | None = None
    #: ``{"baseline": {field: values}, "latest": {...}}`` of :data:`SOFTWARE`, in run order
    software: dict = field(default_factory=dict)
    in_session: bool = True  # measured in the judged session
    new: bool = False  # measured in the judged session, with no baseline to compare with
    busy_latest: int = 0  # runs of the judged sessions measured on a busy node (not judged)
    #: per judged session: its change against the baseline (oriented, relative) and z
    sessions: list[dict] = field(default_factory=list)
    #: per baseline session: its start and value (``y``: oriented log, higher is worse); the
    #: judged sessions carry their ``y`` too (what :mod:`.canary` compares libraries on)
    baseline_sessions: list[dict] = field(default_factory=list, repr=False)

    def to_json(self) -> dict:
        v = asdict(self.verdict)
        v.pop("first_bad")
        return {
            "series": self.series, **{k: plain(x) for k, x in self.keys.items()},
            "threshold": self.threshold, **v, "confidence": self.verdict.confidence,
            "first_bad_run": self.first_bad, "change_points": self.change_points,
            "failed_latest_runs": self.failed_latest, "busy_latest_runs": self.busy_latest,
            "baseline_window": self.baseline_window, "latest_window": self.latest_window,
            "judged_sessions": self.sessions,
            "software": self.software, "in_session": self.in_session, "new": self.new,
        }


def plain(value):
    return value.isoformat() if isinstance(value, datetime) else value


def stamp(us: int) -> str:
    return datetime.fromtimestamp(us / 1e6, timezone.utc).isoformat()
