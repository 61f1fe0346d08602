"""Facts that a ReFrame site configuration declares about its partitions.

A partition declares the peak of its interconnect link in ``extras: {link_peak_mbs: N}``
(MB/s, the unit OSU prints); the Hockney table shows fitted bandwidth as a percentage of it.
The files are read by ReFrame's own loader (Python ``site_configuration``, YAML with its
template bindings, several files merged as ``-C a:b`` would).
"""

from __future__ import annotations

import os
from pathlib import Path

PEAK_KEY = "link_peak_mbs"
#: How many times worse than the fleet's a figure of a ``--mode fleet`` run is slow.
FLEET_TOLERANCE_KEY = "fleet_tolerance"


class ConfigError(ValueError):
    """The configuration cannot be read; the message says which file and why."""


def default_config() -> list[Path]:
    """The files ReFrame itself would read: ``RFM_CONFIG_FILES``."""
    return [Path(f) for f in os.environ.get("RFM_CONFIG_FILES", "").split(":") if f]


def _load(paths: list[Path]):
    from reframe.core.config import load_config  # ReFrame's import is not free: only here

    for path in paths:
        if not path.is_file():
            raise ConfigError(f"{path}: no such ReFrame configuration file")
    try:
        return load_config(*map(str, paths))
    except Exception as err:  # a site file can raise anything: say which files
        raise ConfigError(f"{':'.join(map(str, paths))}: ReFrame cannot load it: {err}") from err


def perflog_dir(paths: list[Path]) -> Path:
    """The directory the configuration's ``filelog`` perflog handler writes under (its
    ``basedir``; the last one where several files declare one): where ``omb-review`` must read
    and ``scripts/upgrade.sh`` keeps its state."""
    found = [h.get("basedir", "./perflogs") for entry in _load(paths).get("logging") or []
             for h in entry.get("handlers_perflog", []) if h.get("type") == "filelog"]
    if not found:
        raise ConfigError(f"{':'.join(map(str, paths))}: no 'filelog' perflog handler: ReFrame "
                          "writes no perflog for omb-review to read; add one (e.g. "
                          "perflog_schema.handler('/shared/perflogs'), docs/perflogs.md)")
    where = Path(os.path.expandvars(found[-1]))
    if not where.is_absolute():
        raise ConfigError(f"the perflog handler's basedir {found[-1]!r} is relative (ReFrame "
                          "puts it under each system's prefix; './perflogs' is ReFrame's own "
                          "default, where a configuration declares none): give your "
                          "configuration a perflog handler with an absolute path, e.g. "
                          "perflog_schema.handler('/shared/perflogs') (docs/perflogs.md)")
    return where


def partition_extras(paths: list[Path], key: str) -> dict[str, float]:
    """``{"system:partition": value}`` for every partition whose ``extras`` declare ``key``."""
    systems = _load(paths).get("systems") or []
    found = {}
    for system in systems:
        for part in system.get("partitions", []):
            value = part.get("extras", {}).get(key)
            if value is not None:
                found[f"{system['name']}:{part['name']}"] = float(value)
    return found


def link_peaks(paths: list[Path]) -> dict[str, float]:
    """``{"system:partition": MB/s}`` for every partition that declares ``link_peak_mbs``."""
    return partition_extras(paths, PEAK_KEY)


def fleet_tolerances(paths: list[Path]) -> dict[str, float]:
    """``{"system:partition": factor}`` for every partition that declares
    ``fleet_tolerance`` (the fleet check's own tolerance there)."""
    return partition_extras(paths, FLEET_TOLERANCE_KEY)
