"""Proof that a forced collective algorithm was in effect, read from the run's own output.

- Open MPI (``coll_base_verbose`` = 9, ``mpi_show_mca_params`` = enviro): the coll component
  that served the collective on MPI_COMM_WORLD and the MCA value as the library read it.
- MPICH / MVAPICH (``MPIR_CVAR_COLLECTIVE_FALLBACK=error``): no rejection and no "cannot be
  applied" error is the proof; the library errors out instead of silently falling back.
- MVAPICH2: prints nothing to check; runs record ``unverified``.

The environment that makes a library print its evidence is part of
:class:`omb_suite.algorithms.AlgorithmChoice`.
"""

from __future__ import annotations

import re

from omb_suite.algorithms import (
    CVAR_FAMILIES,
    DEFAULT,
    FAMILIES,
    AlgorithmError,
    component,
    library_name,
    load_table,
)


class EvidenceError(AlgorithmError):
    """A run's output does not show the forced algorithm in effect."""


_OMPI_SELECT = re.compile(
    r"^\[(?P<proc>[^\]]+)\] coll:base:comm_select: (?:new communicator: (?P<comm>\S+)"
    r"|selecting\s+(?P<comp>\w+), priority\s+(?P<prio>-?\d+), (?P<state>Enabled|Disabled))",
    re.M)


def _enabled_on_world(text: str) -> dict[str, list[tuple[int, str]]]:
    """Per process: (priority, component) enabled on MPI_COMM_WORLD, in selection order."""
    current: dict[str, str] = {}
    enabled: dict[str, list[tuple[int, str]]] = {}
    for match in _OMPI_SELECT.finditer(text):
        proc = match["proc"]
        if match["comm"]:
            current[proc] = match["comm"]
            if match["comm"] == "MPI_COMM_WORLD":
                enabled[proc] = []
        elif current.get(proc) == "MPI_COMM_WORLD" and match["state"] == "Enabled":
            enabled[proc].append((int(match["prio"]), match["comp"]))
    return enabled


def parse_openmpi_coll_evidence(text: str) -> dict[str, str]:
    """Collective -> Open MPI coll component that serves it on MPI_COMM_WORLD, from
    ``coll_base_verbose`` >= 9 output. Open MPI enables components by rising priority and each
    one installs the collectives it implements over the previous ones: the last enabled
    component implementing a collective serves it. Raises EvidenceError if processes differ."""
    table = load_table("openmpi")
    provides, wrappers = table["provides"], set(table["wrappers"])
    collectives = sorted({c for names in provides.values() for c in names})
    per_proc = {}
    for proc, enabled in _enabled_on_world(text).items():
        served = {}
        for _, comp in sorted(enabled, key=lambda item: item[0]):
            if comp in wrappers:
                continue
            for coll in provides.get(comp, collectives):
                served[coll] = comp
        per_proc[proc] = served
    distinct = {tuple(sorted(s.items())) for s in per_proc.values()}
    if len(distinct) > 1:
        raise EvidenceError(f"Open MPI processes selected different coll components: {per_proc}")
    return dict(distinct.pop()) if distinct else {}


def _shown_param(text: str, name: str) -> str | None:
    """Value of an MCA parameter as printed by mpi_show_mca_params ('[h:pid] name=value (src)')."""
    found = re.findall(rf"^\[[^\]]+\] {re.escape(name)}=(\S*) \(", text, re.M)
    return found[-1] if found else None


def check_evidence(family: str, collective: str, name: str, output: str, *,
                   version: str | None = None) -> str:
    """Evidence text for the perflog ('tuned:bcast:binary_tree') that ``name`` was in effect
    in a run whose combined stdout+stderr is ``output``; EvidenceError when it was not."""
    if family == "openmpi":
        return _openmpi_evidence(collective, name, output, version)
    if family in CVAR_FAMILIES:
        return _mpir_evidence(family, collective, name, output)
    if family == "mvapich2":
        return f"unverified:{collective}:{name}"  # MVAPICH2 prints nothing to check
    raise AlgorithmError(f"unknown MPI family {family!r}; known: {', '.join(FAMILIES)}")


def _openmpi_evidence(collective: str, name: str, output: str, version: str | None) -> str:
    served = parse_openmpi_coll_evidence(output).get(collective)
    if served is None:
        raise EvidenceError(f"Open MPI printed no coll selection for MPI_COMM_WORLD "
                            f"({collective}): export the choice's evidence_env "
                            f"(OMPI_MCA_coll_base_verbose=9)")
    if name == DEFAULT:
        return f"{served}:{collective}:{DEFAULT}"
    expected = component(collective, name, version)
    wanted = library_name("openmpi", collective, name, version)
    if served != expected:
        raise EvidenceError(
            f"Open MPI: {collective} was served by coll component '{served}', not "
            f"'{expected}', so the forced algorithm {name!r} was not in effect; exclude "
            f"'{served}' (OMPI_MCA_coll=^{served},...) or lower coll_{served}_priority")
    variable = f"coll_{expected}_{collective}_algorithm"
    _expect_param(output, variable, wanted)
    if expected == "tuned":
        _expect_param(output, "coll_tuned_use_dynamic_rules", "true")
    return f"{expected}:{collective}:{name}"


def _expect_param(output: str, variable: str, wanted: str) -> None:
    shown = _shown_param(output, variable)
    if shown is None:
        raise EvidenceError(f"Open MPI did not report {variable} at MPI_Init: export the "
                            f"choice's evidence_env (OMPI_MCA_mpi_show_mca_params=enviro)")
    if shown != wanted:
        raise EvidenceError(f"Open MPI ran with {variable}={shown}, not {wanted}: the value "
                            "was rejected (see its 'invalid value' warning) or overridden")


def _mpir_evidence(family: str, collective: str, name: str, output: str) -> str:
    """MPICH prints nothing when the forced algorithm runs; what it does print is an error
    when the CVAR value is unknown (at MPI_Init) or, with MPIR_CVAR_COLLECTIVE_FALLBACK=error,
    when the algorithm cannot be applied. No such error is the evidence."""
    library = load_table(family)["library"]
    variable = f"MPIR_CVAR_{collective.upper()}_INTRA_ALGORITHM"
    if f"Invalid {variable} value" in output:
        raise EvidenceError(f"{library} rejected {variable}={name} at MPI_Init: the installed "
                            "version does not know this algorithm")
    if "User set collective algorithm is not usable" in output or "cannot be applied" in output:
        raise EvidenceError(f"{library} could not apply {collective} algorithm {name!r} to "
                            "these arguments (COLLECTIVE_FALLBACK=error stopped a silent "
                            "fallback to another algorithm)")
    fatal = re.search(r"Fatal error in (\w+)", output)
    if fatal:
        raise EvidenceError(f"{library} aborted in {fatal.group(1)} while running {collective} "
                            f"algorithm {name!r}: no evidence it ran; see the error stack")
    return f"mpir:{collective}:{name}"
