"""What the job's node was doing while the benchmark ran, and whether that makes it busy.

``job_sources/omb_node_state.sh`` prints one ``NODESTATE`` line before the launch and one after
it, on the job's first node. From the pair:

- ``cpu_wait``: the share of the run during which at least one runnable task waited for a CPU
  (Linux pressure stall information, ``/proc/pressure/cpu`` "some"). The benchmark's ranks spin
  on their cores, so on a node with a core per rank anything else that wants a CPU, for long,
  shows here: another job, a build, a backup;
- ``steal``: the share of CPU time a hypervisor gave to other guests (``/proc/stat``);
- ``load``: the 1-minute load average at the end, and the node's ``cpus``, for the message.

A node is **busy** when ``cpu_wait`` or ``steal`` reached :data:`BUSY` during the run; a job
with more ranks on the node than CPUs waits by its own making and is ``oversubscribed``, not
judged busy. Without PSI (older kernels) the load average stands in: busy when the load beyond
the job's own ranks reached a quarter of the CPUs (at least one). The state is written to the
perflog column ``node_state`` (:func:`NodeState.column`) and read back by ``omb-review``
(:func:`parse_column`), which does not judge a busy run as the library's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Shares of the run (cpu_wait, steal) from which the node counts as busy (docs/dev/gate.md:
#: measured on quiet and loaded runs).
BUSY = {'cpu_wait': 0.10, 'steal': 0.10}
#: Without PSI: load beyond the job's ranks, as a share of the CPUs (at least one task).
LOAD_SHARE = 0.25
SCRIPT = 'omb_node_state.sh'
#: The file the job appends the two lines to, in its stage directory.
OUTPUT = 'omb-node-state.txt'
_LINE = re.compile(r'^NODESTATE (?P<fields>.*)$', re.M)
_STATES = ('quiet', 'busy', 'oversubscribed', 'unknown')


@dataclass(frozen=True)
class Snapshot:
    t: float
    cpus: int | None
    load: float | None
    psi_some_us: int | None
    cpu: tuple[int, ...]  # /proc/stat's first line, jiffies


@dataclass(frozen=True)
class NodeState:
    """The node during one run (``None``: not measurable there)."""

    state: str  # quiet | busy | oversubscribed | unknown
    cpu_wait: float | None
    steal: float | None
    load: float | None
    cpus: int | None
    ranks: int

    @property
    def busy(self) -> bool:
        return self.state == 'busy'

    def column(self) -> str:
        """``quiet cpu_wait=0.004 steal=0.000 load=2.05 cpus=2 ranks=2`` (the perflog column)."""
        def fmt(name: str, value: float | None, digits: int) -> str:
            return f'{name}={"na" if value is None else f"{value:.{digits}f}"}'
        return ' '.join([self.state, fmt('cpu_wait', self.cpu_wait, 3), fmt('steal', self.steal, 3),
                         fmt('load', self.load, 2), f'cpus={self.cpus or "na"}',
                         f'ranks={self.ranks}'])

    def reason(self) -> str:
        """Why the node was busy, in words: ``the node was busy: some task waited for a CPU
        during 48 % of the run (load 7.9 on 2 CPUs)``."""
        parts = []
        if self.cpu_wait is not None and self.cpu_wait >= BUSY['cpu_wait']:
            parts.append(f'some task waited for a CPU during {100 * self.cpu_wait:.0f} % of '
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


def parse_snapshots(text: str) -> list[Snapshot]:
    """The ``NODESTATE`` lines of ``text``, in order (malformed fields read as unknown)."""
    found = []
    for m in _LINE.finditer(text):
        f = dict(kv.split('=', 1) for kv in m['fields'].split() if '=' in kv)
        cpu = tuple(int(x) for x in f.get('cpu', '').split(',') if x.isdigit())
        t = _number(f.get('t'))
        if t is None:
            continue
        found.append(Snapshot(t, _number(f.get('cpus'), int), _number(f.get('load')),
                              _number(f.get('psi_some_us'), int), cpu))
    return found


def judge(before: Snapshot, after: Snapshot, ranks: int) -> NodeState:
    """The node's state between two snapshots, with ``ranks`` of the job on it."""
    wall = after.t - before.t
    cpus = after.cpus or before.cpus
    wait = steal = None
    if wall > 0 and before.psi_some_us is not None and after.psi_some_us is not None:
        wait = max(after.psi_some_us - before.psi_some_us, 0) / (wall * 1e6)
    if len(before.cpu) >= 8 and len(after.cpu) >= 8:
        total = sum(after.cpu[:8]) - sum(before.cpu[:8])
        steal = (after.cpu[7] - before.cpu[7]) / total if total > 0 else None
    if cpus and ranks > cpus:
        state = 'oversubscribed'
    elif wait is None and after.load is None:
        state = 'unknown'
    elif (wait is not None and wait >= BUSY['cpu_wait']) or (
            steal is not None and steal >= BUSY['steal']):
        state = 'busy'
    elif wait is None and cpus and after.load is not None \
            and after.load - ranks >= max(1.0, LOAD_SHARE * cpus):
        state = 'busy'
    else:
        state = 'quiet'
    return NodeState(state, wait, steal, after.load, cpus, ranks)


def from_output(text: str, ranks: int) -> NodeState | None:
    """The state from a job's ``NODESTATE`` lines (first and last), ``None`` without a pair."""
    shots = parse_snapshots(text)
    return judge(shots[0], shots[-1], ranks) if len(shots) >= 2 else None


def parse_column(text: str | None) -> NodeState | None:
    """Read a ``node_state`` perflog value back (``None`` for ``null`` or an unknown form)."""
    if not text or text.split(' ', 1)[0] not in _STATES:
        return None
    state, *rest = text.split()
    f = dict(kv.split('=', 1) for kv in rest if '=' in kv)
    return NodeState(state, _number(f.get('cpu_wait')), _number(f.get('steal')),
                     _number(f.get('load')), _number(f.get('cpus'), int),
                     _number(f.get('ranks'), int) or 0)
