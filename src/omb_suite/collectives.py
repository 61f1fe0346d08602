"""OSU collectives on N ranks: which (benchmark, algorithm) cases exist, the job shape of a
scale and mapping, and :class:`OsuCollectiveBase`, the ReFrame base of the collective checks.

Algorithms come from :mod:`omb_suite.algorithms` (tables per MPI family and version). ReFrame
parameters are fixed when the class is created, while the MPI family and version are known
per environment, so a check is parameterised over the *union* of the algorithms that the MPI
libraries of the selected system's environments offer for a collective (:func:`cases`); each
case runs only in environments of the families that name it (``valid_prog_environs``), and at
setup an algorithm that the environment's version, or the installed library itself, does not
offer is skipped with a message naming the library and version. Scales and mappings are
likewise those the system's partitions can offer (:func:`scales_for`, :func:`mappings_for`):
ReFrame instantiates every combination, so combinations no partition can run are not made.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache

import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

from omb_suite import algorithms as alg
from omb_suite import benchmarks, parsing, placement, probe
from omb_suite.bases import OsuRunBase, launch_options

#: Bytes per element of the OSU ``-T`` datatypes.
DATATYPE_SIZES = {'mpi_char': 1, 'mpi_int': 4, 'mpi_float': 4}

#: The correctness run's output file and its iteration counts (warm-up, timed).
VALIDATION_OUTPUT = 'validation.out'
VALIDATION_ITERATIONS = ('-x', '2', '-i', '10')

#: Launcher options that let more ranks than cores run (``oversubscribe`` > 1), per dialect.
_OVERSUBSCRIBE = {'ompi': ['--oversubscribe'], 'hydra': [], 'srun': ['--overcommit']}


# ---------------------------------------------------------------- catalogue and cases


def is_nonblocking(benchmark: str) -> bool:
    """Non-blocking collectives report overall/compute/pure communication/overlap."""
    info = benchmarks.get(benchmark)
    return 'overall' in info.metrics or 'overall' in info.curve


def collective_benchmarks(nonblocking: bool) -> list[str]:
    """Catalogued collectives, blocking or non-blocking."""
    return [name for name in benchmarks.names('collective')
            if is_nonblocking(name) == nonblocking]


def collective_of(benchmark: str) -> str:
    """'osu_ireduce_scatter' -> 'ireduce_scatter' (the algorithm tables' key)."""
    return benchmark.removeprefix('osu_')


def takes_data_options(benchmark: str) -> bool:
    """OSU 7.4 barriers move no data: they reject ``-c`` and ``-T``."""
    return not collective_of(benchmark).endswith('barrier')


def _table_versions(family: str) -> list[str]:
    """One version inside each version block of a family's table (its lower bound)."""
    versions = []
    for block in alg.load_table(family)['blocks']:
        lowest = re.search(r'>=\s*([\d.]+)', block['versions'])
        if lowest:
            versions.append(lowest.group(1))
    return versions


#: An MPI library as the environments describe it: (family, version or None if unknown).
Library = tuple[str, 'str | None']


@cache
def offered_by(collective: str, libraries: frozenset[Library] | None = None
               ) -> dict[str, tuple[str, ...]]:
    """Algorithm name -> families that name it, in table order: for ``libraries`` (a library
    of unknown version offers what any of its family's tables lists), else for every table."""
    if libraries is None:
        libraries = frozenset((family, None) for family in alg.FAMILIES)
    found: dict[str, list[str]] = {}
    for family, version in sorted(libraries, key=lambda lib: (lib[0], lib[1] or '')):
        if family not in alg.FAMILIES:
            continue  # no table: only 'default' runs there
        for each in [version] if version else _table_versions(family):
            try:
                names = alg.algorithms(family, each, collective)
            except alg.AlgorithmError:
                continue  # no table for this version or collective (e.g. MVAPICH2 gatherv)
            for name in names[1:]:
                if family not in found.setdefault(name, []):
                    found[name].append(family)
    return {name: tuple(fams) for name, fams in found.items()}


def cases(benchmark_names: list[str], libraries: frozenset[Library] | None = None
          ) -> list[tuple[str, str]]:
    """(benchmark, algorithm) pairs: 'default', then every name that ``libraries`` offer."""
    return [(bench, name) for bench in benchmark_names
            for name in (alg.DEFAULT, *offered_by(collective_of(bench), libraries))]


def case_name(case: tuple[str, str]) -> str:
    """How a case shows in test names: ``osu_bcast/binary_tree``."""
    return '/'.join(case)


def environ_features(benchmark: str, algorithm: str) -> list[str]:
    """``valid_prog_environs``: every MPI for 'default', else the families that offer it."""
    if algorithm == alg.DEFAULT:
        return ['+mpi +osu']
    return [f'+{family} +osu' for family in offered_by(collective_of(benchmark))[algorithm]]


# ---------------------------------------------------------------- what a system offers


@dataclass(frozen=True)
class PartitionSize:
    nodes: int
    cores_per_node: int
    sockets: int


def partition_size(part) -> PartitionSize:
    """Nodes, cores per node and sockets per node of a ReFrame partition."""
    proc = part.processor
    cores = (proc.num_cpus or 1) // (proc.num_cpus_per_core or 1)
    nodes = part.extras.get('num_nodes', 1 if part.scheduler.registered_name == 'local' else 2)
    return PartitionSize(nodes, cores, proc.num_sockets or 1)


def scales_for(sizes: list[PartitionSize], smallest_top: int = 4) -> list[str]:
    """Powers of two from 2 up to the largest partition's core count (at least
    ``smallest_top``, so a 2-core machine can run 4 ranks oversubscribed)."""
    top = max([smallest_top, *(s.nodes * s.cores_per_node for s in sizes)])
    return [str(2 ** k) for k in range(1, top.bit_length()) if 2 ** k <= top]


def mappings_for(sizes: list[PartitionSize]) -> list[str]:
    """Mappings some partition can tell apart from ``core``: ``socket`` needs two sockets,
    ``node`` two nodes."""
    needs = {'socket': lambda s: s.sockets >= 2, 'node': lambda s: s.nodes >= 2}
    return [name for name in placement.mapping_names()
            if any(needs.get(name, lambda s: True)(s) for s in sizes)]


def system_libraries(system) -> frozenset[Library]:
    """The MPI libraries of the environments a ReFrame system's partitions use."""
    return frozenset((str(env.extras.get('mpi_family')), env.extras.get('mpi_version'))
                     for part in system.partitions for env in part.environs
                     if env.extras.get('mpi_family'))


# ---------------------------------------------------------------- job shape


@dataclass(frozen=True)
class Shape:
    num_tasks: int
    num_nodes: int

    @property
    def tasks_per_node(self) -> int:
        return math.ceil(self.num_tasks / self.num_nodes)


def job_shape(ranks: int, mapping: str, *, nodes: int, cores_per_node: int, sockets: int,
              oversubscribe: int = 1) -> Shape | str:
    """The nodes that ``ranks`` ranks mapped by ``mapping`` use, or why it is impossible.

    Ranks fill as few nodes as hold them (``oversubscribe`` ranks per core); ``node``
    takes the same allocation, at least two nodes, and deals ranks round-robin over it,
    so ``core`` and ``node`` compare the same nodes in a different rank order.
    """
    if mapping not in placement.mapping_names():
        known = ', '.join(placement.mapping_names())
        return f'unknown mapping {mapping!r}; known: {known}'
    if mapping == 'socket' and sockets < 2:
        return f'mapping {mapping!r} needs 2 sockets per node but the partition has {sockets}'
    per_node = cores_per_node * max(oversubscribe, 1)
    need = math.ceil(ranks / per_node)
    if mapping == 'node':
        need = max(need, 2)
    if need > nodes:
        return (f'{ranks} ranks mapped by {mapping} need {need} nodes of {cores_per_node} cores'
                f' (oversubscribe={oversubscribe}) but the partition has {nodes}')
    return Shape(ranks, need)


def oversubscribe_options(options: list[str], dialect: str) -> list[str]:
    """Mapping options plus what lets ranks share cores (Open MPI: bindings may overload)."""
    if dialect == 'ompi':
        options = [f'{opt}:overload-allowed' if prev == '--bind-to' and opt != 'none' else opt
                   for prev, opt in zip(['', *options[:-1]], options, strict=True)]
    return [*_OVERSUBSCRIBE[dialect], *options]


def check_ranks(places: list[probe.RankPlace], shape: Shape, oversubscribed: bool) -> None:
    """The probe saw every rank, on as many hosts as asked for, no two pinned to one CPU."""
    if len(places) != shape.num_tasks:
        raise probe.ProbeError(f'expected {shape.num_tasks} ranks, the probe saw {len(places)}')
    hosts = {p.host for p in places}
    if len(hosts) != shape.num_nodes:
        raise probe.ProbeError(f'expected ranks on {shape.num_nodes} nodes, they run on '
                               f'{len(hosts)}: {probe.observed(places)}')
    if oversubscribed:
        return
    pinned: dict[tuple[str, frozenset[int]], int] = {}
    for place in places:
        if len(place.cpus) == 1:
            other = pinned.setdefault((place.host, place.cpus), place.rank)
            if other != place.rank:
                raise probe.ProbeError(f'ranks {other} and {place.rank} are both bound to CPU '
                                       f'{min(place.cpus)} of {place.host}: '
                                       f'{probe.observed(places)}')


# ---------------------------------------------------------------- installed library

_VERSION_TOOLS = {
    'openmpi': (['ompi_info', '--version'], r'Open MPI v(\S+)'),
    'mpich': (['mpichversion'], r'MPICH Version:\s*(\S+)'),
    'mvapich': (['mpichversion'], r'Version:\s*(\S+)'),
    'mvapich2': (['mpiname'], r'MVAPICH2\s+(\S+)'),
}


@cache
def library_version(family: str, search_path: str) -> str | None:
    """The version the MPI library on ``search_path`` reports, ``None`` if it cannot tell."""
    command, pattern = _VERSION_TOOLS.get(family, ([''], ''))
    tool = shutil.which(command[0], path=search_path) if command[0] else None
    if not tool:
        return None
    try:
        out = subprocess.run([tool, *command[1:]], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(pattern, out)
    return match.group(1) if match else None


@cache
def installed(family: str, search_path: str) -> dict[str, list[str]] | None:
    """What the installed library lists per collective, ``None`` where it lists nothing
    (then the run's evidence check is the only guard)."""
    try:
        return alg.installed_algorithms(
            family, ompi_info=shutil.which('ompi_info', path=search_path) or 'ompi_info',
            mpivars=shutil.which('mpivars', path=search_path))
    except alg.AlgorithmError:
        return None


# ---------------------------------------------------------------- ReFrame base


class OsuCollectiveBase(OsuRunBase):
    """An OSU collective on ``scale`` ranks mapped by ``mapping`` with a forced algorithm.

    The child defines, as parameters: ``case`` ((benchmark, algorithm) pairs from
    :func:`cases`), ``scale`` (a rank count, :func:`scales_for`) and ``mapping`` (a name of
    ``data/placements.yaml`` ``mappings``, :func:`mappings_for`). Everything else happens
    here: job shape and skips (setup), the algorithm's environment (setup), ``-f``/``-T`` and
    the correctness run with ``-c`` (run), then the evidence that the algorithm was in
    effect, the correctness run, the placement and the timed table (sanity).
    """

    #: OSU program and algorithm of this case (set from ``case``; loggable).
    benchmark = variable(str, value='')
    algorithm = variable(str, value=alg.DEFAULT)

    #: What the library printed that proves the algorithm ran (``tuned:bcast:chain``,
    #: ``mpir:bcast:binomial``), ``None`` where nothing can be checked.
    algorithm_evidence = variable(str, type(None), value=None)

    #: Before the timed run, run the sweep once more with OSU's data validation (``-c``,
    #: few iterations): an algorithm that computes wrong results fails the test. A separate
    #: run, because ``-c`` rewrites and checks the buffers around every timed call and so
    #: changes the latency it measures.
    #: :type: :class:`bool` :default: ``True``
    validation = variable(bool, value=True, loggable=False)

    #: OSU datatype (``-T``): ``mpi_char``, ``mpi_int`` or ``mpi_float``. ``''`` = MPI_CHAR,
    #: except MPI_INT for reductions (OSU 7.4 validates MPI_CHAR sums wrongly from 16 B).
    #: :type: :class:`str` :default: ``''``
    datatype = variable(str, value='', loggable=False)

    #: Ranks allowed per core (``2`` runs scale 4 on 2 cores, for tests on small machines).
    #: :type: :class:`int` :default: ``1``
    oversubscribe = variable(int, value=1, loggable=False)

    @run_after('init')
    def unpack_case(self):
        self.benchmark, self.algorithm = self.case
        self.valid_prog_environs = environ_features(self.benchmark, self.algorithm)
        self.descr = (f'{self.benchmark} with the {self.algorithm} algorithm on '
                      f'{self.scale} ranks mapped by {self.mapping}')
        self.tags = self.tags | {'collective', self.benchmark}

    # -- setup ------------------------------------------------------------------------

    @run_after('setup')
    def shape_job(self):
        """Job resources from scale and mapping; skip when the partition cannot offer them."""
        size = partition_size(self.current_partition)
        shape = job_shape(int(self.scale), self.mapping, nodes=size.nodes,
                          cores_per_node=size.cores_per_node, sockets=size.sockets,
                          oversubscribe=self.oversubscribe)
        self.skip_if(isinstance(shape, str), f'{shape} ({self.current_partition.fullname})')
        self.shape = shape
        self.num_tasks, self.num_nodes = shape.num_tasks, shape.num_nodes
        self.num_tasks_per_node = shape.tasks_per_node

    @run_after('setup')
    def force_algorithm(self):
        """The environment that forces the algorithm, or a skip naming library and version."""
        family = self.mpi_family or ''
        search = self._search_path()
        self.mpi_version = self.mpi_version or library_version(family, search)
        choice = self._choice(family)
        self._evidence = choice is not None
        if choice is None:
            return
        self._check_installed(family, search)
        oversub = ({'OMPI_MCA_mpi_yield_when_idle': '1'}
                   if self.oversubscribe > 1 and family == 'openmpi' else {})
        self.env_vars = {**self.env_vars, **choice.env_vars, **choice.evidence_env, **oversub}

    def _search_path(self) -> str:
        return os.pathsep.join([*(self.current_environ.extras.get('env_path') or []),
                                os.environ.get('PATH', '')])

    def _choice(self, family: str) -> alg.AlgorithmChoice | None:
        """The algorithm choice; ``None`` for 'default' where no table covers the library."""
        collective = collective_of(self.benchmark)
        try:
            if not self.mpi_version:
                raise alg.AlgorithmError(
                    f'the version of {family or "the"} MPI of environment '
                    f'{self.current_environ.name} is unknown: record mpi_version in the '
                    f'environment registry (omb-setup)')
            return alg.choose(family, self.mpi_version, collective, self.algorithm)
        except alg.AlgorithmError as err:
            self.skip_if(self.algorithm != alg.DEFAULT, f'{err}; not run')
            return None

    def _check_installed(self, family: str, search: str) -> None:
        offered = installed(family, search)
        if offered is not None:
            reason = alg.unsupported_reason(family, self.mpi_version, collective_of(
                self.benchmark), self.algorithm, offered)
            self.skip_if(reason is not None, reason)

    # -- command line -----------------------------------------------------------------

    def effective_datatype(self) -> str:
        """The ``-T`` value ('' = OSU's MPI_CHAR); an unknown one is a clear error."""
        if not takes_data_options(self.benchmark):
            return ''
        if self.datatype.lower() not in ('', *DATATYPE_SIZES):
            raise ValueError(f'datatype {self.datatype!r} is not an OSU -T datatype; use one '
                             f'of {", ".join(DATATYPE_SIZES)}')
        if self.datatype:
            return self.datatype.lower()
        return 'mpi_int' if 'reduce' in self.benchmark else ''

    def sweep(self) -> tuple[int | None, int | None]:
        """Barriers have no message sizes: no ``-m`` for them, whatever ``max_size`` says."""
        if not takes_data_options(self.benchmark):
            return None, None
        return super().sweep()

    def osu_options(self) -> list[str]:
        dtype = self.effective_datatype()
        return ['-f', *(['-T', dtype] if dtype else []), *super().osu_options()]

    @run_before('run')
    def add_validation_run(self):
        """The correctness run: same launcher and options, then ``-c`` and few iterations
        (OSU takes the last ``-x``/``-i``)."""
        if not (self.validation and takes_data_options(self.benchmark)):
            return
        launcher = self.job.launcher.run_command(self.job)
        opts = ' '.join([*self.executable_opts, '-c', *VALIDATION_ITERATIONS])
        self.prerun_cmds = [*self.prerun_cmds,
                            f'{launcher} {self.executable} {opts} > {VALIDATION_OUTPUT} 2>&1']

    def launcher_options(self) -> list[str]:
        options = launch_options(self, placement.mapping_options, self.mapping)
        if self.oversubscribe <= 1:
            return options
        part = self.current_partition
        dialect = placement.launcher_key(part.launcher_type.registered_name, self.mpi_family)
        return oversubscribe_options(options, dialect)

    # -- sanity -----------------------------------------------------------------------

    def expected_sizes(self) -> list[int] | None:
        lo, hi = self.sweep()
        if hi is None:
            return None
        size = DATATYPE_SIZES[self.effective_datatype() or 'mpi_char']
        return parsing.expected_sizes(1 if lo is None else lo, hi, datatype_size=size)

    def check_placement(self, places):
        check_ranks(places, self.shape, self.oversubscribe > 1)
        probe.verify_mapping(self.mapping, places)

    @sanity_function
    def validate(self):
        """The forced algorithm was in effect, then placement and a complete, valid table."""
        if self._evidence:
            output = self._read(self.stdout.evaluate()) + self._read(self.stderr.evaluate())
            try:
                self.algorithm_evidence = alg.check_evidence(
                    self.mpi_family, collective_of(self.benchmark), self.algorithm, output,
                    version=self.mpi_version)
            except alg.AlgorithmError as err:
                raise SanityError(f'{self.benchmark} algorithm {self.algorithm!r}: '
                                  f'{err}') from None
        if self.validation and takes_data_options(self.benchmark):
            self._check_validation_run()
        return sn.evaluate(super().validate())

    def _check_validation_run(self) -> None:
        try:
            parsing.parse_osu_output(self._read(VALIDATION_OUTPUT),
                                     expect_sizes=self.expected_sizes(), require_validation=True)
        except parsing.OsuParseError as err:
            raise SanityError(f'{self.benchmark} algorithm {self.algorithm!r} failed its '
                              f'correctness run (-c, {VALIDATION_OUTPUT}): {err}') from None


__all__ = ['OsuCollectiveBase', 'PartitionSize', 'Shape', 'case_name', 'cases', 'check_ranks',
           'collective_benchmarks', 'job_shape', 'mappings_for', 'offered_by', 'scales_for',
           'system_libraries']
