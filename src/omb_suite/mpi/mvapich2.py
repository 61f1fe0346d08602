"""Facts about an installed MVAPICH2, read from ``mpiname -a``: version, channel (device) and
configure options, and what they mean for forcing collective algorithms.

MVAPICH2's own collectives, everything the ``MV2_*_TUNING`` variables select, are compiled
only when the channel sets ``BUILD_OSU_MVAPICH`` (``src/mpid/ch3/channels/*/subconfigure.m4``
in 2.3.7): ``ch3:mrail``, ``ch3:psm`` and ``ch3:nemesis`` with the ``ib`` network. A
``ch3:sock`` or ``ch3:nemesis`` without ``ib`` (TCP, OFI, shared memory) build runs MPICH
3.2's collectives and ignores every ``MV2_*_TUNING`` variable without a word.

MVAPICH2 also binds every rank itself, at ``MPI_Init`` (``ch3:mrail`` and ``ch3:psm``,
``MPIDI_CH3I_set_affinity``), overriding the launcher's binding: where it does, the placement
a benchmark runs with is MVAPICH2's table (``MV2_SHOW_CPU_BINDING``), not what the rank
wrapper saw before ``exec``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from omb_suite.machine.probe import ProbeError, RankPlace
from omb_suite.mpi import mpilib

#: The channels that compile MVAPICH2's own collectives, as messages name them.
MV2_COLLECTIVE_CHANNELS = ("ch3:mrail", "ch3:psm", "ch3:nemesis:ib")
#: MVAPICH2's table of every rank's binding at the end of MPI_Init, printed by rank 0 on
#: stderr (``mv2_show_cpu_affinity``; 1 lists only the ranks that share rank 0's node).
SHOW_BINDING = {"MV2_SHOW_CPU_BINDING": "2"}
#: MVAPICH2 leaves the launcher's binding alone.
AFFINITY_OFF = {"MV2_ENABLE_AFFINITY": "0"}
_BINDING = re.compile(r"^RANK:\s*(?P<rank>\d+)\s+CPU_SET:(?P<cpus>[\d\s]+);"
                      r"\s*NUMA:\s*(?P<numa>-?\d+)\s+Socket:\s*(?P<socket>-?\d+)", re.M)
_HEADER = re.compile(r"^MVAPICH2(?:-\S+)? (?P<version>\d[\w.]*)\b.*?\s(?P<device>ch\d:\S+)\s*$",
                     re.M)


class MpinameError(ValueError):
    """The text is not ``mpiname -a`` output of an MVAPICH2."""


@dataclass(frozen=True)
class Mv2Build:
    version: str
    device: str  # 'ch3:mrail', 'ch3:sock', 'ch3:nemesis:ib,tcp', ...
    configure: tuple[str, ...]  # the configure options, as mpiname prints them

    def option(self, name: str) -> str | None:
        """Value of ``--name=value`` on the configure line ('' for a bare ``--name``)."""
        for opt in self.configure:
            key, eq, value = opt.partition("=")
            if key == name:
                return value if eq else ""
        return None


def parse_mpiname(text: str) -> Mv2Build:
    """Read ``mpiname -a``: first line 'MVAPICH2 <version> <date> <device>', then a
    'Configuration' paragraph with the configure options."""
    header = _HEADER.search(text)
    if not header:
        raise MpinameError("not the output of MVAPICH2's 'mpiname -a' (expected a first line "
                           "'MVAPICH2 <version> <release date> <device>'); run mpiname -a of "
                           "the MVAPICH2 under test")
    config = re.search(r"^Configuration\n(?P<opts>.*?)(?:\n\s*\n|\Z)", text, re.M | re.S)
    options = tuple(_split_options(config["opts"])) if config else ()
    return Mv2Build(header["version"], header["device"], options)


def _split_options(line: str) -> list[str]:
    """mpiname prints configure's arguments joined by spaces, quotes removed."""
    return [opt.strip("'\"") for opt in line.split()]


def honours_mv2_tuning(device: str) -> bool:
    """mrail and psm channels, and nemesis with ``ib`` among its networks
    (``ch3:nemesis:ib,tcp``: the ib netmod's subconfigure sets BUILD_OSU_MVAPICH)."""
    channel, _, networks = device.partition(":")[2].partition(":")
    return channel in ("mrail", "psm") or (channel == "nemesis"
                                           and "ib" in networks.split(","))


def mv2_tuning_ignored_reason(build: Mv2Build) -> str | None:
    """None when ``MV2_*_TUNING`` takes effect; else why every forced algorithm would be
    silently ignored (the message to skip MVAPICH2 algorithm cases with)."""
    if honours_mv2_tuning(build.device):
        return None
    return (f"MVAPICH2 {build.version} is built for {build.device}: only "
            f"{', '.join(MV2_COLLECTIVE_CHANNELS)} compile MVAPICH2's own collectives, so "
            f"every MV2_*_TUNING variable is ignored and MPICH's collectives run; rebuild with "
            f"--with-device=ch3:mrail (or the site's fabric: ch3:psm, ch3:nemesis:ib)")


def build_features(build: Mv2Build) -> frozenset[str]:
    """What the build offers, in the words of the algorithm table's ``needs``:
    ``mrail`` (the gen2 mrail channel), ``mcast`` (configured with --enable-mcast; configure
    also enables it by itself where libibumad's headers exist, which mpiname does not show,
    so an unsaid multicast counts as absent), ``mpit_pvars`` (per-algorithm MPI_T counters)."""
    features = set()
    if build.device.startswith("ch3:mrail"):
        features.add("mrail")
    if build.option("--enable-mcast") in ("", "yes"):
        features.add("mcast")
    if build.option("--enable-mpit-pvars") not in (None, "no", "none"):
        features.add("mpit_pvars")
    return frozenset(features)


def run_features(*, nodes: int, sockets_per_node: int, mapping: str) -> frozenset[str]:
    """What a run offers, in the words of the table's ``needs``: ``multi_node``,
    ``multi_socket`` (the node has two sockets or more), ``cyclic_ranks`` (ranks dealt
    round-robin over the nodes: the suite's mapping ``node``)."""
    features = set()
    if nodes >= 2:
        features.add("multi_node")
    if sockets_per_node >= 2:
        features.add("multi_socket")
    if mapping == "node":
        features.add("cyclic_ranks")
    return frozenset(features)


@dataclass(frozen=True)
class Mv2Binding:
    """One rank's line of the MV2_SHOW_CPU_BINDING table (rank 0 prints it at MPI_Init)."""

    rank: int
    cpus: frozenset[int]
    socket: int  # -1: MVAPICH2 did not bind (MV2_ENABLE_AFFINITY=0)
    numa: int  # -1: not bound to one NUMA node, or MVAPICH2 did not tell (seen here)


def parse_cpu_binding(text: str) -> list[Mv2Binding]:
    """Read the 'RANK: 0  CPU_SET:    0; NUMA: -1  Socket: 0' lines, in rank order.

    MVAPICH2's own affinity (on by default) binds each rank in MPI_Init and overrides the
    launcher's binding; this table is what it did. Empty where it was not asked for."""
    found = {int(m["rank"]): Mv2Binding(int(m["rank"]), frozenset(map(int, m["cpus"].split())),
                                        int(m["socket"]), int(m["numa"]))
             for m in _BINDING.finditer(text)}
    return [found[rank] for rank in sorted(found)]


# ---------------------------------------------------------------- the installed library


def installed_build(search_path: str | None) -> Mv2Build:
    """The MVAPICH2 whose ``mpiname`` is first on ``search_path`` (``mpiname -a``, read once
    per run through :func:`omb_suite.mpi.mpilib.run_tool`)."""
    tool = mpilib.find_tool("mpiname", search_path)
    if tool is None:
        raise MpinameError("mpiname is not on the environment's PATH, so MVAPICH2's channel "
                           "and configure options are unknown: register MVAPICH2 with "
                           "`omb-setup --mpi mvapich2=PREFIX` (its bin/ on the PATH)")
    try:
        return parse_mpiname(mpilib.run_tool(tool, "-a"))
    except mpilib.MpiToolError as err:
        raise MpinameError(str(err)) from None


def binds_ranks(device: str) -> bool:
    """MVAPICH2 binds each rank itself at MPI_Init: the ``mrail`` and ``psm`` channels
    (``MPIDI_CH3I_set_affinity`` and its table are compiled only there)."""
    return device.partition(":")[2].partition(":")[0] in ("mrail", "psm")


def affinity_off_reason(*, tasks_per_node: int, cpus_per_node: int,
                        thread_multiple: bool) -> str | None:
    """Why MVAPICH2 must leave binding to the launcher here, or ``None``. With its affinity on
    MVAPICH2 2.3 aborts MPI_Init when a node has more ranks than CPUs ("MV2_ENABLE_AFFINITY:
    oversubscribed cores") and answers MPI_THREAD_SINGLE to MPI_Init_thread(MULTIPLE)."""
    if tasks_per_node > cpus_per_node:
        return f"{tasks_per_node} ranks share {cpus_per_node} CPUs of a node"
    if thread_multiple:
        return "the benchmark needs MPI_THREAD_MULTIPLE"
    return None


def bound_places(places: list[RankPlace], bindings: list[Mv2Binding]) -> list[RankPlace]:
    """Where the ranks ran after MVAPICH2's own binding: host from the wrapper's line, CPU set
    from MVAPICH2's table. A rank whose CPU set MVAPICH2 left as the wrapper saw it keeps the
    wrapper's line (socket and NUMA node read from sysfs); a rebound one takes MVAPICH2's
    socket and NUMA node (none where it says -1, so no placement that needs them holds)."""
    table = {b.rank: b for b in bindings}
    missing = [p.rank for p in places if p.rank not in table]
    if missing:
        raise ProbeError(f"MVAPICH2 binds the ranks itself, but its binding table "
                         f"({', '.join(f'{k}={v}' for k, v in SHOW_BINDING.items())}, on "
                         f"stderr) has no line for ranks {missing}: the run died in MPI_Init "
                         f"or the build cannot show its binding")
    return [place if table[place.rank].cpus == place.cpus else _rebound(place, table[place.rank])
            for place in places]


def _rebound(place: RankPlace, binding: Mv2Binding) -> RankPlace:
    return RankPlace(place.rank, place.host, binding.cpus, _known(binding.socket),
                     _known(binding.numa))


def _known(index: int) -> frozenset[int]:
    return frozenset({index}) if index >= 0 else frozenset()
