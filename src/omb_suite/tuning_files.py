"""Which tuning file a family's library reads, and writing it: the dispatch on the family
record's ``tuning`` part (``kind``: one writer module each) for the versions it names.

A writer module has ``write(rules, version) -> str`` (the file's text) and
``proofs(rule, version) -> list[ProofRun]`` (the launches that prove the library read the file
and which algorithm it chose; :class:`omb_suite.tuning.ProofRun`).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from omb_suite import families, tuning_intel, tuning_mpich
from omb_suite.mpilib import version_in
from omb_suite.tuning import ProofRun, Rule, TuningError

#: ``tuning.kind`` of a family record -> its writer module.
WRITERS: dict[str, ModuleType] = {'mpich_json': tuning_mpich, 'impi_adjust': tuning_intel}


@dataclass(frozen=True)
class TuningFile:
    """A file written for one library: its name, text and the environment that loads it
    (``{file}`` in a value: the file's absolute path, :meth:`environment`)."""

    family: str
    version: str
    name: str
    text: str
    env: dict[str, str]

    def environment(self, path: str) -> dict[str, str]:
        return {k: v.format(file=path) for k, v in self.env.items()}


def support(family: str, version: str) -> str | None:
    """``None`` when a tuning file can be written for this library; else why not."""
    part = families.get(family)['tuning']
    if part['kind'] is None:
        return f"{families.get(family)['library']}: no tuning file is written ({part['why']})"
    if not version_in(version, part['versions']):
        return (f"{families.get(family)['library']} {version}: the tuning file format is known "
                f"for versions {part['versions']} only (data/families/{family}.yaml)")
    if part['kind'] not in WRITERS:
        raise TuningError(f"data/families/{family}.yaml: tuning kind {part['kind']!r} has no "
                          f"writer; known: {', '.join(WRITERS)}")
    return None


def _writer(family: str, version: str) -> ModuleType:
    why = support(family, version)
    if why is not None:
        raise TuningError(why)
    return WRITERS[families.get(family)['tuning']['kind']]


def write(family: str, version: str, rules: list[Rule]) -> TuningFile:
    """The library's own tuning file for ``rules``, or :class:`TuningError` saying why not."""
    if not rules:
        raise TuningError('no rules: nothing to write')
    part = families.get(family)['tuning']
    text = _writer(family, version).write(rules, version)
    return TuningFile(family, version, part['file'].format(version=version), text,
                      dict(part['env']))


def proofs(family: str, version: str, rule: Rule) -> list[ProofRun]:
    """The launches that prove the library read the file and applied ``rule``."""
    return _writer(family, version).proofs(rule, version)
