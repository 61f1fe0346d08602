"""ReFrame base classes shared by every OSU check.

A final check is a thin subclass that adds parameters (``benchmark``, ``placement``,
``algorithm``, ...); everything else lives here:

- :class:`PlacementProbeBuild`: fixture that compiles our placement probe with the
  environment's ``mpicc``.
- :class:`OsuRunBase`: finds the OSU program by absolute path, builds ``-m/-x/-i``,
  runs the placement probe before the benchmark, parses the output with
  :mod:`omb_suite.parsing`, turns the table into per-size performance variables and
  resolves references from ``reframe/references/<system>.yaml``.
- :class:`OsuPt2PtBase`: two ranks placed ``intra_socket``/``inter_socket``/``inter_node``.

Attributes a child must provide (by the end of ``setup``): ``benchmark`` (a parameter or
variable naming an entry of ``data/benchmarks.yaml``) and the job shape (``num_tasks``,
``num_tasks_per_node``), which :class:`OsuPt2PtBase` derives from ``placement``.
"""

from __future__ import annotations

import os
from pathlib import Path

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import fixture, run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

from omb_suite import benchmarks, binaries, parsing, placement, probe
from omb_suite.environs import repo_root
from omb_suite.failures import failure_cause

PROBE_OUTPUT = 'placement.out'


def references_dir() -> Path:
    return repo_root() / 'reframe' / 'references'


class PlacementProbeBuild(rfm.CompileOnlyRegressionTest):
    """Compile ``placement_probe.c`` once per environment with its MPI wrapper."""

    descr = 'Build the MPI placement probe'
    valid_systems = ['*']
    valid_prog_environs = ['+mpi']
    build_system = 'SingleSource'
    sourcepath = 'placement_probe.c'
    executable = 'placement_probe'
    build_locally = True

    @run_before('compile')
    def set_sources(self):
        self.sourcesdir = probe.source_dir()
        self.build_system.cflags = ['-O2']
        self.build_system.executable = self.executable

    @sanity_function
    def probe_built(self):
        return sn.assert_true(os.path.isfile(os.path.join(self.stagedir, self.executable)),
                              msg=f'placement probe was not built: see {self.stagedir}')


class OsuRunBase(rfm.RunOnlyRegressionTest):
    """Common logic of every OSU check (binary lookup, options, parsing, references).

    Runs in environments with an MPI and OSU (``+mpi +osu``); without any OSU only the
    placement probe runs, and ``omb-setup`` says once how to get OSU.
    """

    valid_systems = ['*']
    valid_prog_environs = ['+mpi +osu']
    maintainers = ['omb-regression-suite']

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

    #: Warm-up iterations (``-x``); ``None`` keeps OSU's default (thorough).
    #: :type: :class:`int` or ``None`` :default: ``None``
    warmup = variable(int, type(None), value=None, loggable=False)

    #: Timed iterations (``-i``); ``None`` keeps OSU's default (thorough).
    #: :type: :class:`int` or ``None`` :default: ``None``
    iterations = variable(int, type(None), value=None, loggable=False)

    #: Extra options appended to the benchmark command line.
    #: :type: :class:`List[str]` :default: ``[]``
    extra_opts = variable(typ.List[str], value=[], loggable=False)

    #: Free-form tag for the perflog (e.g. ``upgrade=pre``), set with ``-S session_tag=...``.
    session_tag = variable(str, value='')

    # Loggable facts (filled in by hooks; listed in the perflog format)
    num_nodes = variable(int, value=1)
    mpi_family = variable(str, type(None), value=None)
    mpi_version = variable(str, type(None), value=None)
    osu_version = variable(str, type(None), value=None)
    osu_spec = variable(str, type(None), value=None)
    mpi_spec = variable(str, type(None), value=None)
    spack_lock = variable(str, type(None), value=None)
    placement_observed = variable(str, value='')

    probe_build = fixture(PlacementProbeBuild, scope='environment')

    # -- setup ------------------------------------------------------------------------

    @run_after('setup')
    def record_environment_facts(self):
        extras = self.current_environ.extras
        for fact in ('mpi_family', 'mpi_version', 'osu_version', 'osu_spec', 'mpi_spec',
                     'spack_lock'):
            if extras.get(fact) is not None:
                setattr(self, fact, str(extras[fact]))

    @run_after('setup')
    def find_benchmark(self):
        """Resolve the OSU program by absolute path, or skip saying how to get OSU."""
        extras = self.current_environ.extras
        roots = [self.osu_root, extras.get('osu_root'), os.environ.get('OSU_ROOT')]
        search = os.pathsep.join([*(extras.get('env_path') or []),
                                  os.environ.get('PATH', '')])
        try:
            self.executable = str(binaries.find_osu_binary(self.benchmark, roots, search))
        except binaries.OsuNotFoundError as err:
            since = benchmarks.get(self.benchmark).since
            self.skip(f'{str(err).splitlines()[0]} (exists since OSU {since}); get OSU with '
                      f'`omb-setup` or `export OSU_ROOT=<prefix>`: see docs/getting-started.md')

    @run_after('setup')
    def use_external_references(self):
        """References live in ``reframe/references/<system>.yaml`` (absent = none).

        The directory is ``$RFM_REFERENCE_PREFIX`` or the repository's
        ``reframe/references``; an absolute ``$ref`` keeps ReFrame from resolving it
        against the check file's directory.
        """
        prefix = os.environ.get('RFM_REFERENCE_PREFIX') or references_dir()
        path = Path(prefix) / f'{self.current_system.name}.yaml'
        if path.is_file():
            self.reference = {'$ref': str(path.resolve())}

    # -- command line -----------------------------------------------------------------

    def sweep(self) -> tuple[int | None, int | None]:
        """The ``-m`` range this run asks for (``None`` = OSU's own default)."""
        return self.min_size, self.max_size or benchmarks.get(self.benchmark).max_size

    def osu_options(self) -> list[str]:
        """Benchmark options; children extend this (``-f``, ``-c``, ``-d cuda``...)."""
        opts: list[str] = []
        lo, hi = self.sweep()
        if lo is not None or hi is not None:
            opts += ['-m', f'{"" if lo is None else lo}:{"" if hi is None else hi}'
                     if lo is not None else str(hi)]
        if self.warmup is not None:
            opts += ['-x', str(self.warmup)]
        if self.iterations is not None:
            opts += ['-i', str(self.iterations)]
        return opts + list(self.extra_opts)

    def launcher_options(self) -> list[str]:
        """Launcher options that place the ranks; children define the placement."""
        return []

    @run_before('run')
    def prepare_run(self):
        """Set benchmark and launcher options, then run the placement probe with the very
        same launcher command before the benchmark."""
        self.executable_opts = self.osu_options()
        self.job.launcher.options = self.launcher_options()
        # ReFrame copies the job shape into the job only in run(); the probe needs it now
        self.job.num_tasks = self.num_tasks
        self.job.num_tasks_per_node = self.num_tasks_per_node
        launcher = self.job.launcher.run_command(self.job)
        exe = os.path.join(self.probe_build.stagedir, self.probe_build.executable)
        self.prerun_cmds = [*self.prerun_cmds, f'{launcher} {exe} > {PROBE_OUTPUT} 2>&1']

    # -- placement --------------------------------------------------------------------

    def check_placement(self, places: list[probe.RankPlace]) -> None:
        """Children verify the placement they asked for (raise :class:`ProbeError`)."""

    # -- sanity and performance -------------------------------------------------------

    def _read(self, name: str) -> str:
        path = os.path.join(self.stagedir, name)
        try:
            with open(path, errors='replace') as fp:
                return fp.read()
        except FileNotFoundError:
            raise SanityError(f'{name} is missing: the job did not run') from None

    def expected_sizes(self) -> list[int] | None:
        lo, hi = self.sweep()
        if hi is None:
            return None
        return parsing.expected_sizes(1 if lo is None else lo, hi)

    def parse_kwargs(self) -> dict:
        """Extra arguments for :func:`omb_suite.parsing.parse_osu_output`."""
        return {}

    @sanity_function
    def validate(self):
        """Placement as asked for, and a complete OSU table (never a silent pass)."""
        try:
            places = probe.parse_probe(self._read(PROBE_OUTPUT))
            self.placement_observed = probe.observed(places)
            self.check_placement(places)
        except probe.ProbeError as err:
            raise SanityError(str(err)) from None
        text = self._read(self.stdout.evaluate())
        try:
            self.osu_table = parsing.parse_osu_output(text, expect_sizes=self.expected_sizes(),
                                                      **self.parse_kwargs())
        except parsing.OsuParseError as err:
            cause = failure_cause(self._read(self.stderr.evaluate()), text)
            raise SanityError(f'{self.benchmark}: {err}' +
                              (f' [job: {cause}]' if cause else '')) from None
        if self.osu_table.version:
            self.osu_version = self.osu_table.version
        return True

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

    def _unit(self, column: str) -> str:
        return benchmarks.unit(column)

    @run_before('performance')
    def set_perf_variables(self):
        """``<metric>_<size>`` for each reported size, plus the curve figures."""
        info = benchmarks.get(self.benchmark)
        perf = {}
        for metric in info.metrics:
            for size in self.reported_sizes():
                perf[f'{metric}_{size}'] = sn.make_performance_function(
                    self._size_value, self._unit(metric), metric, size)
        for name, (column, how) in info.curve.items():
            perf[name] = sn.make_performance_function(self._curve_value, self._unit(column),
                                                      column, how)
        self.perf_variables = perf


def launch_options(test: rfm.RegressionTest, table, name: str) -> list[str]:
    """srun's ``--mpi`` plugin plus the placement/mapping options from ``table``."""
    part = test.current_partition
    launcher = part.launcher_type.registered_name
    family = test.current_environ.extras.get('mpi_family')
    return [*placement.srun_mpi_options(launcher, family, part.extras.get('srun_mpi')),
            *table(name, launcher, family, part.extras.get('placement_options'))]


class PlacedPair(rfm.RegressionTestPlugin):
    """Two ranks placed as ``self.placement`` says, skipped where impossible.

    The child defines ``placement`` (usually ``parameter(placement.placement_names())``):
    ``intra_socket``, ``inter_socket`` or ``inter_node``.
    Sets ``num_nodes`` (a loggable variable the test must declare).
    """

    @run_after('setup')
    def shape_job(self):
        """Job resources from the placement; skip when the partition cannot offer it."""
        where = placement.get_placement(self.placement)
        part = self.current_partition
        proc = part.processor
        per_socket = (proc.num_cpus_per_socket or proc.num_cpus or 2) // (
            proc.num_cpus_per_core or 1)
        nodes = part.extras.get('num_nodes',
                                1 if part.scheduler.registered_name == 'local' else 2)
        why = placement.unmet_needs(where, num_nodes=nodes, num_sockets=proc.num_sockets or 1,
                                    cores_per_socket=per_socket)
        self.skip_if(why is not None, f'{why}: {where.doc} is not possible on {part.fullname}')
        self.num_tasks = where.num_tasks
        self.num_tasks_per_node = where.tasks_per_node
        self.num_nodes = where.num_nodes

    def pair_options(self) -> list[str]:
        return launch_options(self, placement.placement_options, self.placement)


class OsuPt2PtBase(PlacedPair, OsuRunBase):
    """An OSU point-to-point benchmark between two ranks with a verified placement."""

    def launcher_options(self):
        return self.pair_options()

    def check_placement(self, places):
        probe.verify(self.placement, places)


__all__ = ['OsuPt2PtBase', 'OsuRunBase', 'PlacedPair', 'PlacementProbeBuild']
