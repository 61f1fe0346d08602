"""Evidence that a forced collective algorithm was in effect, read from a run's output, the
way the family record's ``proof.kind`` says (:data:`PROOF_KINDS`).

Open MPI: which coll component served the collective and the MCA value it read (its own
verbose output). MPICH / MVAPICH 4: no error from ``MPIR_CVAR_COLLECTIVE_FALLBACK=error``.
MVAPICH2: the per-algorithm MPI_T counters that our reader (``job_sources/mpit_reader.c``) prints
at ``MPI_Finalize`` (:mod:`omb_suite.mpi.mpit`). Intel MPI (kind ``none``): nothing shows which
preset ran; the value as the library read it is checked and the case is recorded as
:data:`FORCED_NOT_PROVEN`. The tables, names and errors are those of
:mod:`omb_suite.mpi.algorithms`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from omb_suite.mpi import families, mpit
from omb_suite.mpi.algorithms import (
    DEFAULT,
    EvidenceError,
    choose,
    library_name,
    load_table,
    table_entry,
)

#: Prefix of what check_evidence returns when a library cannot prove anything (MVAPICH2
#: without MPI_T counters): the run passes, but the algorithm is not proven.
NO_EVIDENCE = "no-evidence"
#: Prefix of what check_evidence returns for a library that cannot show which algorithm ran
#: (Intel MPI): forced, not proven; the perflog's algorithm_evidence says so.
FORCED_NOT_PROVEN = "forced-not-proven"
#: Prefix of the evidence of a 'default' case whose library version has no table: the library
#: ran its own choice, and the text names the missing table.
NO_TABLE = "no-table"

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


def parse_openmpi_coll_evidence(text: str, family: str = "openmpi") -> dict[str, str]:
    """Collective -> Open MPI coll component that serves it on MPI_COMM_WORLD, from
    ``coll_base_verbose`` >= 9 output. Open MPI enables components by rising priority and each
    one installs the collectives it implements over the previous ones: the last enabled
    component implementing a collective serves it; which component provides what is the
    family's own table (``provides``, ``wrappers``). Raises EvidenceError if processes differ
    or the family has no table."""
    if families.get(family)["algorithms"] is None:
        raise EvidenceError(
            f"{family}: its proof ({families.get(family)['proof']['kind']}) reads which coll "
            f"component served a collective from the family's own algorithm table (provides, "
            f"wrappers), and data/families/{family}.yaml names none (algorithms: null): add "
            f"one, or give the record proof kind 'none'")
    table = load_table(family)
    provides, wrappers = table["provides"], set(table["wrappers"])
    collectives = sorted({c for names in provides.values() for c in names})
    per_proc = {}
    for proc, enabled in _enabled_on_world(text).items():
        served = {}
        for _, component in sorted(enabled, key=lambda item: item[0]):
            if component in wrappers:
                continue
            for coll in provides.get(component, collectives):
                served[coll] = component
        per_proc[proc] = served
    distinct = {tuple(sorted(s.items())) for s in per_proc.values()}
    if len(distinct) > 1:
        raise EvidenceError(f"Open MPI processes selected different coll components: {per_proc}")
    return dict(distinct.pop()) if distinct else {}


def shown_param(text: str, name: str) -> str | None:
    """Value of an MCA parameter as printed by mpi_show_mca_params ('[h:pid] name=value (src)')."""
    found = re.findall(rf"^\[[^\]]+\] {re.escape(name)}=(\S*) \(", text, re.M)
    return found[-1] if found else None


def check_evidence(family: str, collective: str, name: str, output: str, *,
                   version: str | None = None) -> str:
    """Evidence text for the perflog ('tuned:bcast:binary_tree') that ``name`` was in effect
    in a run whose combined stdout+stderr is ``output``; EvidenceError when it was not."""
    kind = families.get(family)["proof"]["kind"]
    return PROOF_KINDS[kind](family, collective, name, output, version)


def _openmpi_evidence(family: str, collective: str, name: str, output: str,
                      version: str | None) -> str:
    served = parse_openmpi_coll_evidence(output, family).get(collective)
    if served is None:
        raise EvidenceError(f"Open MPI printed no coll selection for MPI_COMM_WORLD "
                            f"({collective}): export the choice's evidence_env "
                            f"(OMPI_MCA_coll_base_verbose=9)")
    if name == DEFAULT:
        return f"{served}:{collective}:{DEFAULT}"
    entry = table_entry(family, collective, name, version)
    expected, wanted = entry["component"], library_name(family, collective, name, version)
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
    shown = shown_param(output, variable)
    if shown is None:
        raise EvidenceError(f"Open MPI did not report {variable} at MPI_Init: export the "
                            f"choice's evidence_env (OMPI_MCA_mpi_show_mca_params=enviro)")
    if shown != wanted:
        raise EvidenceError(f"Open MPI ran with {variable}={shown}, not {wanted}: the value "
                            "was rejected (see its 'invalid value' warning) or overridden")


def _mpir_evidence(family: str, collective: str, name: str, output: str,
                   version: str | None) -> str:
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
    if re.search(r"Fatal error in internal_Init: Other MPI error,\s*$", output, re.M):
        raise EvidenceError(f"{library} refused {variable}={name} at MPI_Init without a reason "
                            "(MPICH 5 prints no error stack for an unknown CVAR value): the "
                            "installed version does not know this algorithm")
    fatal = re.search(r"Fatal error in (\w+)", output)
    if fatal:
        raise EvidenceError(f"{library} aborted in {fatal.group(1)} while running {collective} "
                            f"algorithm {name!r}: no evidence it ran; see the error stack")
    return f"mpir:{collective}:{name}"


def _mpit_evidence(family: str, collective: str, name: str, output: str,
                   version: str | None) -> str:
    """MVAPICH2: the forced algorithm's MPI_T counter moved and no other one of the
    collective did (but the stages it is known to call: ``also``). A library without such
    counters proves nothing: the evidence says so (NO_EVIDENCE) instead of failing."""
    try:
        counters = mpit.parse_counters(output)
    except mpit.MpitError as err:
        raise EvidenceError(str(err)) from None
    entry = table_entry(family, collective, name, version)
    prefix = load_table(family)["counter_prefix"].format(collective=collective)
    known = entry["counters"]
    if name == DEFAULT:
        if counters.matched == 0:
            return f"{NO_EVIDENCE}:{collective}:{DEFAULT}"
        ran = mpit.moved(counters, prefix, known)
        return f"mpit:{collective}:{DEFAULT}:{'+'.join(prefix + n for n in ran) or 'none'}"
    spec = entry["algorithms"][name]
    expected = tuple(spec["counter"]) if isinstance(spec["counter"], list) else (spec["counter"],)
    verdict = mpit.judge(counters, prefix, known, expected,
                         (*entry.get("stages", ()), *spec.get("also", ())))
    if verdict.outcome is mpit.Outcome.PROVEN:
        return f"mpit:{collective}:{name}:{'+'.join(prefix + c for c in expected)}"
    if verdict.outcome is mpit.Outcome.NO_COUNTERS:
        return f"{NO_EVIDENCE}:{collective}:{name}"
    forced = f"{entry['variable']}={spec['value']}"
    hint = f"; known fallback: {spec['falls_back']}" if spec.get("falls_back") else ""
    raise EvidenceError(f"{load_table(family)['library']} {collective} algorithm {name!r} "
                        f"({forced}) not proven: {verdict.message}{hint}")



def _unproven(family: str, collective: str, name: str, output: str,
              version: str | None) -> str:
    """A library that shows nothing of the algorithm that ran: where it echoes the variable as
    read (``proof.read_back``), the value must be the forced one; the result says
    FORCED_NOT_PROVEN, never a proof."""
    pattern = families.get(family)["proof"]["read_back"]
    if name != DEFAULT and pattern and version:
        forced = choose(family, version, collective, name).env_vars
        for variable, value in forced.items():
            shown = re.findall(pattern.format(variable=re.escape(variable)), output, re.M)
            if not shown or shown[-1] != value:
                raise EvidenceError(
                    f"{load_table(family)['library']} did not report {variable}={value} at "
                    f"MPI_Init (it printed {shown[-1] if shown else 'nothing'}): export the "
                    f"choice's evidence_env {families.get(family)['proof']['env']}")
    return f"{FORCED_NOT_PROVEN}:{collective}:{name}"


#: ``proof.kind`` of a family record -> the reader of a run's output.
PROOF_KINDS: dict[str, Callable[[str, str, str, str, str | None], str]] = {
    "coll_verbose": _openmpi_evidence,
    "fallback_error": _mpir_evidence,
    "mpit": _mpit_evidence,
    "none": _unproven,
}
