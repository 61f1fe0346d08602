"""OSU collectives on N ranks with a forced algorithm, the algorithm proven, the results checked.

The child defines, as parameters: ``case`` ((benchmark, algorithm) pairs from
:func:`omb_suite.mpi.algorithms.cases`), ``scale`` (a rank count) and ``mapping`` (a name of
``data/placements.yaml`` ``mappings``). Everything else happens here:

- setup: the job shape (or a skip saying why the partition cannot hold it), the environment
  that forces the algorithm (or a skip naming library and version when it lacks it, or
  cannot run it with OSU's arguments);
- run: one launch of ``osu_<coll> -f [-T mpi_int]``, the measurement. OSU's ``-c`` is not in
  it: it rewrites and checks the buffers around every timed call, which made 64 KiB-1 MiB
  collectives 2-10x slower here (bcast 64 KiB: 17-31 us without, 63-142 us with ``-c -u 0``);
- sanity: the evidence that the forced algorithm was in effect, the placement, a complete
  table.

Correctness ("wrong results fail"): the measured launch checks its own collective first,
every element of every size, with our check preloaded into OSU
(:mod:`omb_suite.rfm.collective_validation`), with the forced algorithm in the exploration; a
collective our check does not know gets a short ``-c`` run before its measurement in the
exploration (:class:`CollectiveSweep`).
"""

from __future__ import annotations

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

from omb_suite.launch import placements
from omb_suite.machine import probe, topology
from omb_suite.mpi import algorithms as alg
from omb_suite.mpi import evidence, families, mpilib
from omb_suite.osu import catalogue, parsing
from omb_suite.osu.counts import Counts, options
from omb_suite.rfm import environ_facts, mv2, site_offers
from omb_suite.rfm.base import OsuRunBase
from omb_suite.rfm.collective_validation import CheckedInLaunch


class CollectiveJob(OsuRunBase):
    """``scale`` ranks mapped by ``mapping``: the job shape, the launcher options and the
    placement check shared by the collective measurements and their correctness runs."""

    #: Ranks allowed per core (``2`` runs scale 4 on 2 cores, for tests on small machines).
    #: :type: :class:`int` :default: ``1``
    oversubscribe = variable(int, value=1, loggable=False)

    def placing(self) -> placements.Mapping:
        return placements.mapping(self.mapping)

    @run_after('setup')
    def shape_job(self):
        """Job resources from scale and mapping; skip when the partition cannot offer them."""
        shape = self.placing().job_shape(self.scale, self.topology, self.oversubscribe)
        self.skip_if(isinstance(shape, str), f'{shape} ({self.current_partition.fullname})')
        self.num_tasks, self.num_nodes = shape.num_tasks, shape.num_nodes
        self.num_tasks_per_node = shape.tasks_per_node

    def launcher_options(self) -> list[str]:
        options = site_offers.placed_launch(self, self.placing())
        if self.oversubscribe <= 1:
            return options
        launcher = self.current_partition.launcher_type.registered_name
        return placements.oversubscribe_options(
            options, placements.launcher_dialect(launcher, self.mpi_family))

    def check_placement(self, places):
        probe.verify_ranks(places, nodes=self.num_nodes, oversubscribed=self.oversubscribe > 1)
        self.placing().verify(places, self.num_tasks_per_node)


def _known_defect(test: OsuCollectiveBase) -> bool:
    return alg.defect(test.mpi_family or '', test.mpi_version or '',
                      test.entry.collective) is not None


@rfm.xfail('known wrong results of this MPI library version (data/algorithms/<family>.yaml '
           'defects); if it passes now, the library is fixed: remove the entry', _known_defect)
class OsuCollectiveBase(CollectiveJob):
    """An OSU collective on ``scale`` ranks mapped by ``mapping`` with a forced algorithm."""

    #: OSU program and algorithm of this case (set from ``case``; loggable).
    benchmark = variable(str, value='')
    algorithm = variable(str, value=alg.DEFAULT)

    #: What the library printed that proves the algorithm ran (``tuned:bcast:chain``,
    #: ``mpir:bcast:binomial``), ``None`` where nothing can be checked.
    algorithm_evidence = variable(str, type(None), value=None)

    #: Check the collective's results (our check inside the measured launch, before OSU
    #: measures; in the exploration, a short ``-c`` run before the measurement for the
    #: collectives our check does not know). ``-S validation=0`` only measures.
    #: :type: :class:`bool` :default: ``True``
    validation = variable(typ.Bool, value=True, loggable=False)

    #: OSU datatype (``-T``): ``mpi_char``, ``mpi_int`` or ``mpi_float``. ``''`` = MPI_CHAR,
    #: except MPI_INT for reductions (OSU 7.4 validates MPI_CHAR sums wrongly from 16 B).
    #: :type: :class:`str` :default: ``''``
    datatype = variable(str, value='', loggable=False)

    @run_after('init')
    def unpack_case(self):
        self.benchmark, self.algorithm = self.case
        # omb-setup's environments by their features; a site's by what its job finds
        self.valid_prog_environs = [
            *(f'{f} +{environ_facts.REGISTERED}'
              for f in alg.environ_features(self.benchmark, self.algorithm)),
            f'+mpi -{environ_facts.REGISTERED}']
        self.descr = (f'{self.benchmark} with the {self.algorithm} algorithm on '
                      f'{self.scale} ranks mapped by {self.mapping}')
        self.tags = self.tags | {'collective', self.benchmark}

    # -- setup ------------------------------------------------------------------------

    @property
    def entry(self) -> catalogue.Benchmark:
        return catalogue.get(self.benchmark)

    @run_after('setup')
    def enough_ranks(self):
        self.skip_if(self.scale < self.entry.min_ranks,
                     f'{self.benchmark} needs at least {self.entry.min_ranks} ranks (OSU\'s '
                     f'neighbourhood of radius 1 on a ring), not {self.scale}')

    @run_after('setup')
    def force_algorithm(self):
        """The environment that forces the algorithm, or a skip naming library and version."""
        family = self.mpi_family or ''
        self.mpi_version = self.mpi_version or mpilib.library_version(family,
                                                                      self.search_path())
        choice = self._choice(family)
        self._evidence = choice is not None
        self._rank0_env: dict[str, str] = {}
        if choice is None:
            return
        self._skip_unless_runnable(family)
        record = families.get(family)
        oversub = record['forcing']['oversubscribe_env'] if self.oversubscribe > 1 else {}
        # where rank 0's output proves the algorithm (Open MPI's verbose output), the evidence
        # variables go to rank 0 only (the wrapper's --rank0-env): it does not grow with ranks
        self._rank0_env = choice.evidence_env if record['proof']['rank0_only'] else {}
        evidence = {} if self._rank0_env else choice.evidence_env
        self.env_vars = {**self.env_vars, **choice.env_vars, **evidence, **oversub}

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
            # the library's default runs; the run says which table is missing
            self.algorithm_evidence = f'{evidence.NO_TABLE}:{self.entry.collective}:{err}'
            return None

    def _skip_unless_runnable(self, family: str) -> None:
        """Skip an algorithm the installed library lacks, or cannot run on this job."""
        if self.algorithm == alg.DEFAULT:
            return
        coll = self.entry.collective
        reason = mv2.cannot_force(self, coll, self.algorithm)
        self.skip_if(reason is not None, reason)
        offered = mpilib.listed_algorithms(family, self.search_path(), alg.known_names(family),
                                           (coll,))
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
        """OSU's ``-c`` applies: validation on, data to check, and OSU able to check it."""
        return self.validation and self.entry.data_options and self.entry.validates

    def reads_mpit(self) -> bool:
        """The evidence is MVAPICH2's MPI_T counters, read by our reader (:mod:`.mv2`)."""
        return self._evidence and families.get(self.mpi_family)['proof']['kind'] == 'mpit'

    @run_before('run')
    def build_mpit_reader(self):
        if self.reads_mpit():
            self.prerun_cmds = [*self.prerun_cmds, mv2.reader_build(self)]

    def wrapper_options(self) -> list[str]:
        rank0 = [x for k, v in self._rank0_env.items()
                 for x in ('--rank0-env', f'{k}={v}')]
        return [*(mv2.reader_options(self) if self.reads_mpit() else []), *rank0,
                *super().wrapper_options()]

    def osu_options(self) -> list[str]:
        dtype = self.effective_datatype()
        return ['-f', *(['-T', dtype] if dtype else []), *super().osu_options()]

    # -- sanity -----------------------------------------------------------------------

    def datatype_bytes(self) -> int:
        return catalogue.datatype_size(self.effective_datatype())

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
            if self.algorithm_evidence.startswith(evidence.NO_EVIDENCE):
                self.logger.warning(
                    f'{self.display_name}: algorithm {self.algorithm!r} ran unproven: the '
                    f'library counts no algorithm (MPI_T reader: no counters; MVAPICH2: '
                    f'configure --enable-mpit-pvars=mv2); recorded as {evidence.NO_EVIDENCE}')
            if self.algorithm_evidence.startswith(evidence.FORCED_NOT_PROVEN):
                self.logger.warning(
                    f'{self.display_name}: algorithm {self.algorithm!r} forced, not proven: '
                    f'{self.mpi_family} shows no trace of the algorithm that ran')
        elif self.algorithm_evidence:
            self.logger.warning(f'{self.display_name}: {self.algorithm_evidence}')
        self.check_results()
        return sn.evaluate(super().validate())

    def check_results(self) -> None:
        """Children that check the results in the job itself say here whether they hold."""


class CollectiveVerdict(CheckedInLaunch):
    """The verdict set: only the partition's smallest and largest scale (mapping ``core``),
    each launch checking its collective's results before it measures."""

    @run_after('setup')
    def only_end_scales(self):
        ends = topology.end_scales(self.topology)
        self.skip_if(self.scale not in ends,
                     f'scale {self.scale} is neither the smallest nor the largest of '
                     f'{self.current_partition.fullname} {ends}: --mode explore runs it')


#: The exploration's correctness run: its output file and iteration counts (warm-up, timed).
VALIDATION_OUTPUT = 'validation.out'
#: its stderr, apart: OSU's warnings (``Limiting max message size``) go there unbuffered and
#: would land inside a table row of the buffered stdout
VALIDATION_ERRORS = 'validation.err'
#: The correctness run's few iterations (written as the OSU reads them: 8.0b2 takes a lone
#: ``-x 2`` after ``-i`` for the iteration count)
VALIDATION_COUNTS = Counts(warmup=2, iterations=10)


class CollectiveSweep(CheckedInLaunch):
    """The exploration: every case, scale and mapping except what the verdict set measures.

    A forced algorithm's correctness is its own, checked in its own job: where our check
    knows the collective, inside the measured launch (the forced algorithm's environment is
    the process's), as in the verdict set; for the others, a run of the sweep with OSU's
    ``-c`` and few iterations before the measurement (same launcher, options and
    environment), whose ``Fail`` fails the test."""

    #: Run the library's default where the verdict set measures it too: a tuning study
    #: (``omb-review tune``) compares every algorithm with the default measured by the same
    #: sweep, with the same options (``-S measure_default=1``).
    #: :type: :class:`bool` :default: ``False``
    measure_default = variable(typ.Bool, value=False, loggable=False)

    @run_after('setup')
    def not_in_verdict(self):
        verdict = (not self.measure_default and self.algorithm == alg.DEFAULT
                   and self.mapping == 'core'
                   and self.benchmark in catalogue.verdict(self.entry.kind)
                   and self.scale in topology.end_scales(self.topology))
        self.skip_if(verdict, 'measured by the verdict set (reframe/checks/osu_collectives.py)')

    def osu_check_run(self) -> bool:
        """OSU's ``-c`` run before the measurement: validation on, OSU able to check the
        collective, our check not (it would cost a launch our check does not)."""
        return self.validates() and not self.checks_in_launch()

    def launches(self) -> int:
        return 2 if self.osu_check_run() else 1

    @run_before('run')
    def add_correctness_run(self):
        if not self.osu_check_run():
            return
        launcher = self.job.launcher.run_command(self.job)
        counts = options(self.benchmark, VALIDATION_COUNTS, self.osu_buckets())
        opts = ' '.join([*self.osu_options(), '-c', *counts])
        self.prerun_cmds = [*self.prerun_cmds, f'{launcher} {self.osu_program} {opts} > '
                            f'{VALIDATION_OUTPUT} 2> {VALIDATION_ERRORS}']
        # kept with the job's output: the correctness run's evidence, pass or fail
        self.keep_files = [*self.keep_files, VALIDATION_OUTPUT, VALIDATION_ERRORS]

    def check_results(self) -> None:
        super().check_results()
        if not self.osu_check_run():
            return
        try:
            parsing.parse_osu_output(self.read_output(VALIDATION_OUTPUT),
                                     expect_sizes=self.expected_sizes(), require_validation=True)
        except parsing.OsuParseError as err:
            errors = self.read_output(VALIDATION_ERRORS).strip().splitlines()[-3:]
            said = f' [{VALIDATION_ERRORS}: {" / ".join(errors)}]' if errors else ''
            raise SanityError(f'{self.benchmark} algorithm {self.algorithm!r} computed wrong '
                              f'results (OSU -c, {VALIDATION_OUTPUT}): {err}{said}') from None
