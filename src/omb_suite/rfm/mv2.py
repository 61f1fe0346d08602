"""MVAPICH2 in a run: its own rank binding, its channel, and the MPI_T reader that proves a
collective's algorithm. Everything MVAPICH2-specific that the checks do, in one place.

Binding: ``ch3:mrail`` and ``ch3:psm`` bind every rank at ``MPI_Init``, over the launcher's
binding, so what the rank wrapper saw before ``exec`` is not where OSU runs. There the run
gets MVAPICH2's own binding variables of its placement or mapping (the record
``data/launchers/mv2.yaml``) and ``MV2_SHOW_CPU_BINDING=2``, and the placement is verified on
MVAPICH2's table (:func:`omb_suite.mpi.mvapich2.bound_places`). Where MVAPICH2 must not bind (more
ranks than cores on a node, ``MPI_THREAD_MULTIPLE``), ``MV2_ENABLE_AFFINITY=0`` leaves the
launcher's binding, verified on the wrapper's lines as for every other library.

Reader: ``job_sources/mpit_reader.c`` is compiled with the environment's ``mpicc`` in the job, in
the stage directory, before the measured launch, and preloaded into OSU by the wrapper
(``--preload``). Not a fixture: ReFrame makes a fixture for every environment of its parent
test and skips the parent with a skipped fixture, while only MVAPICH2 runs use the reader.
"""

from __future__ import annotations

import os
import shutil

import reframe as rfm

from omb_suite.launch.placements import Placing
from omb_suite.machine import probe
from omb_suite.mpi import algorithms, mpit, mvapich2
from omb_suite.osu import catalogue
from omb_suite.rfm import site_offers

FAMILY = 'mvapich2'
#: The reader as the job builds it, in the stage directory.
READER_LIB = 'libmpit_reader.so'


def _build(test: rfm.RegressionTest) -> mvapich2.Mv2Build | str:
    """The environment's MVAPICH2 (``mpiname -a``, read once per session), or why not."""
    try:
        return mvapich2.installed_build(test.search_path())
    except mvapich2.MpinameError as err:
        return str(err)


def binding_env(test: rfm.RegressionTest, where: Placing) -> dict[str, str]:
    """The variables that bind an MVAPICH2 run as placement or mapping ``where`` says
    (``{}`` for other libraries and for channels that leave binding to the launcher)."""
    if test.mpi_family != FAMILY:
        return {}
    build = _build(test)
    test.skip_if(isinstance(build, str), f'{build}: how MVAPICH2 binds the ranks is unknown')
    if not mvapich2.binds_ranks(build.device):
        return {}
    info = catalogue.catalogue().get(test.benchmark)
    why = mvapich2.affinity_off_reason(
        tasks_per_node=test.num_tasks_per_node or test.num_tasks,
        cpus_per_node=test.topology.cores_per_node,
        thread_multiple=bool(info and info.thread_multiple))
    if why is not None:
        return dict(mvapich2.AFFINITY_OFF)
    overrides = site_offers.launcher_overrides(test.current_partition)
    return {**where.mv2_env(overrides), **mvapich2.SHOW_BINDING}


def bound_places(test: rfm.RegressionTest, places: list[probe.RankPlace],
                 stderr: str) -> list[probe.RankPlace]:
    """Where the ranks ran: MVAPICH2's table where it bound them, else the wrapper's lines."""
    if not set(mvapich2.SHOW_BINDING) <= set(test.env_vars):
        return places
    return mvapich2.bound_places(places, mvapich2.parse_cpu_binding(stderr))


def cannot_force(test: rfm.RegressionTest, collective: str, name: str) -> str | None:
    """Why the environment's MVAPICH2 cannot run algorithm ``name`` of ``collective`` in this
    job (channel, build options, nodes, sockets, mapping), or ``None`` (for other libraries
    too: only MVAPICH2's build decides which of its algorithms exist)."""
    if test.mpi_family != FAMILY:
        return None
    build = _build(test)
    if isinstance(build, str):
        return f'{build}; not run'
    ignored = mvapich2.mv2_tuning_ignored_reason(build)
    if ignored is not None:
        return f'{ignored}; not run'
    features = mvapich2.build_features(build) | mvapich2.run_features(
        nodes=test.num_nodes, sockets_per_node=test.topology.sockets, mapping=test.mapping)
    return algorithms.unmet_needs(FAMILY, test.mpi_version, collective, name, features)


def reader_build(test: rfm.RegressionTest) -> str:
    """The job's command that compiles the reader (its source copied to the stage directory)."""
    shutil.copyfile(os.path.join(probe.source_dir(), mpit.READER_SOURCE),
                    os.path.join(test.stagedir, mpit.READER_SOURCE))
    return (f'{test.current_environ.cc} -O2 -shared -fPIC -o {READER_LIB} '
            f'{mpit.READER_SOURCE}')


def reader_options(test: rfm.RegressionTest) -> list[str]:
    """The wrapper's option that preloads the reader into OSU (an absolute path: the loader
    searches a bare name only in the library directories)."""
    return ['--preload', os.path.join(test.stagedir, READER_LIB)]
