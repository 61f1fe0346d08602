"""Runs an MPI library is known to hang in (``data/known_hangs.yaml``).

Two treatments, both naming the defect and its evidence, neither a flaky verdict:

- :func:`known_hang`: programs that hang in most affected runs are skipped before the run;
- :func:`hang_after_result`: in every other program of an affected run the hang, if it
  comes, comes after the whole result was printed; the check launches it under a bounded
  limit and keeps a result that is complete (:meth:`omb_suite.rfm.base.OsuRunBase.validate`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from omb_suite import yamldata
from omb_suite.mpi import families
from omb_suite.mpi.mpilib import parse_version
from omb_suite.mpi.records import Count, Fields, Flag, Items, RecordError, Text, check

WHERE = 'data/known_hangs.yaml'
#: One rule: the affected family before a version (and device, node count), the programs
#: skipped, whether others may hang after their result, why and the evidence.
RULE = Fields(fields={
    'name': Text(), 'family': Text(), 'before': Text(), 'device': Text(),
    'min_nodes': Count(), 'skip': Items(of=Text()), 'after_result': Flag(), 'why': Text(),
    'evidence': Text()}, optional=('device', 'min_nodes', 'skip', 'after_result'))


@dataclass(frozen=True)
class Run:
    """What decides whether a run can hang: the program, the library and the job's nodes."""

    program: str
    family: str | None
    version: str | None
    device: str | None
    nodes: int


@cache
def _rules() -> list[dict[str, Any]]:
    text = resources.files('omb_suite').joinpath(WHERE).read_text()
    rules = yamldata.load(text)['hangs']
    for i, rule in enumerate(rules):
        validate(rule, f'hangs[{i}]')
    return rules


def validate(rule: Any, key: str) -> None:
    """Refuse a rule that does not fit :data:`RULE` or names no family record."""
    check(WHERE, rule, RULE, key)
    if rule['family'] not in families.names():
        raise RecordError(f"{WHERE}: {key}.family: {rule['family']!r} is no record of "
                          f'data/families/ (known: {", ".join(families.names())})')


def affects(rule: dict[str, Any], run: Run) -> bool:
    """The run's library, device and node count are the affected ones (any program). An
    unknown version or device never matches: only a known-affected library is treated."""
    if run.version is None or parse_version(run.version) >= parse_version(rule['before']):
        return False
    return (run.family == rule['family'] and run.nodes >= rule.get('min_nodes', 1)
            and ('device' not in rule or run.device == rule['device']))


def _describe(rule: dict[str, Any], run: Run) -> str:
    device = f' {run.device}' if run.device else ''
    return (f'{run.family} {run.version}{device} is known to hang in {run.program} on '
            f'{rule.get("min_nodes", 1)}+ nodes: {" ".join(rule["why"].split())} '
            f'[{" ".join(rule["evidence"].split())}]; fixed in {run.family} {rule["before"]}')


def known_hang(run: Run) -> str | None:
    """Why ``run`` is skipped (library, defect, evidence): its program hangs in most
    affected runs; else None."""
    for rule in _rules():
        if affects(rule, run) and run.program in rule.get('skip', []):
            return _describe(rule, run)
    return None


def hang_after_result(run: Run) -> str | None:
    """The defect that can keep ``run`` from exiting after it printed its whole result
    (library, defect, evidence), or None."""
    for rule in _rules():
        if affects(rule, run) and rule.get('after_result'):
            return _describe(rule, run)
    return None
