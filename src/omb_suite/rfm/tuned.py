"""A tuning file against the library's default, in one job: the proof that it helps.

The children (``reframe/checks/explore/osu_tuned.py``: the blocking collectives and the
non-blocking ones) are :class:`OsuCollectiveBase` with ``case`` (benchmark, 'default'),
``scale`` and ``mapping``. ``-S tuning_dir=DIR`` names what
``omb-review tune -o DIR`` wrote: ``DIR/<environment>/recommendation.json`` and the file.
It runs for every collective the load touches (the recommendation's ``touches``: the file's
and every other the load's variables change) and every collective of the verdict set, at
every scale, with or without a rule there (the child's scales are the sweep's and those it
skipped: :func:`scales_with_validation`); with ``-S measure_untouched=1`` every other
collective too, the evidence that the load leaves them at the default's speed. The job runs,
with the same launcher, ranks and OSU options:

- ``repeats`` runs of the default and with the load, alternating in ABBA order (the measured
  run, whose figures go to the perflog with algorithm ``tuned``, is the last loaded one);
- where a rule applies, the launches of the family's proof
  (:func:`omb_suite.tuning.files.proofs`): what the library's own output shows of the file
  being read and the algorithm it chose.

It fails where a proof fails, or where the load is slower than the default beyond the noise at
any size (:data:`COMPARED`: the latency of a blocking collective, the pure communication time
of a non-blocking one; :func:`omb_suite.tuning.stats.compare_runs`: the 99 % interval of the
ratio above 1, the ratio at least ``slower_threshold`` above); the comparison per size, each
ratio with its interval, is kept as ``tuning-comparison.json`` with the job's output
(``benchmarks/tuning_gain.py`` reads it).
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.exceptions import SanityError

from omb_suite.mpi import families, mpilib
from omb_suite.osu import catalogue, parsing
from omb_suite.tuning import files as tuning_files
from omb_suite.tuning import rules as tuning
from omb_suite.tuning import stats as tuning_stats


def scales_with_validation(measured: list[int]) -> list[int]:
    """The sweep's scales and those a tuning file must also be validated at: one above and one
    below each measured scale (where a default's choice steps: cliffs one rank apart) and the
    midpoint between neighbours (2, 4, 8 -> 2, 3, 4, 5, 6, 7, 8, 9; a scale no partition can
    hold is skipped saying why)."""
    out = set(measured)
    for low, high in zip(measured, [*measured[1:], None], strict=True):
        out.add(low + 1)
        if high is not None and high - low > 2:
            out.update({(low + high) // 2, high - 1})
    return sorted(out)


def not_reached(err: tuning.TuningNotReached, rule: tuning.Rule | None,
                nodes: int) -> str | None:
    """What the check says when another component served the ruled collective, if that leaves
    the job valid: the rule was proven on fewer nodes than the job spans (Open MPI 5's han
    serves bcast across nodes), so the rule's algorithm is not what runs and no gain is
    claimed; its sizes are judged as the library's own, slower or not (han's steps run on
    sub-communicators that coll/tuned serves, which read the file at their sizes). ``None``:
    on as many nodes as the sweep, the file had to reach it (the proof fails)."""
    if rule is None or nodes <= rule.nodes:
        return None
    return (f'{rule.collective}: on {nodes} nodes served by {err.served}, not by the rule '
            f'proven on {rule.nodes} (its steps may read the file at their sizes): judged as '
            "the library's own")


#: What the measured run is logged as (perflog column ``algorithm``).
TUNED = 'tuned'
COMPARISON = 'tuning-comparison.json'
#: The column compared, per catalogue kind: what the collective's algorithm decides (for a
#: non-blocking collective the communication alone, without the compute it overlaps).
COMPARED = {'collective': 'avg_latency', 'nonblocking': 'pure_comm'}


class TunedComparison(rfm.RegressionTestPlugin):
    """The tuned selection against the default, with the library's proof (see module)."""

    #: Where ``omb-review tune -o DIR`` wrote its files (required).
    tuning_dir = variable(str, value='', loggable=False)
    #: Runs of each (default, tuned), alternating. Five: the least that gives the ratio a
    #: 95 % interval (96.8 %; three: 90 %, :mod:`omb_suite.tuning.stats`).
    #: :type: :class:`int` :default: ``5``
    repeats = variable(int, value=5, loggable=False)
    #: Smallest slowdown (fraction) that fails, with the ratio's whole 99 % interval above 1.
    slower_threshold = variable(float, value=0.05, loggable=False)
    #: Also the collectives the load does not touch (the recommendation's ``touches``): the
    #: evidence, measured, that it leaves them at the default's speed.
    #: :type: :class:`bool` :default: ``False``
    measure_untouched = variable(typ.Bool, value=False, loggable=False)
    #: The recommendation's file loaded (set in setup).
    tuning_file = variable(str, value='')

    @run_after('init')
    def log_as_tuned(self):
        self.algorithm = TUNED
        self.descr = f'{self.benchmark} with the tuning file against the default'

    def _recommendation(self) -> dict:
        self.skip_if(not self.tuning_dir, 'give -S tuning_dir=DIR: the directory that '
                     "'omb-review tune ... -o DIR' wrote (docs/algorithms.md, 'Tuning files')")
        path = Path(self.tuning_dir) / self.current_environ.name / 'recommendation.json'
        self.skip_if(not path.is_file(), f'{path}: no recommendation for environment '
                     f'{self.current_environ.name} (omb-review tune --environ ...)')
        return json.loads(path.read_text())

    @run_after('setup')
    def force_algorithm(self):
        """Overrides the forced algorithm of :class:`OsuCollectiveBase`: the file's env."""
        family = self.mpi_family or ''
        self.mpi_version = self.mpi_version or mpilib.library_version(family,
                                                                      self.search_path())
        self._evidence, self._rank0_env = False, {}
        rec = self._recommendation()
        self.skip_if(not rec.get('file'), f"{rec['environ']}: no tuning file "
                     f"({rec.get('why_no_file', 'nothing recommended')})")
        mine = (rec['mpi_family'], rec['mpi_version'])
        self.skip_if(mine != (family, self.mpi_version),
                     f"stale: {rec['file']} is valid for {mine[0]} {mine[1]} only, this "
                     f'environment runs {family} {self.mpi_version}: not loaded; run the sweep '
                     'and omb-review tune again')
        self.skip_if(rec['mapping'] != self.mapping, f"the recommendation is for mapping "
                     f"{rec['mapping']}, not {self.mapping}")
        self.skip_if('touches' not in rec, 'recommendation.json does not say what the load '
                     'changes (an older omb-review tune wrote it): run omb-review tune again')
        coll = self.entry.collective
        verdict = self.benchmark in catalogue.verdict_set().get(self.entry.kind, [])
        self._touched = coll in rec['touches']
        self.skip_if(not (self._touched or verdict or self.measure_untouched),
                     f"the load does not change {coll}: {rec['changes']} "
                     '(-S measure_untouched=1 measures it all the same)')
        rules = [r for r in rec['rules'] if r['collective'] == coll
                 and r['ranks'] == self.num_tasks]
        self._rule = tuning.Rule(coll, rules[0]['ranks'], rules[0]['nodes'],
                                 tuple(tuning.Step(**s) for s in rules[0]['steps']),
                                 rules[0]['last_size']) if rules else None
        # absolute, as recommendation.json's load names it (a relative -S tuning_dir is
        # relative to where reframe was started)
        where = (Path(self.tuning_dir) / rec['environ']).resolve()
        self.tuning_file = str(where / rec['file'])
        # the files of this tuning_dir, wherever omb-review tune wrote them (its load names
        # their paths then: a copied or deployed directory would load the originals)
        mine = {rec['file'], *rec.get('companions', [])}
        self._load = {k: str(where / os.path.basename(v)) if os.path.basename(v) in mine else v
                      for k, v in rec['load'].items()}
        oversub = (families.get(family)['forcing']['oversubscribe_env']
                   if self.oversubscribe > 1 else {})
        self.env_vars = {**self.env_vars, **oversub, **self._load}

    def launches(self) -> int:
        """Launches in the job, for its time limit: the measured one and what it adds (the
        other runs of both, the proofs; the limit from one launch stopped 3-rank jobs on the
        mini-cluster before their measured run)."""
        rule = getattr(self, '_rule', None)
        proofs = len(tuning_files.proofs(self.mpi_family, self.mpi_version, rule)) if rule else 0
        return super().launches() + 2 * self.repeats - 1 + proofs

    def _command(self) -> str:
        launcher = self.job.launcher.run_command(self.job)
        return f"{launcher} {self.executable} {' '.join(self.executable_opts)}"

    @run_before('run')
    def add_comparison_runs(self):
        """Default and loaded runs alternating, then the proof launches (where a rule
        applies)."""
        unset = ' '.join(f'-u {k}' for k in self._load)
        cmds = []
        for i in range(self.repeats):
            pair = [f'env {unset} {self._command()} > default.{i}.out 2> default.{i}.err']
            if i < self.repeats - 1:
                pair.append(f'{self._command()} > tuned.{i}.out 2> tuned.{i}.err')
            # ABBA: every other pair loaded first, so that what favours the first (or the
            # second) launch of a pair falls on both alike (default first in every pair
            # measured ratios of 0.55-1.28 by job on the mini-cluster with no rule applying)
            cmds += pair[::-1] if i % 2 else pair
        self._proofs = (tuning_files.proofs(self.mpi_family, self.mpi_version, self._rule)
                        if self._rule else [])
        for p in self._proofs:
            Path(self.stagedir, p.file_name).write_text(p.text)
            load = {**self._load, **p.env}
            for key, value in self._load.items():
                if os.path.realpath(value) == os.path.realpath(self.tuning_file):
                    load[key] = os.path.join(self.stagedir, p.file_name)
            env = ' '.join(f'{k}={shlex.quote(v)}' for k, v in load.items())
            # stdout and stderr apart: OSU's rows are buffered, the library's error is not,
            # and the proof reads the rows before the error
            cmds.append(f'env {env} {self._command()} > proof-{p.name}.out '
                        f'2> proof-{p.name}.err || true')
        self.prerun_cmds = [*self.prerun_cmds, *cmds]
        self.keep_files = [*self.keep_files, COMPARISON, '*.out', '*.err']

    def _latencies(self, name: str) -> dict[int, float]:
        table = parsing.parse_osu_output(self.read_output(name))
        return table.column(COMPARED[self.entry.kind])

    def check_results(self) -> None:
        """The proofs hold, and the tuned selection is nowhere slower beyond the noise."""
        if self.is_dry_run():
            return
        said, rule = [], self._rule
        for p in self._proofs:
            try:
                said.append(p.expect(self.read_output(f'proof-{p.name}.out')
                                     + self.read_output(f'proof-{p.name}.err')))
            except tuning.TuningProofError as err:
                why = (not_reached(err, rule, self.num_nodes)
                       if isinstance(err, tuning.TuningNotReached) else None)
                if why is None:
                    raise SanityError(f'{self.benchmark}: proof {p.name!r} failed: {err} '
                                      f'(proof-{p.name}.out, .err)') from None
                said.append(why)
                rule = None
        self.algorithm_evidence = '; '.join(said) or None
        default = [self._latencies(f'default.{i}.out') for i in range(self.repeats)]
        tuned = [*(self._latencies(f'tuned.{i}.out') for i in range(self.repeats - 1)),
                 self._latencies(self.stdout.evaluate())]
        rows, slower = [], []
        for size in sorted(default[0]):
            d, t = [x[size] for x in default], [x[size] for x in tuned if size in x]
            outcome, iv, wide = tuning_stats.compare_runs(d, t, self.slower_threshold)
            alg = rule.algorithm_at(size) if rule else tuning.DEFAULT
            rows.append({'size': size, 'algorithm': alg, 'ruled': alg != tuning.DEFAULT,
                         'default_us': d, 'tuned_us': t, 'ratio': iv.ratio,
                         'ratio_low': iv.low, 'ratio_high': iv.high,
                         'coverage': iv.coverage, 'slower_low': wide.low,
                         'outcome': outcome})
            if outcome == tuning_stats.SLOWER:
                slower.append(f'{size} B ({iv.text()}; {wide.coverage:.1%}: from '
                              f'{wide.low:.2f})')
        Path(self.stagedir, COMPARISON).write_text(json.dumps(
            {'benchmark': self.benchmark, 'ranks': self.num_tasks, 'nodes': self.num_nodes,
             'environ': self.current_environ.name, 'mpi_family': self.mpi_family,
             'metric': COMPARED[self.entry.kind], 'touched': self._touched,
             'mpi_version': self.mpi_version, 'evidence': said, 'rows': rows}, indent=1))
        if slower:
            raise SanityError(f'{self.benchmark} at {self.num_tasks} ranks: the load is '
                              'slower than the default beyond the noise at '
                              f'{", ".join(slower)} (tuned/default, 95 % interval; '
                              f'{COMPARISON})')
