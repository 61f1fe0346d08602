"""MPICH's collective selection file (``MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE``), written
from a tuning recommendation (:mod:`omb_suite.tuning.rules`), and the launch that proves it is read.

What MPICH does with it (pmodels/mpich v4.0.2 and v5.0.1, ``src/mpi/coll/src/coll_impl.c``,
``csel.c``, ``csel_container.c``, ``maint/gen_coll.py``):

- At ``MPI_Init`` the file replaces the whole MPIR-level selection tree (the built-in one is
  ``maint/tuning/coll/mpir/generic.json``). So the writer starts from that tree, kept verbatim
  in ``data/tuning/`` per version (``data/tuning/mpich.yaml``), and changes only the intra-
  communicator branch of each rule's collective: ``comm_size<=ranks-1`` keeps the library's
  branch, ``comm_size<=ranks`` holds the rule, ``comm_size=any`` the library's branch again.
  Within the rule, one ``avg_msg_size<=last byte of the step`` per step (allgather:
  ``total_msg_size``, OSU's size times the ranks), then ``...=any``: the library's branch.
  A ``default`` step is the library's own branch. MPICH compares ``comm_size<N`` as ``<``
  when it prunes a communicator's tree but as ``<=`` when it searches (csel.c
  ``MPIR_Csel_search``): copied below a message-size key, the keys pruning decided become
  ``comm_size<=N-1``; those the library's tree already searched (below a key of the call)
  stay as they are, and so does the library's branch beside the rules.
- The file is used only where the collective's ``MPIR_CVAR_<COLL>_INTRA_ALGORITHM`` is
  ``auto`` (its default) and the call reaches the MPIR level. Bcast and allreduce meet ch4's
  own selection first (its tree ``MPIDI_coll_generic_json``, ``maint/tuning/coll/ch4/
  generic.json``, read from ``MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE``), whose
  compositions hand a node's ranks to the POSIX layer (its own tree, release_gather: pip's
  5.0.2 small bcast at 2 ranks 0.16 us where MPIR's choice takes 0.5 us). So the writer adds a
  companion (:func:`extras`, :func:`ch4_file`): ch4's tree of the version, kept verbatim in
  ``data/tuning/``, with the same chain of communicator and message sizes, each non-default
  step sent to the composition that passes the whole communicator to the netmod, whose
  collective is ``MPIR_<Coll>_impl`` (``ch4_routes``: bcast gamma, allreduce beta;
  ``ch4_coll_impl.h``, ``ucx_coll.h``), ch4's own choice everywhere else. Alltoall and
  allgather need none: all their compositions end in ``MPIR_<Coll>_impl``.
  ``MPIR_CVAR_DEVICE_COLLECTIVES=none``, with which the sweep forced every algorithm, is not
  set: it sends every size of every collective to MPIR, the left-alone ones too.
- An unknown key or algorithm name makes ``MPI_Init`` print ``unknown key``/``unrecognized
  key`` and abort (``MPIR_Assert``, compiled into Debian's and pip's builds). A missing file:
  4.0.2 reads it without checking ``open`` (it crashes), 5.0 fails ``MPI_Init`` with
  ``**opencolltuningfile``. A size no key matches would make ``MPIR_Assert(cnt)`` fail: every
  chain the writer makes ends with ``=any``.
- A selected algorithm runs without the checks of a forced one (no
  ``MPIR_CVAR_COLLECTIVE_FALLBACK``), and MPICH prints nothing about the one it chose.

The proof (:func:`proofs`), loaded with the real companion: a canary file, identical to the
real one but that one size of one step (the last step from a size above 0 that reaches MPIR:
of bcast and allreduce a non-default one; else the first such step) selects another
collective's algorithm: the step's first size, or in a step from 0 the largest power of two.
Only one size, because the file also governs MPICH's own calls: 5.0's ``MPI_Init`` gathers
addresses with ``MPI_Allgather`` and allocates context ids with ``MPI_Allreduce`` (canaries over
a whole step from 0 aborted there, before OSU's first row). MPICH parses it, and the
collective's ``MPIR_<Coll>_allcomm_auto`` switch hits ``default: MPIR_Assert(0)`` at that size:
OSU prints the rows below it and MPICH ``Assertion failed``. That proves the file is read and
that MPICH's size rule puts that size where the writer did (for that collective, communicator
size and step); where ch4's own choice at that size does not reach MPIR (pip's 5.0.2 bcast:
the run without the companion goes through), it proves the companion read and routing that
size too. It does not prove the other boundaries, nor that the real file's algorithm ran:
MPICH accepted its name at ``MPI_Init`` and nothing else tells. MPICH 5 with
``MPIR_CVAR_DEBUG_SUMMARY=1`` also prints ``MPIR: <file>`` and ``MPID: <ch4 file>``
(ch4_init.c), checked where present: it must name the canary's own file. MPICH 4.0 names
none, so its proofs start with a read launch (:func:`.mpich_evidence.expect_read`): the real
file with an algorithm no MPICH has at the canary's place, refused at ``MPI_Init``; a canary
that then never fires was read and not reached (:class:`TuningNotReached`).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any

from omb_suite import yamldata
from omb_suite.mpi import algorithms
from omb_suite.mpi.mpilib import version_in
from omb_suite.tuning.mpich_evidence import CH4_VARIABLE, expect_canary, expect_read
from omb_suite.tuning.rules import DEFAULT, ProofRun, Rule, Step, TuningError

_FAMILY = 'mpich'
@cache
def _config() -> dict[str, Any]:
    return yamldata.load((resources.files('omb_suite') / 'data' / 'tuning' / 'mpich.yaml')
                         .read_text())


def _default_tree(version: str, level: str = 'tree') -> dict[str, Any]:
    """The selection tree MPICH ``version`` uses without a file: MPIR's (``level='tree'``) or
    ch4's (``'ch4_tree'``)."""
    for block in _config()['blocks']:
        if version_in(version, block['versions']):
            path = resources.files('omb_suite') / 'data' / 'tuning' / block[level]
            return json.loads(path.read_text())
    ranges = ', '.join(b['versions'] for b in _config()['blocks'])
    raise TuningError(f'MPICH {version}: no built-in selection tree is known (versions '
                      f'{ranges}); add it to data/tuning/mpich.yaml')


def _strict(branch: Any, pruned: bool = True) -> Any:
    """``branch``, to be placed below a message-size key, with each ``comm_size<N`` key that
    MPICH pruned where it stood (reached through communicator keys only) as
    ``comm_size<=N-1``: what pruning meant, now that the search meets it. A ``comm_size<N``
    already below a key of the call (``is_sendbuf_inplace``, a message size...) was searched
    there too, and stays as it is: the library's tree searched it as ``<= N`` (measured: MPICH
    5.0.2's alltoall at 8 ranks takes scattered, not brucks; rewritten, 1.4-2.8x slower)."""
    if not isinstance(branch, dict):
        return branch
    return {(f'comm_size<={int(key[10:]) - 1}' if pruned and re.fullmatch(r'comm_size<\d+', key)
             else key): _strict(value, pruned and key.startswith('comm_'))
            for key, value in branch.items()}


def container(collective: str, name: str, version: str) -> str:
    """The key MPICH takes for table algorithm ``name`` (``algorithm=MPIR_Bcast_intra_...``)."""
    if name not in algorithms.algorithms(_FAMILY, version, collective)[1:]:
        raise TuningError(f'MPICH {version} has no {collective} algorithm {name!r} '
                          '(data/algorithms/mpich.yaml)')
    if name in _config()['parameterised']:
        raise TuningError(f'MPICH {collective} algorithm {name!r} takes parameters in the '
                          'selection file (k=, tree_type=, ...), which this writer does not '
                          'write; force it with its CVAR instead')
    kind = 'allcomm' if name == 'nb' else 'intra'
    return f'algorithm=MPIR_{collective.capitalize()}_{kind}_{name}'


def _size_key(collective: str) -> dict[str, Any]:
    keys = _config()['size_keys']
    if collective not in keys:
        raise TuningError(f"MPICH's selection file: the writer knows how {', '.join(keys)} "
                          f'compare with OSU\'s message size, not {collective}')
    return keys[collective]


def _steps_branch(rule: Rule, library: dict[str, Any], leaf: Callable[[Step], str | None],
                  canary: int | None = None) -> dict[str, Any]:
    """One message-size key per step, then ``=any``: the library's own branch. ``leaf``: the
    step's container key, ``None`` for the library's branch; ``canary``: the index of a step
    whose container names another collective's algorithm."""
    key = _size_key(rule.collective)
    scale = rule.ranks if key['times_ranks'] else 1
    ends = [s.start - 1 for s in rule.steps[1:]] + [rule.last_size]
    branch: dict[str, Any] = {}
    for index, (step, end) in enumerate(zip(rule.steps, ends, strict=True)):
        chosen = leaf(step)
        value = copy.deepcopy(library) if chosen is None else {chosen: {}}
        if index == canary:
            # one size only: MPICH's own collectives (5.0's MPI_Init gathers addresses with
            # MPI_Allgather, allocates context ids with MPI_Allreduce) then rarely meet it
            poisoned = canary_size(step.start, end)
            if poisoned > step.start:
                branch[f"{key['key']}<={(poisoned - 1) * scale}"] = copy.deepcopy(value)
            branch[f"{key['key']}<={poisoned * scale}"] = {
                f"algorithm={_config()['canary_algorithm']}": {}}
            if end == poisoned:
                continue
        branch[f"{key['key']}<={end * scale}"] = value
    branch[f"{key['key']}=any"] = copy.deepcopy(library)
    return branch


def _check(rules: list[Rule]) -> None:
    seen: set[tuple[str, int]] = set()
    for rule in rules:
        starts = [s.start for s in rule.steps]
        if not starts or starts[0] != 0 or starts != sorted(set(starts)) \
                or rule.last_size < starts[-1]:
            raise TuningError(f'{rule.collective} at {rule.ranks} ranks: steps must ascend '
                              f'from 0 and end at or below last_size ({starts}, '
                              f'{rule.last_size})')
        if (rule.collective, rule.ranks) in seen:
            raise TuningError(f'{rule.collective} at {rule.ranks} ranks: two rules; MPICH\'s '
                              'file selects by communicator size, not by nodes')
        seen.add((rule.collective, rule.ranks))


def _chain(intra: dict[str, Any], rules: list[Rule], leaf: Callable[[Step], str | None],
           canary: int | None) -> dict[str, Any]:
    """A collective's intra-communicator node: the library's ``intra`` branch at every
    communicator size but those of ``rules``, which get their steps."""
    # beside the rules, the library's branch as it was (pruned and searched alike); below a
    # rule's message-size keys, with what pruning decided kept (see _strict)
    searched = _strict(intra)
    chain: dict[str, Any] = {}
    for rule in sorted(rules, key=lambda r: r.ranks):
        if rule.ranks > 1 and f'comm_size<={rule.ranks - 1}' not in chain:
            chain[f'comm_size<={rule.ranks - 1}'] = copy.deepcopy(intra)
        chain[f'comm_size<={rule.ranks}'] = _steps_branch(rule, searched, leaf, canary)
    chain['comm_size=any'] = copy.deepcopy(intra)
    return chain


def _splice(tree: dict[str, Any], rules: list[Rule],
            leaf_of: Callable[[str], Callable[[Step], str | None]],
            canary: int | None = None) -> dict[str, Any]:
    """``tree`` with each rule's collective's intra node replaced by its chain."""
    for collective in dict.fromkeys(r.collective for r in rules):
        node = tree[f'collective={collective}']
        node['comm_type=intra'] = _chain(node['comm_type=intra'],
                                         [r for r in rules if r.collective == collective],
                                         leaf_of(collective), canary)
    return tree


def _tree(rules: list[Rule], version: str, canary: int | None = None) -> dict[str, Any]:
    _check(rules)

    def leaf_of(collective: str) -> Callable[[Step], str | None]:
        return lambda step: (None if step.algorithm == DEFAULT
                             else container(collective, step.algorithm, version))
    return _splice(_default_tree(version), rules, leaf_of, canary)


def write(rules: list[Rule], version: str) -> str:
    """MPICH ``version``'s selection file: its own tree, with ``rules`` in their branches."""
    return json.dumps(_tree(rules, version), indent=1) + '\n'


def _routed(rules: list[Rule]) -> list[Rule]:
    """The rules whose collective ch4 decides before MPIR (``ch4_routes``)."""
    return [r for r in rules if r.collective in _config()['ch4_routes']]


def ch4_file(rules: list[Rule], version: str) -> str:
    """The companion: ch4's own tree, whose branches of ``rules`` send each non-default step
    to the composition that calls MPIR's selection (the main file), ch4's choice elsewhere."""
    _check(rules)
    routes = _config()['ch4_routes']

    def leaf_of(collective: str) -> Callable[[Step], str | None]:
        return lambda step: None if step.algorithm == DEFAULT else \
            f'composition={routes[collective]}'
    tree = _splice(_default_tree(version, 'ch4_tree'), _routed(rules), leaf_of)
    return json.dumps(tree, indent=1) + '\n'


def extras(rules: list[Rule], version: str, text: str) -> tuple[dict[str, str],
                                                                 dict[str, str]]:
    """The ch4 companion and its variable, where a rule's collective needs one."""
    if not _routed(rules):
        return {}, {}
    name = f'mpich-{version}-ch4-selection.json'
    return {name: ch4_file(rules, version)}, {CH4_VARIABLE: f'{{dir}}/{name}'}


def touches(rules: list[Rule], version: str) -> tuple[list[str], str]:
    """The collectives the load can change (every one in the trees it replaces: the file
    replaces MPIR's whole tree, the companion ch4's), and what it changes, in words. MPICH's
    narrower switches (``MPIR_CVAR_<COLL>_INTRA_ALGORITHM``) force one algorithm at every size
    and communicator size, so the files are the narrowest that keep the library's own choice
    elsewhere."""
    names = [k.removeprefix('collective=') for k in _default_tree(version)]
    ruled = ', '.join(f'{r.collective} at {r.ranks} ranks up to {r.last_size} B' for r in rules)
    companion = ("; ch4's tree likewise (MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE), "
                 'its branches of ' + ', '.join(sorted({r.collective for r in _routed(rules)}))
                 + ' routing only the steps to MPIR' if _routed(rules) else '')
    return names, (f"MPIR's whole selection tree is replaced by MPICH {version}'s own tree "
                   f'(data/tuning/), changed only in the branches of the rules ({ruled})'
                   f'{companion}; every other collective, communicator and message size '
                   'keeps the built-in branch')


def canary_size(start: int, end: int) -> int:
    """The one size of a step from ``start`` to ``end`` bytes that the canary poisons: its
    first, or for a step from 0 the largest power of two in it (OSU's sizes double)."""
    return start if start > 0 or end == 0 else 1 << (end.bit_length() - 1)


def _canary_step(rule: Rule) -> int:
    """The step the canary poisons: the last from a size above 0 that reaches the MPIR file
    (of a collective ch4 decides first, a non-default step: the companion routes only those),
    else the first that does."""
    routed = rule.collective in _config()['ch4_routes']
    reach = [i for i, s in enumerate(rule.steps) if not routed or s.algorithm != DEFAULT]
    if not reach:
        raise TuningError(f'{rule.collective} at {rule.ranks} ranks: every step is the '
                          "library's default: nothing to write or prove")
    above = [i for i in reach if rule.steps[i].start > 0]
    return above[-1] if above else reach[0]


def proofs(rule: Rule, version: str) -> list[ProofRun]:
    """One launch, with the real ch4 companion: the canary file of ``rule`` must abort at the
    canary step's poisoned size (:func:`_canary_step`, :func:`canary_size`), rows below it
    printed."""
    index = _canary_step(rule)
    ends = [s.start - 1 for s in rule.steps[1:]] + [rule.last_size]
    size = canary_size(rule.steps[index].start, ends[index])
    text = json.dumps(_tree([rule], version, canary=index), indent=1) + '\n'
    companion = bool(_routed([rule]))
    names = version_in(version, _config()['names_file_read'])
    name = f'canary-{rule.collective}-{rule.ranks}-at-{size}'
    canary = ProofRun(name, text, {'MPIR_CVAR_DEBUG_SUMMARY': '1'},
                      lambda output: expect_canary(output, rule.collective, size,
                                                   companion=companion, names_file=names,
                                                   loaded=ProofRun(name, '', {}, str).file_name))
    if names:
        return [canary]
    unknown = _config()['read_proof_algorithm']
    read = text.replace(f"algorithm={_config()['canary_algorithm']}", f'algorithm={unknown}')
    return [ProofRun(f'read-{rule.collective}-{rule.ranks}', read, {},
                     lambda output: expect_read(output, unknown)), canary]
