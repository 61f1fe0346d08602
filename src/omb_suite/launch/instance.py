"""Whether ReFrame runs where a partition's launcher can start its steps: ``flux run`` needs the
``flux`` command and the Flux instance ReFrame was started in (``$FLUX_URI``), answering.

Asked before a test launches anything (the ReFrame layer: :mod:`omb_suite.rfm.instance_guard`), so
a run started outside an instance fails at once, saying what to start, instead of every test's
``flux run`` failing after its job started. Pure: no ReFrame import.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

from omb_suite.machine import topology

#: How a partition whose tests are steps of a Flux instance is started (docs/howto-flux-lsf.md).
START = ('start ReFrame inside the instance: `flux alloc -N {nodes} reframe ...` (or `flux batch`) '
         'on a Flux system, `flux start --test-size=1 reframe ...` on one machine '
         '(tests/flux/instance runs a command in one): docs/howto-flux-lsf.md')


def problem(launcher: str, partition: str, nodes: int,
            environ: Mapping[str, str] = os.environ) -> str | None:
    """Why ``partition``'s launcher cannot start a step from here, or ``None`` (a launcher
    that needs no instance, or an instance that answers)."""
    if launcher != 'flux':
        return None
    start = START.format(nodes=nodes)
    if not shutil.which('flux', path=environ.get('PATH')):
        return (f'partition {partition} launches every test with `flux run`, but no `flux` '
                f'is on PATH: put your Flux\'s bin/ on PATH (your site\'s Flux module, or '
                f'.omb/flux/<version>/bin from scripts/build-flux.sh), then {start}')
    uri = environ.get('FLUX_URI')
    if not uri:
        return (f'partition {partition} launches every test with `flux run` in the Flux '
                f'instance ReFrame runs in, but ReFrame runs outside any (FLUX_URI is not '
                f'set): {start}')
    if topology.flux_instance_size(uri) is None:
        return (f'partition {partition}: the Flux instance FLUX_URI={uri} does not answer '
                f'(`flux getattr size` failed: it has ended, or this `flux` cannot reach it): '
                f'{start}')
    return None


#: MPI families a launcher cannot start from a release on, and why (measured: docs/dev/flux.md).
CANNOT_START = {
    ('flux', 'openmpi', 5): (
        "Open MPI {version} takes its ranks' wire-up from PMIx only, and flux-core offers "
        "PMI-1 (PMIx comes with the flux-pmix plugin): each rank would start as a singleton of "
        "its own (measured with Open MPI 5.0.11, docs/dev/flux.md). Run Open MPI 4.1 or MPICH "
        "under Flux, or install flux-pmix and declare it: partition extras {{flux_pmix: true}}"),
}


def cannot_start(launcher: str, family: str | None, version: str | None,
                 extras: Mapping[str, object]) -> str | None:
    """Why ``launcher`` cannot start the ranks of this MPI library, or ``None``."""
    major = (version or '').split('.')[0]
    if not major.isdigit() or extras.get('flux_pmix'):
        return None
    for (name, fam, first), why in CANNOT_START.items():
        if name == launcher and fam == family and int(major) >= first:
            return why.format(version=version)
    return None
