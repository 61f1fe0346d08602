"""The base of every OSU check: one launch that runs OSU through the per-rank wrapper.

:class:`OsuRunBase` finds the OSU program by absolute path, builds ``-m/-x/-i``, launches
``omb_rank.sh <osu program> <options>`` once (the wrapper reports each rank's host, CPU set, socket
and NUMA node on stderr and execs OSU, so the placement verified is the one OSU ran with), then in
sanity verifies the placement (:meth:`check_placement`, children define it), parses the OSU table
and turns it into per-size performance variables checked against
``reframe/references/<system>.yaml``.

Attributes a child must provide by the end of ``setup``: ``benchmark`` (an entry of
``data/catalogue.yaml``) and the job shape (``num_tasks``, ``num_tasks_per_node``, ``num_nodes``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

from omb_suite.launch.failures import with_cause
from omb_suite.launch.placements import Placing
from omb_suite.machine import probe
from omb_suite.machine.topology import Topology, of_partition
from omb_suite.osu import binaries, catalogue, curvelog, parsing, versions
from omb_suite.rfm import environ_facts, instance_guard, mv2, references
from omb_suite.rfm.circumstances import RunCircumstances
from omb_suite.rfm.environ_facts import ModulesLoaded
from omb_suite.rfm.hangs import KnownHangs
from omb_suite.rfm.job_cost import ScaleAware
from omb_suite.rfm.perflog_extras import environ_modules, perflog_dir
from omb_suite.setup.environs import repo_root


class OsuRunBase(RunCircumstances, ModulesLoaded, instance_guard.InsideInstance, KnownHangs,
                 ScaleAware, rfm.RunOnlyRegressionTest):
    """Common logic of every OSU check: what runs (binary lookup, options, one launch through
    the wrapper) and what it is checked against (parsing, placement, references). The plan of
    the run (the sweep OSU will run at the job's rank count, ``-x``/``-i`` as set or from the
    test's history, the predicted wall time and the limit from it) is
    :class:`~omb_suite.rfm.job_cost.ScaleAware`'s; the library's known hangs:
    :class:`~omb_suite.rfm.hangs.KnownHangs`. Runs in environments with an MPI (``+mpi``):
    omb-setup's with OSU, or a site's, whose job finds it (docs/site-config.md)."""

    valid_systems = ['*']
    valid_prog_environs = environ_facts.OSU_ENVIRONS
    maintainers = ['omb-regression-suite']
    PREPARES_ONLY = ('use_external_references',)

    #: OSU install prefix or build tree to take the program from; overrides the
    #: environment's ``osu_root`` and ``$OSU_ROOT``.
    #: :type: :class:`str` :default: ``''`` (use the environment's OSU)
    osu_root = variable(str, value='', loggable=False)

    #: Smallest message size of the sweep (``-m MIN:``); ``None`` = OSU's default.
    #: :type: :class:`int` or ``None`` :default: ``None``
    min_size = variable(int, type(None), value=None, loggable=False)

    #: Largest message size of the sweep (``-m :MAX``); ``None`` = the benchmark's
    #: full sweep from the catalogue (e.g. 4 MiB for point-to-point).
    #: :type: :class:`int` or ``None`` :default: ``None``
    max_size = variable(int, type(None), value=None, loggable=False)

    #: Message sizes reported as performance variables ``<metric>_<size>`` (sizes outside
    #: the sweep are ignored). Covers small, eager/rendezvous switch and large messages.
    #: :type: :class:`List[int]` :default: ``[1, 8, 1024, 65536, 1048576, 4194304]``
    message_sizes = variable(typ.List[int], value=[1, 8, 1024, 65536, 1048576, 4194304],
                             loggable=False)

    #: Extra options appended to the benchmark command line.
    #: :type: :class:`List[str]` :default: ``[]``
    extra_opts = variable(typ.List[str], value=[], loggable=False)

    #: Free-form tag for the perflog (e.g. ``upgrade=pre``), set with ``-S session_tag=...``.
    session_tag = variable(str, value='')

    #: Hold the figures to the system's references (``reframe/references``); ``-S
    #: enforce_references=0``: log them only (``scripts/upgrade.sh side-by-side``, where the
    #: pairs of launches are the judge and a reference missed on a busy launch is noise).
    enforce_references = variable(typ.Bool, value=True, loggable=False)

    # Loggable facts (filled in by hooks; listed in the perflog format)
    num_nodes = variable(int, value=1)
    mpi_family = variable(str, type(None), value=None)
    mpi_version = variable(str, type(None), value=None)
    osu_version = variable(str, type(None), value=None)
    osu_spec = variable(str, type(None), value=None)
    mpi_spec = variable(str, type(None), value=None)
    spack_lock = variable(str, type(None), value=None)
    environ_modules = variable(str, type(None), value=None)
    #: The series the environment's measurements continue across upgrades (its ``extras``
    #: ``series``, e.g. ``omb-setup --module ... --series openmpi``; ``None``: omb-review
    #: derives it from the environment's name).
    series = variable(str, type(None), value=None)
    placement_observed = variable(str, value='')

    @run_after('init')
    def tag_what_runs(self):
        """Tags to select by: the OSU program and where its ranks go (``-t osu_alltoall``,
        ``-t intra_socket``). Cases that know their program only later tag themselves."""
        where = {getattr(self, 'placement', None), getattr(self, 'mapping', None)}
        self.tags = self.tags | ({getattr(self, 'benchmark', None)} | where) - {None, ''}

    def perflog_location(self) -> Path:
        """Where ReFrame writes this partition's perflogs (the cost model's fit reads them)."""
        return perflog_dir(self) or super().perflog_location()

    # -- setup ------------------------------------------------------------------------

    @property
    def topology(self) -> Topology:
        return of_partition(self.current_partition)

    def search_path(self) -> str:
        """The environment's ``PATH`` (its MPI tools first), as the job will see it."""
        return environ_facts.search_path(self.current_environ)

    @run_after('setup')
    def record_environment_facts(self):
        extras = self.current_environ.extras
        for fact in ('osu_version', 'osu_spec', 'mpi_spec', 'spack_lock', 'series'):
            if extras.get(fact) is not None:
                setattr(self, fact, str(extras[fact]))
        self.mpi_family, self.mpi_version = environ_facts.mpi_library(self.current_environ)
        launcher = self.current_partition.launcher_type.registered_name
        reason = environ_facts.unknown_family(self.current_environ, launcher)
        self.skip_if(reason is not None, reason)
        self.environ_modules = environ_modules(self)

    @run_after('setup')
    def find_benchmark(self):
        self.osu_program = self.program()

    def program(self) -> str:
        """The OSU program by absolute path, or a skip saying how to get it."""
        absent = catalogue.get(self.benchmark).missing_from(self.osu_version) or (
            versions.lacks(self.benchmark, self.osu_version)
            and f'OSU {self.osu_version} installs no {self.benchmark}')
        if absent:
            self.skip(f'{absent}: build an OSU release that has it (docs/spack.md)')
        roots = [self.osu_root, *environ_facts.osu_roots(self.current_environ),
                 os.environ.get('OSU_ROOT')]
        try:
            found = binaries.find_osu_binary(self.benchmark, roots, self.search_path())
        except binaries.OsuNotFoundError as err:
            info = catalogue.get(self.benchmark)
            needs = f', and OSU builds it only against an MPI with {info.needs}' \
                if info.needs else ''
            where = environ_facts.where_looked(self.current_environ)
            how = ("put OSU on that PATH (the environment's modules or env_vars) or set its "
                   'extras osu_root: see docs/site-config.md' if where else
                   'get OSU with `omb-setup` or `export OSU_ROOT=<prefix>`: see '
                   'docs/getting-started.md')
            self.skip(f'{str(err).splitlines()[0].rstrip(".")}{where} (exists since OSU '
                      f'{info.since}{needs}); {how}')
        self.osu_version = self.osu_version or versions.banner_version(found)
        lacks = versions.not_built(found)
        self.skip_if(lacks is not None, f'{found.name} of OSU {self.osu_version} was built '
                     f'without {lacks} (this MPI lacks them): it only says so and exits')
        if note := versions.unknown_note(self.osu_version):
            self.logger.warning(note)
        return str(found)

    @run_before('performance')
    def use_external_references(self):
        """References live in ``reframe/references/<system>.yaml`` beside the checks run
        (absent = none); an absolute ``$ref`` keeps ReFrame from resolving it against the
        check's directory. Set before the performance stage: the key's levels (node and rank
        counts) are set by the children's set-up hooks, which run after this class's."""
        if not self.enforce_references:
            self.require_reference = False     # --mode upgrade asks for one: none is held
            return
        where = references.references_dir(self.prefix, repo_root() / 'reframe' / 'references')
        path = where / f'{self.current_system.name}.yaml'
        reference = references.reference_of(self, path)
        if reference is not None:
            self.reference = reference

    def sweep(self) -> tuple[int | None, int | None]:
        """The ``-m`` range this run asks for (``None`` = OSU's own default)."""
        info = catalogue.get(self.benchmark)
        if not info.has_sizes:
            return None, None
        if info.fixed_size:
            return None, 1
        return self.min_size, self.max_size or info.max_size

    def osu_options(self) -> list[str]:
        """Benchmark options; children extend this (``-f``, ``-c``, ``-d cuda``...)."""
        opts: list[str] = []
        lo, asked = self.sweep()
        hi = self.sweep_max(asked)
        if lo is not None or hi is not None:   # 8.0b2 misreads '-m MAX': ':MAX' there
            alone = lo is None and versions.supports(self.osu_version, 'max_size_alone')
            span = f'{"" if lo is None else lo}:{"" if hi is None else hi}'
            opts += ['-m', str(hi) if alone else span]
        return opts + self.count_options() + self.mem_limit_options() + list(self.extra_opts)

    def launcher_options(self) -> list[str]:
        """Launcher options that place the ranks; children define the placement."""
        return []

    def placing(self) -> Placing | None:
        """The placement or mapping the ranks follow (children say which), or ``None``."""
        return None

    @run_before('run')
    def bind_as_mvapich2_needs(self):
        """A library that binds the ranks itself (MVAPICH2) gets its own variables for the
        placement or mapping (:mod:`.mv2`); ``{}`` for every other library."""
        where = self.placing()
        if where is not None:
            self.env_vars = {**self.env_vars, **mv2.binding_env(self, where)}

    def wrapper_options(self) -> list[str]:
        """Options of the per-rank wrapper before the OSU program (``--gpu`` for GPUs)."""
        return []

    @run_before('run')
    def launch_through_wrapper(self):
        """One launch: the per-rank wrapper, then OSU with its options."""
        wrapper = os.path.join(self.stagedir, probe.WRAPPER)
        shutil.copyfile(os.path.join(probe.source_dir(), probe.WRAPPER), wrapper)
        os.chmod(wrapper, 0o755)
        self.executable = f'./{probe.WRAPPER}'
        if versions.supports(self.osu_version, 'colour'):
            self.env_vars = {**self.env_vars, 'NO_COLOR': '1'}   # plain tables in the logs
        self.executable_opts = [*self.wrapper_options(), self.osu_program, *self.osu_options()]
        self.job.launcher.options = self.launcher_options()
        # ReFrame copies the job shape into the job only in run(); launches that children add
        # before or after the measured one (job.launcher.run_command) need it now
        self.job.num_tasks = self.num_tasks
        self.job.num_tasks_per_node = self.num_tasks_per_node

    # -- sanity and performance -------------------------------------------------------

    def read_output(self, name: str) -> str:
        """A file of the stage directory; a missing one says the job did not run."""
        try:
            with open(os.path.join(self.stagedir, name), errors='replace') as fp:
                return fp.read()
        except FileNotFoundError:
            raise SanityError(f'{name} is missing: the job did not run') from None

    def check_placement(self, places: list[probe.RankPlace]) -> None:
        """Children verify the placement they asked for (raise ``WrongPlacement``)."""

    def expected_sizes(self) -> list[int] | None:
        """The sizes OSU will run at this rank count (:meth:`sweep_plan`)."""
        plan = self.sweep_plan()
        return None if plan is None else plan.sizes

    def parse_kwargs(self) -> dict:
        """Extra arguments for :func:`omb_suite.osu.parsing.parse_osu_output`."""
        return {}

    def verify_placement(self, stderr: str) -> None:
        """Every rank reported, and where: as the placement says (else asked vs observed)."""
        try:
            places = mv2.bound_places(
                self, probe.parse_probe(stderr, expect_ranks=self.num_tasks), stderr)
            self.placement_observed = probe.observed(places)
            self.check_placement(places)
        except (probe.ProbeError, probe.WrongPlacement) as err:
            raise SanityError(with_cause(str(err), stderr)) from None

    @sanity_function
    def validate(self):
        """Not stopped at its limit, placement as asked for, and a complete OSU table up to
        where OSU stops at this rank count (never a silent pass)."""
        stderr = self.read_output(self.stderr.evaluate())
        text = self.read_output(self.stdout.evaluate())
        expected, skipped = self.expected_sizes(), self.not_measured(stderr)
        if expected is not None:
            expected = [s for s in expected if s not in skipped]
        try:
            table = parsing.parse_osu_output(text, expect_sizes=expected, **self.parse_kwargs())
        except parsing.OsuParseError as err:
            table, problem = None, err
        stopped = self.stopped_at_limit(text, stderr, whole_result=table is not None)
        if stopped:
            self.accept_hang_after_result(stopped, whole_result=table is not None)
        self.verify_placement(stderr)
        if table is None:
            raise SanityError(with_cause(f'{self.benchmark}: {problem}', stderr, text))
        self.osu_table = table
        if self.osu_table.version:
            self.osu_version = self.osu_table.version
        return True

    def expect_meta(self, **want: object) -> None:
        """What OSU printed in its header (``# Window Size: 64``...) must be what was asked."""
        if self.is_dry_run():
            return
        for key, value in want.items():
            seen = self.osu_table.meta.get(key)
            if seen != str(value):
                raise SanityError(f'{self.benchmark} ran with {key.replace("_", " ")} {seen!r}, '
                                  f'asked for {str(value)!r}')

    def _size_value(self, column: str, size: int) -> float:
        return float(self.osu_table.value(column, size))

    def _curve_value(self, column: str, how: str) -> float:
        values = list(self.osu_table.column(column).values())
        return float(min(values) if how == 'min' else max(values))

    def reported_sizes(self) -> list[int]:
        expected = self.expected_sizes()
        if expected is None:
            return list(self.message_sizes)
        return [s for s in self.message_sizes if s in expected]

    @run_before('performance')
    def set_perf_variables(self):
        self.perf_variables = self.performance_variables()

    @run_after('sanity')
    def keep_whole_curve(self):
        """Append the whole OSU table beside the perflog (``<TestClass>.curves.jsonl``, see
        :mod:`omb_suite.osu.curvelog`): the perflog keeps only the reported sizes.  After sanity,
        not performance: a run that misses its references is the one whose curve matters."""
        directory = perflog_dir(self)
        if directory is None or getattr(self, 'osu_table', None) is None:
            return
        curvelog.append(curvelog.path_for(directory, type(self).__name__), curvelog.record(
            self.osu_table, system=self.current_system.name,
            partition=self.current_partition.name, environ=self.current_environ.name,
            name=self.name, jobid=self.job.jobid, benchmark=self.benchmark,
            job_completion_time_unix=self.job.completion_time, osu_version=self.osu_version))

    def performance_variables(self) -> dict:
        """``<metric>_<size>`` for each reported size, plus the curve figures."""
        info = catalogue.get(self.benchmark)
        perf = {}
        for metric in info.metrics:
            for size in self.reported_sizes():
                perf[f'{metric}_{size}'] = sn.make_performance_function(
                    self._size_value, catalogue.unit(metric), metric, size)
        for name, (column, how) in info.curve.items():
            perf[name] = sn.make_performance_function(self._curve_value, catalogue.unit(column),
                                                      column, how)
        return perf
