"""What the job's node was doing while the benchmark ran, and whether that makes it busy.

The job script prints, just before and just after the launch on its first node, its shell's
``times`` (the CPU time of its children so far) and the ``NODESTATE`` line of
``job_sources/omb_node_state.sh``. From the pair:

- ``other``: the share of the node's CPU time (all its CPUs, the whole launch) spent on
  anything but the job: the CPU the node was busy with (``/proc/stat``) minus the CPU of the
  job's own processes, the job shell's children, where the launcher forks the ranks
  (``mpirun``, ``mpiexec``). Another job, a build, a backup show here; the launcher's own
  start-up, which competes with its ranks for the cores, does not. Where the ranks are not the
  shell's children (``srun``: they are the step daemon's) it is not measurable here;
- ``steal``: the share of CPU time a hypervisor gave to other guests;
- ``cpu_wait``: the share of the launch during which some task waited for a CPU (Linux PSI),
  kept as a figure: a job's own start-up makes its ranks wait too, so it does not decide;
- ``load``: the 1-minute load average at the end, and the node's ``cpus``, for the message.

A node is **busy** when ``other`` or ``steal`` reached :data:`BUSY` during the launch; a job
with more ranks on the node than CPUs waits by its own making and is ``oversubscribed``, not
judged busy. Where ``other`` is not measurable (ranks the shell does not fork, a job script of
another shell) the load average stands in: busy when the load beyond the job's own ranks
reached a quarter of the CPUs (at least one). The state is written to the perflog column
``node_state`` (:func:`NodeState.column`) and read back by ``omb-review``
(:func:`parse_column`), which does not judge a busy run as the library's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Shares (of the node's CPU time) from which the node counts as busy: a busy loop beside a
#: 2-rank job on 2 CPUs takes about a third (docs/dev/gate.md).
BUSY = {'other': 0.15, 'steal': 0.10}
#: Without CPU accounting: load beyond the job's ranks, as a share of the CPUs (at least one).
LOAD_SHARE = 0.25
SCRIPT = 'omb_node_state.sh'
#: The file the job appends the lines to, in its stage directory.
OUTPUT = 'omb-node-state.txt'
_LINE = re.compile(r'^NODESTATE (?P<fields>.*)$')
_TIMES = re.compile(r'^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$')
_STATES = ('quiet', 'busy', 'oversubscribed', 'unknown')
_IDLE = (3, 4, 7)  # idle, iowait, steal: /proc/stat's fields that are not this guest's work


@dataclass(frozen=True)
class Snapshot:
    t: float
    cpus: int | None
    load: float | None
    psi_some_us: int | None
    cpu: tuple[int, ...]  # /proc/stat's first line, jiffies
    hz: int | None = None
    children: float | None = None  # the job shell's children's CPU seconds (``times``)


@dataclass(frozen=True)
class NodeState:
    """The node during one launch (``None``: not measurable there)."""

    state: str  # quiet | busy | oversubscribed | unknown
    cpu_wait: float | None
    steal: float | None
    load: float | None
    cpus: int | None
    ranks: int
    other: float | None = None

    @property
    def busy(self) -> bool:
        return self.state == 'busy'

    def column(self) -> str:
        """``quiet other=0.02 cpu_wait=0.04 steal=0.00 load=2.05 cpus=2 ranks=2``."""
        def fmt(name: str, value: float | None, digits: int) -> str:
            return f'{name}={"na" if value is None else f"{value:.{digits}f}"}'
        return ' '.join([self.state, fmt('other', self.other, 3),
                         fmt('cpu_wait', self.cpu_wait, 3), fmt('steal', self.steal, 3),
                         fmt('load', self.load, 2), f'cpus={self.cpus or "na"}',
                         f'ranks={self.ranks}'])

    def reason(self) -> str:
        """Why the node was busy, in words: ``the node was busy: other work took 33 % of its
        CPU time during the run (load 3.1 on 2 CPUs, 2 of them ranks)``."""
        parts = []
        if self.other is not None and self.other >= BUSY['other']:
            parts.append(f'other work took {100 * self.other:.0f} % of its CPU time during '
                         'the run')
        if self.steal is not None and self.steal >= BUSY['steal']:
            parts.append(f'the hypervisor took {100 * self.steal:.0f} % of its CPU time')
        if not parts and self.load is not None:
            parts.append(f'load {self.load:.1f} beyond its {self.ranks} ranks')
        load = f' (load {self.load:.1f} on {self.cpus} CPUs, {self.ranks} of them ranks)' \
            if self.load is not None and self.cpus else ''
        return f'the node was busy: {"; ".join(parts)}{load}'


def _number(text: str | None, kind=float):
    try:
        return kind(text) if text not in (None, '') else None
    except ValueError:
        return None


def _seconds(m: re.Match) -> float:
    """User plus system seconds of one ``times`` line (``0m1.250s 0m0.310s``)."""
    return int(m[1]) * 60 + float(m[2]) + int(m[3]) * 60 + float(m[4])


def parse_snapshots(text: str) -> list[Snapshot]:
    """The ``NODESTATE`` lines of ``text``, in order, each with the children's CPU of the
    ``times`` output just before it (malformed fields read as unknown)."""
    found, children, last = [], None, None
    for line in text.splitlines():
        m = _TIMES.match(line.strip())
        if m:  # `times` prints the shell's line, then its children's
            children, last = (_seconds(m) if last is not None else None), m
            continue
        nodestate = _LINE.match(line)
        if not nodestate:
            children = last = None
            continue
        f = dict(kv.split('=', 1) for kv in nodestate['fields'].split() if '=' in kv)
        cpu = tuple(int(x) for x in f.get('cpu', '').split(',') if x.isdigit())
        t = _number(f.get('t'))
        if t is not None:
            found.append(Snapshot(t, _number(f.get('cpus'), int), _number(f.get('load')),
                                  _number(f.get('psi_some_us'), int), cpu,
                                  _number(f.get('hz'), int), children))
        children = last = None
    return found


def _other(before: Snapshot, after: Snapshot, wall: float, cpus: int) -> float | None:
    """Share of the node's CPU time spent outside the job's processes during the launch."""
    if not (before.hz and len(before.cpu) >= 8 and len(after.cpu) >= 8) or \
            before.children is None or after.children is None:
        return None
    busy = sum(a - b for i, (a, b) in enumerate(zip(after.cpu[:8], before.cpu[:8],
                                                    strict=True)) if i not in _IDLE)
    job = after.children - before.children
    return max(busy / before.hz - job, 0.0) / (wall * cpus)


def judge(before: Snapshot, after: Snapshot, ranks: int, forked: bool = True) -> NodeState:
    """The node's state between two snapshots, with ``ranks`` of the job on it, ``forked``
    (as children of the job's shell, through its launcher) or not."""
    wall = after.t - before.t
    cpus = after.cpus or before.cpus
    wait = steal = other = None
    if wall > 0 and before.psi_some_us is not None and after.psi_some_us is not None:
        wait = max(after.psi_some_us - before.psi_some_us, 0) / (wall * 1e6)
    if len(before.cpu) >= 8 and len(after.cpu) >= 8:
        total = sum(after.cpu[:8]) - sum(before.cpu[:8])
        steal = (after.cpu[7] - before.cpu[7]) / total if total > 0 else None
    if wall > 0 and cpus and forked:
        other = _other(before, after, wall, cpus)
    if cpus and ranks > cpus:
        state = 'oversubscribed'
    elif other is None and after.load is None:
        state = 'unknown'
    elif (other is not None and other >= BUSY['other']) or (
            steal is not None and steal >= BUSY['steal']):
        state = 'busy'
    elif other is None and cpus and after.load is not None \
            and after.load - ranks >= max(1.0, LOAD_SHARE * cpus):
        state = 'busy'
    else:
        state = 'quiet'
    return NodeState(state, wait, steal, after.load, cpus, ranks, other)


def from_output(text: str, ranks: int, forked: bool = True) -> NodeState | None:
    """The state from a job's lines (first and last snapshot), ``None`` without a pair."""
    shots = parse_snapshots(text)
    return judge(shots[0], shots[-1], ranks, forked) if len(shots) >= 2 else None


def parse_column(text: str | None) -> NodeState | None:
    """Read a ``node_state`` perflog value back (``None`` for ``null`` or an unknown form)."""
    if not text or text.split(' ', 1)[0] not in _STATES:
        return None
    state, *rest = text.split()
    f = dict(kv.split('=', 1) for kv in rest if '=' in kv)
    return NodeState(state, _number(f.get('cpu_wait')), _number(f.get('steal')),
                     _number(f.get('load')), _number(f.get('cpus'), int),
                     _number(f.get('ranks'), int) or 0, _number(f.get('other')))
