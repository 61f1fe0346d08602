"""How an algorithm is forced: the environment a family record's ``forcing`` template gives
for one algorithm of a table (:mod:`omb_suite.mpi.algorithms` picks the table entry and value).

A record names its ``kind`` (:data:`KINDS`), its ``variable`` template (``{collective}``,
``{COLLECTIVE}``, ``{component}``), its ``companions`` (per component, or ``all``) and, for
Open MPI, the ``exclude_variable`` that keeps other coll components from taking over.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Forced:
    """What a template is filled from: the collective, the value the library takes, the
    table's entry and algorithm spec, the components to exclude (Open MPI)."""

    collective: str
    value: str
    entry: Any
    spec: dict[str, Any]
    excluded: list[str]


def _variable(template: dict[str, Any], forced: Forced, component: str = '') -> str:
    return template['variable'].format(collective=forced.collective, component=component,
                                       COLLECTIVE=forced.collective.upper())


def _one_variable(template: dict[str, Any], forced: Forced) -> dict[str, Any]:
    """MPICH (MPIR_CVAR_<COLL>_INTRA_ALGORITHM=<name>), Intel MPI (I_MPI_ADJUST_<COLL>=<id>):
    the variable, then the record's companions for all collectives."""
    return {_variable(template, forced): forced.value, **template['companions'].get('all', {})}


def _table_variable(template: dict[str, Any], forced: Forced) -> dict[str, Any]:
    """MVAPICH2: the table's variable; companions: the collective's, then the algorithm's."""
    return {**(forced.entry.get('env') or {}), **(forced.spec.get('env') or {}),
            forced.entry['variable']: forced.value}


def exclusion(template: dict[str, Any], excluded: list[str]) -> dict[str, str]:
    """Open MPI: the variable that keeps ``excluded`` components from taking over from the one
    whose algorithms are forced or tuned; ``{}`` for a family whose record has none."""
    if not template.get('exclude_variable') or not excluded:
        return {}
    return {template['exclude_variable']: '^' + ','.join(excluded)}


def _mca(template: dict[str, Any], forced: Forced) -> dict[str, Any]:
    """Open MPI: exclude the components that would take over, then the component's companions
    (tuned: use_dynamic_rules, without which its algorithm variable is ignored) and variable."""
    component = forced.entry['component']
    return {**exclusion(template, forced.excluded),
            **template['companions'].get(component, {}),
            _variable(template, forced, component): forced.value}


#: ``forcing.kind`` of a family record -> the environment that forces one algorithm.
KINDS: dict[str, Callable[[dict[str, Any], Forced], dict[str, Any]]] = {
    'cvar': _one_variable, 'preset': _one_variable, 'mv2': _table_variable, 'mca': _mca}


def environment(template: dict[str, Any], forced: Forced) -> dict[str, str]:
    """Exactly what to export to force ``forced`` the way the record's ``template`` says."""
    return {k: str(v) for k, v in KINDS[template['kind']](template, forced).items()}
