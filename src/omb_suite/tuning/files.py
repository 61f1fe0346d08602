"""Which tuning file a family's library reads, and writing it: the dispatch on the family
record's ``tuning`` part (``kind``: one writer module each) for the versions it names.

A writer module has ``write(rules, version) -> str`` (the file's text),
``proofs(rule, version) -> list[ProofRun]`` (the launches that prove the library read the file
and which algorithm it chose; :class:`omb_suite.tuning.rules.ProofRun`) and ``touches(rules,
version) -> (collectives, words)``: every collective the load can change (the proving check
measures each of them with and without it) and what it changes. A writer whose load cannot be
proven safe has ``unsafe(rules, version) -> str | None`` (the reason). A format that needs more
than the record's fixed variables has ``extras(rules, version, text) -> (files, env)``: files
written beside the main one (name -> text) and variables (``{dir}``: their directory), e.g.
Intel MPI's variables are the file's own lines.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import ModuleType

from omb_suite.mpi import families
from omb_suite.mpi.mpilib import version_in
from omb_suite.tuning import intel as tuning_intel
from omb_suite.tuning import mpich as tuning_mpich
from omb_suite.tuning import openmpi as tuning_openmpi
from omb_suite.tuning.rules import ProofRun, Rule, Step, TuningError

#: ``tuning.kind`` of a family record -> its writer module.
WRITERS: dict[str, ModuleType] = {'ompi_rules': tuning_openmpi, 'mpich_json': tuning_mpich,
                                  'impi_adjust': tuning_intel}


@dataclass(frozen=True)
class TuningFile:
    """A file written for one library: its name, text, the files written beside it
    (``companions``: name -> text), the environment that loads them (``{file}`` in a
    value: the file's absolute path, ``{dir}``: its directory; :meth:`environment`): the
    record's ``tuning.env`` and the writer's extras, nothing else (no component excluded, unlike
    a forced algorithm), and what that load changes (``touches``: the collectives; ``changes``:
    in words)."""

    family: str
    version: str
    name: str
    text: str
    env: dict[str, str]
    companions: dict[str, str] = field(default_factory=dict)
    touches: tuple[str, ...] = ()
    changes: str = ''

    def environment(self, path: str) -> dict[str, str]:
        return {k: v.format(file=path, dir=os.path.dirname(path)) for k, v in self.env.items()}


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
    writer = _writer(family, version)
    text = writer.write(rules, version)
    files, env = writer.extras(rules, version, text) if hasattr(writer, 'extras') else ({}, {})
    touched, changes = writer.touches(rules, version)
    return TuningFile(family, version, part['file'].format(version=version), text,
                      {**part['env'], **env}, files, tuple(touched), changes)


def unsafe(family: str, version: str, rules: list[Rule]) -> str | None:
    """Why the load of a file for ``rules`` cannot be proven safe (never slower than the
    default) for some collective, from the writer's ``unsafe``; ``None`` where it can be."""
    writer = _writer(family, version)
    return writer.unsafe(rules, version) if hasattr(writer, 'unsafe') else None


def unwritable(family: str, version: str, collective: str, algorithm: str) -> str | None:
    """Why the library's file cannot name ``algorithm`` for ``collective`` (e.g. an MPICH
    algorithm that takes parameters in the file), ``None`` where it can: the writer is asked
    for a file with that one algorithm."""
    try:
        _writer(family, version).write([Rule(collective, 2, 1, (Step(0, algorithm),), 1)],
                                       version)
    except TuningError as err:
        return str(err)
    return None


def proofs(family: str, version: str, rule: Rule) -> list[ProofRun]:
    """The launches that prove the library read the file and applied ``rule``."""
    return _writer(family, version).proofs(rule, version)
