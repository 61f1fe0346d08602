"""Open MPI 4.1 and 5.0: coll/tuned's dynamic rules file (family record ``tuning.kind``
``ompi_rules``), written from a recommendation's rules, and the launch that proves it is read.

The format (open-mpi/ompi v4.1.4 and v5.0.10, ``ompi/mca/coll/tuned/coll_tuned_dynamic_file.c``;
``#`` starts a comment): the number of collectives; per collective its COLLTYPE id and number of
communicator entries; per entry the communicator size and number of message rules; per rule the
smallest message size, the algorithm id, fan-in/out and segment size. 5.0 also reads an optional
``rule-file-version-2`` header (then a fifth, optional number per rule: max requests); 4.1 does
not, so the v1 form is written for both (ids, sizes and defaults: ``data/tuning/ompi_rules.yaml``).

How the library chooses (``coll_tuned_dynamic_rules.c``): a communicator takes the last entry
whose size is <= its own, and the FIRST entry when it is smaller than all of them, so an entry
for 4 ranks alone would rule 2, 3 and 512 ranks too: every measured size is bracketed by
algorithm-0 entries at 0 and at size + 1. A call takes the last rule whose size is <= its
message size (bytes: OSU's size, times the ranks for alltoall and allgather). Algorithm 0 is
the fixed decision, the library's own choice: written for ``default`` steps and above
``last_size`` (4.1 would first run a forced ``coll_tuned_<coll>_algorithm``, 5.0 lets one
override the file: the environment sets none). Only coll/tuned reads the file. The load is
the narrowest Open MPI offers: the two variables that make tuned read it, and no component
excluded (:func:`touches`), so what another component serves itself (hcoll, ucc, libnbc's
non-blocking ones...) stays as it was. Not han (5.0, across nodes): it splits a collective
into steps on node-level and across-node sub-communicators that coll/tuned serves, which
reads the file at their sizes, so a rule for N ranks also runs in han's step across N nodes
(measured on the mini-cluster: the bcast rule for 2 ranks, 512 B, made bcast on 2 nodes 1.12x
and 1.18x slower). Where another component serves a ruled collective on the sweep's node count,
the proof says so and fails (tuned did not serve it); on more nodes the check judges those
sizes as the library's own, slower or not (:func:`omb_suite.rfm.tuned.not_reached`).

What the proof proves: a release build prints nothing about the file (every message of the
reader and of the decision code is ``OPAL_OUTPUT``, compiled out; a file it cannot read or parse
is dropped silently). The proof launch loads a canary, the real file with the rule's last step
(or, for a one-step rule, its last measured size) given an algorithm id no collective has: the
library's own ``MPI_ERR_ARG`` from the collective, after OSU printed exactly the rows below that
size, shows that this library parsed the file, took the entry of this communicator size and
converts OSU's sizes as the writer does (4.1 loses the error's text now and then in ORTE's
show_help relay: then the table cut right below that size, with ORTE's relay error, is the
evidence, and the evidence string says so); its verbose selection and ``mpi_show_mca_params`` show
that tuned served the collective with ``use_dynamic_rules`` and the file name as read. NOT shown
by the library: which valid algorithm each step ran. The file's id reaches the same
``*_intra_do_this`` switch as a forced ``coll_tuned_<coll>_algorithm`` (the sweep's proven
forcing, same fan-out and segment size), and the per-size times must follow the forced
algorithm's: that comparison is the check's, not this module's.
"""

from __future__ import annotations

import re
from functools import cache, partial
from importlib import resources
from typing import Any

from omb_suite import yamldata
from omb_suite.mpi import algorithms, evidence, families
from omb_suite.mpi.algorithms import AlgorithmError
from omb_suite.osu.parsing import OsuParseError, parse_osu_output
from omb_suite.tuning.rules import (
    DEFAULT,
    ProofRun,
    Rule,
    TuningError,
    TuningNotReached,
    TuningProofError,
)

#: The message rules of one communicator entry: (smallest size in the library's bytes, id).
Rows = tuple[tuple[int, int], ...]
_OWN_CHOICE: Rows = ((0, 0),)
_ERROR = re.compile(r'\*\*\* An error occurred in (MPI_\w+)')
_RELAY_LOST = re.compile(r'ORTE_ERROR_LOG: .* in file \S*orte/util/show_help\.c')


@cache
def _data() -> dict[str, Any]:
    path = resources.files('omb_suite') / 'data' / 'tuning' / 'ompi_rules.yaml'
    return yamldata.load(path.read_text())


def _collective(name: str) -> dict[str, Any]:
    known = _data()['collectives']
    if name not in known:
        raise TuningError(f"Open MPI's rules file: no COLLTYPE id and message-size rule for "
                          f"{name!r} (known: {', '.join(known)}); add its line to "
                          'data/tuning/ompi_rules.yaml from coll_tuned_decision_dynamic.c')
    return known[name]


def _check(rule: Rule) -> None:
    starts = [step.start for step in rule.steps]
    if not starts or starts[0] != 0 or starts != sorted(set(starts)) \
            or rule.last_size < starts[-1] or rule.ranks < 2:
        raise TuningError(f'{rule.collective} at {rule.ranks} ranks: a rule needs 2 ranks or '
                          'more and steps ascending from 0 up to its last measured size '
                          f'(got steps from {starts}, last size {rule.last_size})')


def _library_bytes(rule: Rule, size: int) -> int:
    """OSU's ``size`` as the message size the library looks the rule up with."""
    return size * (rule.ranks if _collective(rule.collective)['size'] == 'ranks' else 1)


def _algorithm_id(rule: Rule, name: str, version: str) -> int:
    if name == DEFAULT:
        return 0
    try:
        return int(algorithms.choose('openmpi', version, rule.collective, name).library_id)
    except AlgorithmError as err:
        raise TuningError(f'{rule.collective} at {rule.ranks} ranks: {err}') from None


def _rows(rule: Rule, version: str, canary_from: int | None = None) -> Rows:
    """The rule's message rules, the library's own choice above its last measured size; with
    ``canary_from`` (OSU bytes), the canary id from there up instead."""
    _check(rule)
    rows = [(_library_bytes(rule, s.start), _algorithm_id(rule, s.algorithm, version))
            for s in rule.steps]
    rows.append((_library_bytes(rule, rule.last_size) + 1, 0))
    if canary_from is not None:
        cut = _library_bytes(rule, canary_from)
        rows = [row for row in rows if row[0] < cut] + [(cut, _data()['canary'])]
    merged = [rows[0]]
    for row in rows[1:]:
        if row[1] != merged[-1][1]:
            merged.append(row)
    return tuple(merged)


def _entries(rules: list[Rule], rows: dict[Rule, Rows]) -> list[tuple[int, Rows]]:
    """One collective's communicator entries, ascending, each measured size bracketed by the
    library's own choice; two rules for one size (other node counts) must agree."""
    by_ranks: dict[int, Rows] = {}
    for rule in rules:
        if by_ranks.setdefault(rule.ranks, rows[rule]) != rows[rule]:
            raise TuningError(
                f'{rule.collective}: two rules for {rule.ranks} ranks differ (other node '
                "counts?); Open MPI's rules are keyed by communicator size only: write one "
                'file per node count')
    entries = [(0, _OWN_CHOICE)]
    for ranks in sorted(by_ranks):
        for size, rows_here in ((ranks, by_ranks[ranks]), (ranks + 1, _OWN_CHOICE)):
            if rows_here != entries[-1][1] and (size == ranks or size not in by_ranks):
                entries.append((size, rows_here))
    return entries


def _text(rules: list[Rule], rows: dict[Rule, Rows], version: str, what: str) -> str:
    names = sorted({rule.collective for rule in rules}, key=lambda c: _collective(c)['id'])
    fanout, segsize = _data()['faninout'], _data()['segsize']
    lines = [f'# Open MPI {version} coll/tuned dynamic rules ({what}), written by the OMB '
             'suite: coll_tuned_use_dynamic_rules=1 coll_tuned_dynamic_rules_filename=<this>',
             '# collectives', str(len(names))]
    for name in names:
        entries = _entries([r for r in rules if r.collective == name], rows)
        lines += [f'# {name}: COLLTYPE id, communicator entries', f"{_collective(name)['id']} "
                  f'{len(entries)}', '# ranks, message rules; from bytes, algorithm (0: '
                  "the library's own), fan-in/out, segment size"]
        for ranks, entry in entries:
            lines.append(f'{ranks} {len(entry)}')
            lines += [f'{size} {alg} {fanout if alg else 0} {segsize}' for size, alg in entry]
    return '\n'.join(lines) + '\n'


def write(rules: list[Rule], version: str) -> str:
    """The rules file for Open MPI ``version`` (4.1 or 5.0): :class:`TuningError` if a rule
    cannot be written (an unknown collective or algorithm, malformed steps, two rules for one
    communicator size that differ)."""
    return _text(rules, {rule: _rows(rule, version) for rule in rules}, version, 'recommended')


def touches(rules: list[Rule], version: str) -> tuple[list[str], str]:
    """The collectives the load can change, and what it changes, in words."""
    served = list(_data()['tuned_serves'])
    ruled = ', '.join(f'{r.collective} at {r.ranks} ranks up to {r.last_size} B' for r in rules)
    forced = algorithms.exclusions('openmpi', version).get('OMPI_MCA_coll', '^').lstrip('^')
    return served, (f'coll/tuned follows the rules file ({ruled}); the collectives tuned serves '
                    f'({", ".join(served)}) keep its fixed decision wherever the file has no '
                    'rule, as without the load; no component is excluded (a forced algorithm '
                    f'excludes {forced}), so what other components serve themselves (non-blocking, '
                    'persistent, neighbourhood collectives) is not touched; across nodes, '
                    "5.0's han runs steps on sub-communicators that tuned serves, which read "
                    'the file at their sizes (a rule for N ranks applies to its step across N '
                    'nodes): prove the file on the node counts the site runs')


def _canary_start(rule: Rule) -> int:
    """Where the proof's canary begins (OSU bytes): the last step's start, else (one step) the
    last measured size."""
    return rule.steps[-1].start or rule.last_size


#: The aborting rank waits before it exits, so that the runtime forwards OSU's last rows first:
#: without it PRRTE (5.0.11, 4 ranks on 2 cores) dropped the row right below the canary in 7
#: runs of 12, with 2 s in none of 12 (measured 2026-11-26; ``mpi_abort_delay``, ompi_mpi_abort).
ABORT_DELAY = {'OMPI_MCA_mpi_abort_delay': '2'}


def proofs(rule: Rule, version: str) -> list[ProofRun]:
    """One launch: the canary file (the run FAILS by design, with the library's MPI_ERR_ARG
    from the canary's start), with the record's evidence environment (coll_base_verbose,
    mpi_show_mca_params)."""
    start = _canary_start(rule)
    text = _text([rule], {rule: _rows(rule, version, canary_from=start)}, version,
                 f"proof canary: algorithm {_data()['canary']} from {start} B")
    return [ProofRun(f'canary-{rule.collective}-{rule.ranks}-from-{start}', text,
                     {**families.get('openmpi')['proof']['env'], **ABORT_DELAY},
                     partial(_expect_canary, rule, start))]


def _expect_canary(rule: Rule, start: int, output: str) -> str:
    """Evidence that the canary file was read and applied from ``start`` (OSU bytes) on, or
    :class:`TuningProofError` saying what the output shows instead."""
    served = _served(rule.collective, output)
    _shown(output, 'coll_tuned_use_dynamic_rules', lambda v: v == 'true')
    _shown(output, 'coll_tuned_dynamic_rules_filename', bool)
    function = f'MPI_{rule.collective.capitalize()}'
    cut, how = _failure(function, output)
    if cut is None:
        raise TuningProofError(
            f'Open MPI: no MPI_ERR_ARG from {function} under the canary (algorithm '
            f"{_data()['canary']} from {start} B): the library did not apply the file (not "
            'found, not parsed, or this communicator size or message size rule not reached)')
    sizes = _rows_before(output[:cut])
    if not sizes or max(sizes) >= start or max(sizes) * 2 < start:
        raise TuningProofError(
            f'Open MPI: {function} failed after the rows {sizes}, not right below {start} B '
            "where the canary begins: the library's message-size rule differs from the "
            f'writer\'s ({_collective(rule.collective)["size"]} bytes), or OSU printed no row '
            'below it (run the proof from a smaller size)')
    return (f'{served}:{rule.collective}:file read (canary algorithm {_data()["canary"]} '
            f'from {start} B: {how} after the {max(sizes)} B row)')


def _failure(function: str, output: str) -> tuple[int | None, str]:
    """Where the collective failed in ``output``, and how the library said so: its
    MPI_ERR_ARG, or (4.1, about one run in five on the loaded VM) ORTE's error on relaying
    that message from the aborting ranks to mpirun, which loses the text."""
    failed = _ERROR.search(output)
    if failed and failed[1] == function and 'MPI_ERR_ARG' in output[failed.start():]:
        return failed.start(), 'MPI_ERR_ARG'
    lost = _RELAY_LOST.search(output)
    if lost and not failed:
        return lost.start(), "an abort whose message ORTE's show_help relay lost"
    return None, ''


def _served(collective: str, output: str) -> str:
    try:
        served = evidence.parse_openmpi_coll_evidence(output).get(collective)
    except AlgorithmError as err:
        raise TuningProofError(str(err)) from None
    if served != 'tuned':
        said = (f'Open MPI: {collective} was served by {served or "no component it printed"}, '
                'not tuned, which alone reads the rules file: export the proof environment '
                '(coll_base_verbose=9) and exclude the component that took over '
                '(OMPI_MCA_coll=^...)')
        if served:
            raise TuningNotReached(said, served)
        raise TuningProofError(said)
    return served


def _shown(output: str, name: str, good: Any) -> None:
    value = evidence.shown_param(output, name)
    if value is None or not good(value):
        raise TuningProofError(f'Open MPI read {name}={value}: the tuning environment did not '
                               'reach the library (export it, and mpi_show_mca_params=enviro)')


def _rows_before(text: str) -> list[int]:
    """The sizes OSU printed before the collective failed (none: an empty list)."""
    try:
        return parse_osu_output(text).sizes()
    except OsuParseError:
        return []
