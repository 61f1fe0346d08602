"""Placements and mappings: one place that maps a name to job shape and launcher options.

Point-to-point checks use a *placement* (``intra_socket``, ``inter_socket``,
``inter_node``): exactly two ranks. Collective checks use a *mapping* (``core``,
``socket``, ``node``) for N ranks. The options per launcher live in
``data/placements.yaml``; this module only selects from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

#: MPI families whose ``mpirun``/``mpiexec`` is MPICH's Hydra.
HYDRA_FAMILIES = frozenset({'mpich', 'mvapich', 'mvapich2', 'mvapich-plus', 'intel-mpi'})


class PlacementError(ValueError):
    """A placement or mapping that is unknown or cannot be offered."""


@dataclass(frozen=True)
class Placement:
    name: str
    doc: str
    num_nodes: int
    tasks_per_node: int
    needs: dict[str, int]

    @property
    def num_tasks(self) -> int:
        return self.num_nodes * self.tasks_per_node


@cache
def _table() -> dict[str, Any]:
    text = resources.files('omb_suite').joinpath('data/placements.yaml').read_text()
    return yaml.safe_load(text)


def placement_names() -> list[str]:
    return list(_table()['placements'])


def mapping_names() -> list[str]:
    return list(_table()['mappings'])


def get_placement(name: str) -> Placement:
    try:
        entry = _table()['placements'][name]
    except KeyError:
        raise PlacementError(
            f'unknown placement {name!r}; known placements: {", ".join(placement_names())}'
        ) from None
    return Placement(name, entry['doc'], entry['nodes'], entry['tasks_per_node'],
                     dict(entry.get('needs', {})))


def launcher_key(launcher: str, mpi_family: str | None) -> str:
    """Which option dialect a launcher speaks: ``srun``, ``ompi`` or ``hydra``."""
    if launcher == 'srun':
        return 'srun'
    if launcher in ('mpirun', 'mpiexec'):
        return 'hydra' if (mpi_family or '') in HYDRA_FAMILIES else 'ompi'
    raise PlacementError(
        f'launcher {launcher!r} cannot place MPI ranks; use a partition whose launcher is '
        f'mpirun, mpiexec or srun'
    )


def _options(kind: str, name: str, launcher: str, mpi_family: str | None,
             overrides: dict[str, dict[str, list[str]]] | None) -> list[str]:
    key = launcher_key(launcher, mpi_family)
    if overrides and name in overrides.get(key, {}):
        return list(overrides[key][name])
    try:
        return list(_table()[kind][name][key])
    except KeyError:
        known = ', '.join(_table()[kind])
        raise PlacementError(f'unknown {kind[:-1]} {name!r}; known: {known}') from None


def placement_options(name: str, launcher: str, mpi_family: str | None,
                      overrides: dict[str, dict[str, list[str]]] | None = None) -> list[str]:
    """Launcher options that realise a point-to-point placement."""
    return _options('placements', name, launcher, mpi_family, overrides)


def mapping_options(name: str, launcher: str, mpi_family: str | None,
                    overrides: dict[str, dict[str, list[str]]] | None = None) -> list[str]:
    """Launcher options that realise a collective mapping."""
    return _options('mappings', name, launcher, mpi_family, overrides)


def srun_mpi_options(launcher: str, mpi_family: str | None,
                     srun_mpi: dict[str, str] | None) -> list[str]:
    """``--mpi=<plugin>`` for srun, from the partition's ``extras['srun_mpi']`` table."""
    if launcher != 'srun' or not srun_mpi:
        return []
    family = mpi_family or ''
    plugin = srun_mpi.get(family) or srun_mpi.get(family.split('-')[0])
    return [f'--mpi={plugin}'] if plugin else []


def unmet_needs(placement: Placement, *, num_nodes: int, num_sockets: int,
                cores_per_socket: int) -> str | None:
    """Why a partition cannot offer ``placement``, or ``None`` when it can."""
    have = {'nodes': num_nodes, 'sockets': num_sockets, 'cores_per_socket': cores_per_socket}
    for what, need in placement.needs.items():
        if have[what] < need:
            return (f'placement {placement.name!r} needs {need} {what.replace("_", " ")} '
                    f'but the partition has {have[what]}')
    return None
