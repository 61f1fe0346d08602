"""Collective algorithm tables per MPI family and version, and how to force one of them.

The tables are data (``data/algorithms/<family>.yaml``, one block per version range). This
module turns (family, version, collective, algorithm name) into the exact environment that
forces the algorithm, reads what the installed library offers (``ompi_info``, ``mpivars``) and
checks a run's output for evidence that the forced algorithm was in effect.

'default' always means: set nothing, let the library choose.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from functools import cache
from importlib import resources

import yaml

DEFAULT = "default"
FAMILIES = ("openmpi", "mpich", "mvapich2", "mvapich")
_CVAR_FAMILIES = ("mpich", "mvapich")  # MPICH-based: MPIR_CVAR_<COLL>_INTRA_ALGORITHM
# MPICH: keep the ch4 device from overriding the MPIR-level choice, and make an algorithm
# that cannot be applied an error instead of a silent fallback (the default is 'silent').
_CVAR_FORCE_ENV = {"MPIR_CVAR_DEVICE_COLLECTIVES": "none", "MPIR_CVAR_COLLECTIVE_FALLBACK": "error"}
# Open MPI: which component served each collective, and the MCA values as the library read them.
_OMPI_EVIDENCE_ENV = {"OMPI_MCA_coll_base_verbose": "9", "OMPI_MCA_mpi_show_mca_params": "enviro"}
_AUTOMATIC = ("auto", "sched_auto")  # MPICH's own selection: what 'default' means there


class AlgorithmError(ValueError):
    """A table, version or algorithm request that cannot be served."""


class UnknownAlgorithmError(AlgorithmError):
    """The algorithm is not in the table for that family, version and collective."""


class EvidenceError(AlgorithmError):
    """A run's output does not show the forced algorithm in effect."""


@dataclass(frozen=True)
class AlgorithmChoice:
    """Everything a check needs to run one collective with one algorithm."""

    family: str
    collective: str
    name: str  # as the library names it; 'default' = the library's own choice
    env_vars: dict[str, str]  # exactly what to export
    evidence_env: dict[str, str]  # makes the library print what it used (export as well)
    library_id: str | None  # the value given to the library (Open MPI: the enum number)


# ---------------------------------------------------------------- versions


def parse_version(text: str) -> tuple[int, ...]:
    """'4.1.4' -> (4, 1, 4); a suffix after the numbers ('5.0.0rc1', '4.1.4-2') is ignored."""
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", text)
    if not match:
        raise AlgorithmError(f"cannot read an MPI version from {text!r}: expected e.g. '4.1.4'")
    return tuple(int(part) for part in match.group(1).split("."))


def version_in(version: str, spec: str) -> bool:
    """True when ``version`` satisfies every comma-separated clause of ``spec`` ('>=4.1,<5')."""
    have = parse_version(version)
    for clause in spec.split(","):
        match = re.fullmatch(r"\s*(>=|<=|==|>|<)\s*([\d.]+)\s*", clause)
        if not match:
            raise AlgorithmError(f"bad version range clause {clause!r} in {spec!r}")
        want = parse_version(match.group(2))
        width = max(len(have), len(want))
        left, right = have + (0,) * (width - len(have)), want + (0,) * (width - len(want))
        ok = {">=": left >= right, "<=": left <= right, "==": left == right,
              ">": left > right, "<": left < right}[match.group(1)]
        if not ok:
            return False
    return True


# ---------------------------------------------------------------- tables


@cache
def load_table(family: str) -> dict:
    """The parsed data file of one family (validated: see ``_validate``)."""
    if family not in FAMILIES:
        raise AlgorithmError(f"unknown MPI family {family!r}; known: {', '.join(FAMILIES)}")
    path = resources.files("omb_suite") / "data" / "algorithms" / f"{family}.yaml"
    data = yaml.safe_load(path.read_text())
    _validate(family, data)
    return data


def _validate(family: str, data: dict) -> None:
    """Fail loudly on a malformed data file instead of serving a wrong table."""
    where = f"data/algorithms/{family}.yaml"
    if data.get("family") != family or not isinstance(data.get("blocks"), list):
        raise AlgorithmError(f"{where}: needs 'family: {family}' and a 'blocks' list")
    for block in data["blocks"]:
        version_in("0", block["versions"])  # raises on a malformed range
        for coll, entry in block["collectives"].items():
            names = list(_algorithm_ids(family, entry))
            if DEFAULT in names or len(set(names)) != len(names):
                raise AlgorithmError(f"{where} {block['versions']} {coll}: duplicate or "
                                     f"reserved ('{DEFAULT}') algorithm names {names}")


def _block(family: str, version: str) -> dict:
    data = load_table(family)
    for block in data["blocks"]:
        if version_in(version, block["versions"]):
            return block
    ranges = ", ".join(b["versions"] for b in data["blocks"])
    raise AlgorithmError(f"no {data['library']} algorithm table covers version {version} "
                         f"(tables: {ranges}); add a block to data/algorithms/{family}.yaml")


def _entry(family: str, version: str, collective: str):
    block = _block(family, version)
    if collective not in block["collectives"]:
        known = ", ".join(block["collectives"])
        raise AlgorithmError(f"{family} {version}: unknown collective {collective!r}; "
                             f"known: {known}")
    return block["collectives"][collective]


def _algorithm_ids(family: str, entry) -> dict[str, str]:
    """Algorithm name -> value the library takes, whatever the family's entry layout."""
    if family in _CVAR_FAMILIES:
        return {name: name for name in entry}
    return {str(name): str(value) for name, value in (entry.get("algorithms") or {}).items()}


def algorithms(family: str, version: str, collective: str) -> list[str]:
    """'default' first, then every algorithm the table lists for this collective."""
    return [DEFAULT, *_algorithm_ids(family, _entry(family, version, collective))]


# ---------------------------------------------------------------- forcing


def choose(family: str, version: str, collective: str, name: str) -> AlgorithmChoice:
    """The environment that forces ``name`` for ``collective`` in this family and version."""
    entry = _entry(family, version, collective)
    ids = _algorithm_ids(family, entry)
    evidence = _OMPI_EVIDENCE_ENV if family == "openmpi" else {}
    if name == DEFAULT:
        return AlgorithmChoice(family, collective, name, {}, dict(evidence), None)
    if name not in ids:
        library = load_table(family)["library"]
        raise UnknownAlgorithmError(
            f"{library} {version} has no {collective} algorithm {name!r}; valid: "
            f"{', '.join([DEFAULT, *ids])}. Pick one of these, or add it to "
            f"data/algorithms/{family}.yaml if this version has it.")
    env = _force_env(family, version, collective, entry, ids[name])
    return AlgorithmChoice(family, collective, name, env, dict(evidence), ids[name])


def _force_env(family: str, version: str, collective: str, entry, value: str) -> dict[str, str]:
    if family in _CVAR_FAMILIES:
        return {f"MPIR_CVAR_{collective.upper()}_INTRA_ALGORITHM": value, **_CVAR_FORCE_ENV}
    if family == "mvapich2":
        return {entry["variable"]: value}
    component = entry["component"]
    excluded = _block(family, version)["exclude_components"]
    env = {"OMPI_MCA_coll": "^" + ",".join(excluded)}
    if component == "tuned":  # without it coll_tuned_<coll>_algorithm is ignored
        env["OMPI_MCA_coll_tuned_use_dynamic_rules"] = "1"
    env[f"OMPI_MCA_coll_{component}_{collective}_algorithm"] = value
    return env


def _lookup(family: str, collective: str, name: str, version: str | None):
    """The table entry that defines ``name`` (in ``version``'s block, or the first that has it)."""
    if version is not None:
        return _entry(family, version, collective)
    for block in load_table(family)["blocks"]:
        entry = block["collectives"].get(collective)
        if entry is not None and name in _algorithm_ids(family, entry):
            return entry
    raise UnknownAlgorithmError(f"no {family} table has {collective} algorithm {name!r}")


def library_name(family: str, collective: str, name: str, version: str | None = None) -> str:
    """The name the library itself prints (differs only where ours must avoid 'default')."""
    if family in _CVAR_FAMILIES or name == DEFAULT:
        return name
    entry = _lookup(family, collective, name, version)
    return (entry.get("library_names") or {}).get(name, name)


# ---------------------------------------------------------------- installed library


def installed_algorithms(family: str, *, ompi_info: str = "ompi_info",
                         mpivars: str | None = None) -> dict[str, list[str]]:
    """Collective -> algorithm names (as the library names them) that the installed library
    reports: Open MPI via ``ompi_info`` (coll tuned and libnbc), MPICH/MVAPICH via ``mpivars``.
    Raises AlgorithmError where the family has no such listing (MVAPICH2)."""
    if family == "openmpi":
        return parse_ompi_info(_run([ompi_info, "--param", "coll", "all", "--level", "9"]))
    if family in _CVAR_FAMILIES:
        return parse_mpivars(_run([mpivars or "mpivars"]), family)
    raise AlgorithmError(f"{family}: the library has no tool that lists its collective "
                         "algorithms; its table cannot be checked here")


def _run(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    except FileNotFoundError as err:
        raise AlgorithmError(f"cannot run {command[0]!r}: not found; put it on PATH") from err
    if done.returncode != 0 and "MPIR_CVAR" not in done.stdout:
        raise AlgorithmError(f"{' '.join(command)} failed ({done.returncode}): "
                             f"{done.stderr[-500:]}")
    return done.stdout  # mpivars exits through MPI_Abort after printing: keep what it printed


_OMPI_PARAM = re.compile(r'parameter "coll_(tuned|libnbc)_(\w+?)_algorithm" \(')
_OMPI_VALID = re.compile(r'^\s*Valid values: (.*)$')


def parse_ompi_info(text: str) -> dict[str, list[str]]:
    """Read the enum of every coll_{tuned,libnbc}_<coll>_algorithm from ``ompi_info --param
    coll all --level 9`` output ('ignore' = no forcing, left out)."""
    found: dict[str, list[str]] = {}
    collective = None
    for line in text.splitlines():
        param = _OMPI_PARAM.search(line)
        if param:
            collective = param.group(2)
            continue
        valid = _OMPI_VALID.match(line)
        if valid and collective:
            names = re.findall(r'\d+:"([^"]+)"', valid.group(1))
            found[collective] = [n for n in names if n != "ignore"]
        collective = None if valid else collective
    return found


_DEVICE_LEVEL = ("_POSIX", "_OFI", "_UCX")  # ch4 shm/netmod knobs, not MPIR-level algorithms
_MPIVARS_LINE = re.compile(r"^\s*MPIR_CVAR_(\w+)_INTRA_ALGORITHM\s*=.*\t(.*)$")


def parse_mpivars(text: str, family: str = "mpich") -> dict[str, list[str]]:
    """Read MPIR_CVAR_<COLL>_INTRA_ALGORITHM choices from ``mpivars`` output.

    mpivars glues each choice to the end of the previous description ('...Binomial Treenb  -
    Force...'), so a choice is found as the longest known name ending the word before ' - '.
    A word that ends in no known name is returned as '?<word>': a new algorithm to add."""
    known = set(_AUTOMATIC)
    for block in load_table(family)["blocks"]:
        for names in block["collectives"].values():
            known.update(names)
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        match = _MPIVARS_LINE.match(line)
        if match and not match.group(1).endswith(_DEVICE_LEVEL):
            words = re.findall(r"(\w+)\s+- ", match.group(2))
            names = [_glued_name(word, known) for word in words]
            found[match.group(1).lower()] = [n for n in names if n not in _AUTOMATIC]
    return found


def _glued_name(word: str, known: set[str]) -> str:
    """Longest known name ending ``word``; one right after '_' is part of a longer, new name."""
    for start in range(len(word)):
        tail = word[start:]
        if tail in known and (start == 0 or word[start - 1] != "_"):
            return tail
    return "?" + word


def unsupported_reason(family: str, version: str, collective: str, name: str,
                       installed: dict[str, list[str]]) -> str | None:
    """None when the installed library knows ``name``; otherwise the message to skip with."""
    if name == DEFAULT:
        return None
    wanted = library_name(family, collective, name, version)
    offered = installed.get(collective, [])
    if wanted in offered:
        return None
    library = load_table(family)["library"]
    return (f"{library} {version} (installed) has no {collective} algorithm {wanted!r} "
            f"(it offers: {', '.join(offered) or 'none'}); not run")


# ---------------------------------------------------------------- evidence

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
    if family in _CVAR_FAMILIES:
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
    entry = _lookup("openmpi", collective, name, version)
    expected, wanted = entry["component"], library_name("openmpi", collective, name, version)
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
