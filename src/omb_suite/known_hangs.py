"""Runs an MPI library is known to hang in (``data/known_hangs.yaml``): a check skips a
matching case before the run, with the defect and its evidence, rather than waiting for its
time limit and failing only sometimes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from omb_suite.mpilib import parse_version


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
    text = resources.files('omb_suite').joinpath('data/known_hangs.yaml').read_text()
    return yaml.safe_load(text)['hangs']


def matches(rule: dict[str, Any], run: Run) -> bool:
    """An unknown version or device never matches: only a known-affected library is skipped."""
    if run.version is None or parse_version(run.version) >= parse_version(rule['before']):
        return False
    return (run.program in rule['programs'] and run.family == rule['family']
            and run.nodes >= rule.get('min_nodes', 1)
            and ('device' not in rule or run.device == rule['device']))


def known_hang(run: Run) -> str | None:
    """Why ``run`` is known to hang (library, defect, evidence), or None."""
    for rule in _rules():
        if matches(rule, run):
            device = f' {run.device}' if run.device else ''
            return (f'{run.family} {run.version}{device} is known to hang in {run.program} on '
                    f'{rule.get("min_nodes", 1)}+ nodes: {" ".join(rule["why"].split())} '
                    f'[{" ".join(rule["evidence"].split())}]; fixed in {run.family} '
                    f'{rule["before"]}')
    return None
