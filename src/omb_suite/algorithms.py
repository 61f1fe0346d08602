"""Collective algorithm tables per MPI family and version, and how to force one of them.

The tables are data (``data/algorithms/<family>.yaml``, one block per version range). This
module turns (family, version, collective, algorithm name) into the exact environment that
forces the algorithm, and reads what the installed library offers (``ompi_info``,
``mpivars``). An algorithm may need something of the build (``needs:``, MVAPICH2: the mrail
channel, multicast): :func:`unmet_needs` says why it cannot run there. Evidence that a forced
algorithm was in effect is read by :mod:`omb_suite.evidence` (:func:`check_evidence`).

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
CVAR_FAMILIES = ("mpich", "mvapich")  # MPICH-based: MPIR_CVAR_<COLL>_INTRA_ALGORITHM
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
            if family == "mvapich2":
                _validate_counted(f"{where} {block['versions']} {coll}", entry, data["needs"])


def _validate_counted(where: str, entry: dict, needs: dict) -> None:
    """MVAPICH2: every algorithm has a value and counters of its collective, known needs."""
    known = set(entry["counters"])
    for name, spec in entry["algorithms"].items():
        counters = spec["counter"] if isinstance(spec["counter"], list) else [spec["counter"]]
        unknown = ({*counters, *spec.get("also", []), *entry["stages"]} - known
                   | set(spec.get("needs", [])) - set(needs))
        if "value" not in spec or unknown:
            raise AlgorithmError(f"{where} {name}: needs a value, and counters, stages and "
                                 f"needs that the file declares (unknown: {sorted(unknown)})")


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
    """Algorithm name -> value the library takes, whatever the family's entry layout
    (MPICH: a list of names; Open MPI: name -> number; MVAPICH2: name -> {value: ...})."""
    if family in CVAR_FAMILIES:
        return {name: name for name in entry}
    return {str(name): str(spec["value"] if isinstance(spec, dict) else spec)
            for name, spec in (entry.get("algorithms") or {}).items()}


def algorithm_spec(family: str, version: str, collective: str, name: str) -> dict:
    """The table's data on one algorithm beyond its value ({} where the family has none):
    MVAPICH2's ``counter``, ``also``, ``env``, ``needs``, ``falls_back``."""
    spec = (_entry(family, version, collective).get("algorithms") or {}).get(name)
    return spec if isinstance(spec, dict) else {}


def algorithms(family: str, version: str, collective: str, *,
               features: frozenset[str] | None = None) -> list[str]:
    """'default' first, then every algorithm the table lists for this collective; with
    ``features`` (what the build has, e.g. :func:`omb_suite.mvapich2.build_features`), only
    those whose ``needs`` it meets."""
    names = _algorithm_ids(family, _entry(family, version, collective))
    if features is not None:
        names = {n: v for n, v in names.items()
                 if not set(algorithm_spec(family, version, collective, n).get("needs", []))
                 - features}
    return [DEFAULT, *names]


def unmet_needs(family: str, version: str, collective: str, name: str,
                features: frozenset[str]) -> str | None:
    """None when the build and run (``features``) can run ``name``; else the skip message."""
    if name == DEFAULT:
        return None
    missing = [n for n in algorithm_spec(family, version, collective, name).get("needs", [])
               if n not in features]
    if not missing:
        return None
    table = load_table(family)
    why = "; ".join(f"{n}: {table['needs'][n]}" for n in missing)
    return (f"{table['library']} {version}: {collective} algorithm {name!r} needs what this "
            f"build or run lacks ({why}); the library would silently run another algorithm; "
            f"not run")


# ---------------------------------------------------------------- forcing


def choose(family: str, version: str, collective: str, name: str) -> AlgorithmChoice:
    """The environment that forces ``name`` for ``collective`` in this family and version."""
    entry = _entry(family, version, collective)
    ids = _algorithm_ids(family, entry)
    evidence = (_OMPI_EVIDENCE_ENV if family == "openmpi"
                else load_table(family).get("evidence_env") or {})
    if name == DEFAULT:
        return AlgorithmChoice(family, collective, name, {}, dict(evidence), None)
    if name not in ids:
        library = load_table(family)["library"]
        raise UnknownAlgorithmError(
            f"{library} {version} has no {collective} algorithm {name!r}; valid: "
            f"{', '.join([DEFAULT, *ids])}. Pick one of these, or add it to "
            f"data/algorithms/{family}.yaml if this version has it.")
    env = _force_env(family, version, collective, entry, name, ids[name])
    return AlgorithmChoice(family, collective, name, env, dict(evidence), ids[name])


def _force_env(family: str, version: str, collective: str, entry, name: str,
               value: str) -> dict[str, str]:
    if family in CVAR_FAMILIES:
        return {f"MPIR_CVAR_{collective.upper()}_INTRA_ALGORITHM": value, **_CVAR_FORCE_ENV}
    if family == "mvapich2":
        spec = entry["algorithms"][name]  # companions: the collective's, then the algorithm's
        return {k: str(v) for k, v in {**(entry.get("env") or {}), **(spec.get("env") or {}),
                                        entry["variable"]: value}.items()}
    component = entry["component"]
    excluded = _block(family, version)["exclude_components"]
    env = {"OMPI_MCA_coll": "^" + ",".join(excluded)}
    if component == "tuned":  # without it coll_tuned_<coll>_algorithm is ignored
        env["OMPI_MCA_coll_tuned_use_dynamic_rules"] = "1"
    env[f"OMPI_MCA_coll_{component}_{collective}_algorithm"] = value
    return env


def table_entry(family: str, collective: str, name: str, version: str | None):
    """The table entry that defines ``name`` (in ``version``'s block, or the first that has it;
    for 'default' the first that has the collective)."""
    if version is not None:
        return _entry(family, version, collective)
    for block in load_table(family)["blocks"]:
        entry = block["collectives"].get(collective)
        if entry is not None and (name == DEFAULT or name in _algorithm_ids(family, entry)):
            return entry
    raise UnknownAlgorithmError(f"no {family} table has {collective} algorithm {name!r}")


def library_name(family: str, collective: str, name: str, version: str | None = None) -> str:
    """The name the library itself prints (differs only where ours must avoid 'default')."""
    if family in CVAR_FAMILIES or name == DEFAULT:
        return name
    entry = table_entry(family, collective, name, version)
    return (entry.get("library_names") or {}).get(name, name)


# ---------------------------------------------------------------- installed library


def installed_algorithms(family: str, *, ompi_info: str = "ompi_info",
                         mpivars: str | None = None) -> dict[str, list[str]]:
    """Collective -> algorithm names (as the library names them) that the installed library
    reports: Open MPI via ``ompi_info`` (coll tuned and libnbc), MPICH/MVAPICH via ``mpivars``.
    Raises AlgorithmError where the family has no such listing (MVAPICH2)."""
    if family == "openmpi":
        return parse_ompi_info(_run([ompi_info, "--param", "coll", "all", "--level", "9"]))
    if family in CVAR_FAMILIES:
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


def check_evidence(family: str, collective: str, name: str, output: str, *,
                   version: str | None = None) -> str:
    """Evidence text for the perflog ('tuned:bcast:binary_tree') that ``name`` was in effect
    in a run whose combined stdout+stderr is ``output``; EvidenceError when it was not.
    See :func:`omb_suite.evidence.check_evidence`."""
    from omb_suite import evidence  # imported here: evidence reads its tables from this module

    return evidence.check_evidence(family, collective, name, output, version=version)
