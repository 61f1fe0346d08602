"""OSU collectives on N ranks with a forced algorithm, proven and validated in one launch.

The child defines, as parameters: ``case`` ((benchmark, algorithm) pairs from
:func:`omb_suite.algorithms.cases`), ``scale`` (a rank count) and ``mapping`` (a name of
``data/placements.yaml`` ``mappings``). Everything else happens here:

- setup: the job shape (or a skip saying why the partition cannot hold it), the environment
  that forces the algorithm (or a skip naming library and version when it lacks it, or
  cannot run it with OSU's arguments);
- run: one launch of ``osu_<coll> -f [-T mpi_int] -c -u 0``: OSU checks every timed
  iteration's result (``-c``) without extra untimed calls (``-u 0``), so a wrong result fails
  the very run that is measured;
- sanity: the evidence that the forced algorithm was in effect, the placement, and a
  complete table whose every row passed validation.
"""

from __future__ import annotations

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, sanity_function, variable
from reframe.core.exceptions import SanityError

from omb_suite import algorithms as alg
from omb_suite import catalogue, evidence, mpilib, parsing, placement, topology
from omb_suite.rfm.base import OsuRunBase


def _known_defect(test: OsuCollectiveBase) -> bool:
    return alg.defect(test.mpi_family or '', test.mpi_version or '',
                      test.entry.collective) is not None


@rfm.xfail('known wrong results of this MPI library version (data/algorithms/<family>.yaml '
           'defects); if it passes now, the library is fixed: remove the entry', _known_defect)
class OsuCollectiveBase(OsuRunBase):
    """An OSU collective on ``scale`` ranks mapped by ``mapping`` with a forced algorithm."""

    #: OSU program and algorithm of this case (set from ``case``; loggable).
    benchmark = variable(str, value='')
    algorithm = variable(str, value=alg.DEFAULT)

    #: What the library printed that proves the algorithm ran (``tuned:bcast:chain``,
    #: ``mpir:bcast:binomial``), ``None`` where nothing can be checked.
    algorithm_evidence = variable(str, type(None), value=None)

    #: Check every timed iteration's result with OSU's ``-c`` (and ``-u 0``: no untimed
    #: warm-up calls per iteration), in the measured launch: an algorithm that computes
    #: wrong results fails the test. ``-S validation=0`` measures without it.
    #: :type: :class:`bool` :default: ``True``
    validation = variable(typ.Bool, value=True, loggable=False)

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
        self.valid_prog_environs = alg.environ_features(self.benchmark, self.algorithm)
        self.descr = (f'{self.benchmark} with the {self.algorithm} algorithm on '
                      f'{self.scale} ranks mapped by {self.mapping}')
        self.tags = self.tags | {'collective', self.benchmark}

    # -- setup ------------------------------------------------------------------------

    @property
    def entry(self) -> catalogue.Benchmark:
        return catalogue.get(self.benchmark)

    @run_after('setup')
    def shape_job(self):
        """Job resources from scale and mapping; skip when the partition cannot offer them."""
        where = self.current_partition.fullname
        self.skip_if(self.scale < self.entry.min_ranks,
                     f'{self.benchmark} needs at least {self.entry.min_ranks} ranks (OSU\'s '
                     f'neighbourhood of radius 1 on a ring), not {self.scale}')
        shape = placement.job_shape(self.scale, self.mapping, self.topology, self.oversubscribe)
        self.skip_if(isinstance(shape, str), f'{shape} ({where})')
        self.num_tasks, self.num_nodes = shape.num_tasks, shape.num_nodes
        self.num_tasks_per_node = shape.tasks_per_node

    @run_after('setup')
    def force_algorithm(self):
        """The environment that forces the algorithm, or a skip naming library and version."""
        family = self.mpi_family or ''
        self.mpi_version = self.mpi_version or mpilib.library_version(family,
                                                                      self.search_path())
        choice = self._choice(family)
        self._evidence = choice is not None
        if choice is None:
            return
        self._skip_unless_runnable(family)
        oversub = ({'OMPI_MCA_mpi_yield_when_idle': '1'}
                   if self.oversubscribe > 1 and family == 'openmpi' else {})
        self.env_vars = {**self.env_vars, **choice.env_vars, **choice.evidence_env, **oversub}

    def _choice(self, family: str) -> alg.AlgorithmChoice | None:
        """The algorithm choice; ``None`` for 'default' where no table covers the library."""
        try:
            if not self.mpi_version:
                raise alg.AlgorithmError(
                    f'the version of {family or "the"} MPI of environment '
                    f'{self.current_environ.name} is unknown: record mpi_version in the '
                    f'environment registry (omb-setup)')
            return alg.choose(family, self.mpi_version, self.entry.collective, self.algorithm)
        except alg.AlgorithmError as err:
            self.skip_if(self.algorithm != alg.DEFAULT, f'{err}; not run')
            return None

    def _skip_unless_runnable(self, family: str) -> None:
        """Skip an algorithm the installed library lacks, or cannot run on this job."""
        if self.algorithm == alg.DEFAULT:
            return
        coll = self.entry.collective
        offered = mpilib.listed_algorithms(family, self.search_path(), alg.known_names(family))
        if offered is not None:
            reason = alg.unsupported_reason(family, self.mpi_version, coll, self.algorithm,
                                            offered)
            self.skip_if(reason is not None, reason)
        size = catalogue.datatype_size(self.effective_datatype())
        reason = alg.cannot_run(family, coll, self.algorithm, nodes=self.num_nodes,
                                ranks=self.num_tasks, element_size=size,
                                min_elements=max(1, (self.sweep()[0] or 1) // size))
        self.skip_if(reason is not None, f'{reason}; not run')

    # -- command line -----------------------------------------------------------------

    def effective_datatype(self) -> str:
        """The ``-T`` value ('' = OSU's MPI_CHAR); an unknown one is a clear error."""
        if not self.entry.data_options:
            return ''
        catalogue.datatype_size(self.datatype)  # raises on an unknown name
        if self.datatype:
            return self.datatype.lower()
        return 'mpi_int' if 'reduce' in self.benchmark else ''

    def validates(self) -> bool:
        return self.validation and self.entry.data_options

    def osu_options(self) -> list[str]:
        dtype = self.effective_datatype()
        check = ['-c', '-u', '0'] if self.validates() else []
        return ['-f', *(['-T', dtype] if dtype else []), *check, *super().osu_options()]

    def launcher_options(self) -> list[str]:
        options = self.place_with(placement.mapping_options, self.mapping)
        if self.oversubscribe <= 1:
            return options
        launcher = self.current_partition.launcher_type.registered_name
        return placement.oversubscribe_options(
            options, placement.launcher_key(launcher, self.mpi_family))

    # -- sanity -----------------------------------------------------------------------

    def expected_sizes(self) -> list[int] | None:
        lo, hi = self.sweep()
        if hi is None:
            return None
        size = catalogue.datatype_size(self.effective_datatype())
        return parsing.expected_sizes(1 if lo is None else lo, hi, datatype_size=size)

    def parse_kwargs(self) -> dict:
        return {'require_validation': self.validates()}

    def check_placement(self, places):
        placement.verify_ranks(places, nodes=self.num_nodes,
                               oversubscribed=self.oversubscribe > 1)
        placement.verify_mapping(self.mapping, places, self.num_tasks_per_node)

    @sanity_function
    def validate(self):
        """The forced algorithm was in effect, then placement and a complete, valid table."""
        if self._evidence:
            output = (self.read_output(self.stdout.evaluate())
                      + self.read_output(self.stderr.evaluate()))
            try:
                self.algorithm_evidence = evidence.check_evidence(
                    self.mpi_family, self.entry.collective, self.algorithm, output,
                    version=self.mpi_version)
            except alg.AlgorithmError as err:
                raise SanityError(f'{self.benchmark} algorithm {self.algorithm!r}: '
                                  f'{err}') from None
        try:
            return sn.evaluate(super().validate())
        except SanityError as err:
            if self.validates() and 'validation failed' in str(err):
                raise SanityError(f'{self.benchmark} algorithm {self.algorithm!r} computed '
                                  f'wrong results (OSU -c): {err}') from None
            raise


class CollectiveVerdict(rfm.RegressionTestPlugin):
    """The verdict set: only the partition's smallest and largest scale (mapping ``core``)."""

    @run_after('setup')
    def only_end_scales(self):
        ends = topology.end_scales(self.topology)
        self.skip_if(self.scale not in ends,
                     f'scale {self.scale} is neither the smallest nor the largest of '
                     f'{self.current_partition.fullname} {ends}: --mode explore runs it')


class CollectiveSweep(rfm.RegressionTestPlugin):
    """The exploration: every case, scale and mapping except what the verdict set measures."""

    @run_after('setup')
    def not_in_verdict(self):
        verdict = (self.algorithm == alg.DEFAULT and self.mapping == 'core'
                   and self.benchmark in catalogue.verdict(self.entry.kind)
                   and self.scale in topology.end_scales(self.topology))
        self.skip_if(verdict, 'measured by the verdict set (reframe/checks/osu_collectives.py)')
