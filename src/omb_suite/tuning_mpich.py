"""MPICH's collective selection file (``MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE``), written
from a tuning recommendation (:mod:`omb_suite.tuning`), and the launch that proves it is read.

What MPICH does with it (pmodels/mpich v4.0.2 and v5.0.1, ``src/mpi/coll/src/coll_impl.c``,
``csel.c``, ``csel_container.c``, ``maint/gen_coll.py``):

- At ``MPI_Init`` the file replaces the whole MPIR-level selection tree (the built-in one is
  ``maint/tuning/coll/mpir/generic.json``). So the writer starts from that tree, kept verbatim
  in ``data/tuning/`` per version (``data/tuning/mpich.yaml``), and changes only the intra-
  communicator branch of each rule's collective: ``comm_size<=ranks-1`` keeps the library's
  branch, ``comm_size<=ranks`` holds the rule, ``comm_size=any`` the library's branch again.
  Within the rule, one ``avg_msg_size<=last byte of the step`` per step (allgather:
  ``total_msg_size``, OSU's size times the ranks), then ``...=any``: the library's branch.
  A ``default`` step is the library's own branch. Nested ``comm_size<N`` keys of the copied
  branches become ``comm_size<=N-1``: MPICH compares ``<`` when it prunes a communicator's
  tree but ``<=`` when it searches below a message-size key (csel.c ``MPIR_Csel_search``).
- The file is used only where the collective's ``MPIR_CVAR_<COLL>_INTRA_ALGORITHM`` is
  ``auto`` (its default) and the call reaches the MPIR level: ch4's own selection (compositions,
  POSIX shared-memory release_gather) comes first unless ``MPIR_CVAR_DEVICE_COLLECTIVES=none``,
  the forcing companion the sweep measured every forced algorithm with; the record's
  ``tuning.env`` sets it too. With it, every collective skips ch4's device layer, so a
  collective or size the file leaves alone runs MPICH's MPIR-level choice, not ch4's (pip's
  5.0.2, bcast at 2 ranks up to 1 KiB: 0.5 us instead of the default's 0.16 us; a ch4 file
  routing only the rule's sizes to MPIR would avoid that: docs/algorithms.md).
- An unknown key or algorithm name makes ``MPI_Init`` print ``unknown key``/``unrecognized
  key`` and abort (``MPIR_Assert``, compiled into Debian's and pip's builds). A missing file:
  4.0.2 reads it without checking ``open`` (it crashes), 5.0 fails ``MPI_Init`` with
  ``**opencolltuningfile``. A size no key matches would make ``MPIR_Assert(cnt)`` fail: every
  chain the writer makes ends with ``=any``.
- A selected algorithm runs without the checks of a forced one (no
  ``MPIR_CVAR_COLLECTIVE_FALLBACK``), and MPICH prints nothing about the one it chose.

The proof (:func:`proofs`): a canary file, identical to the real one but that the first size
of one step (the last from a size above 0; a step from 0 whole) selects another collective's
algorithm. MPICH parses it, and the collective's ``MPIR_<Coll>_allcomm_auto`` switch hits
``default: MPIR_Assert(0)`` at that size: OSU prints the rows below it and MPICH ``Assertion
failed``. That proves the file is read and that MPICH's size rule puts the boundary where the
writer did (for that collective, communicator size and step). It does not show that the real
file's algorithm ran: MPICH accepted its name at ``MPI_Init`` and nothing else tells. The file
also governs MPICH's own calls: 5.0's ``MPI_Init`` gathers addresses with ``MPI_Allgather``
(a canary over a whole allgather step aborted there), hence the one-size canary. MPICH 5 with
``MPIR_CVAR_DEBUG_SUMMARY=1`` also prints ``MPIR: <file>`` (ch4_init.c), checked where present.
"""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from importlib import resources
from typing import Any

from omb_suite import algorithms, yamldata
from omb_suite.mpilib import version_in
from omb_suite.tuning import DEFAULT, ProofRun, Rule, TuningError, TuningProofError

_FAMILY = 'mpich'
# a row's size at the start of a line below OSU's header: MPICH's abort message may cut the
# row after the size
_OSU_ROW = re.compile(r'^(\d+) {2,}', re.M)
_ASSERT = 'Assertion failed in file'
_SUMMARY = re.compile(r'^MPIR: (.+)$', re.M)
_REFUSED = re.compile(r'^(?:unknown|unrecognized) key .*$', re.M)  # csel.c, csel_container.c


@cache
def _config() -> dict[str, Any]:
    return yamldata.load((resources.files('omb_suite') / 'data' / 'tuning' / 'mpich.yaml')
                         .read_text())


def _default_tree(version: str) -> dict[str, Any]:
    """The MPIR-level selection tree MPICH ``version`` uses without a file."""
    for block in _config()['blocks']:
        if version_in(version, block['versions']):
            path = resources.files('omb_suite') / 'data' / 'tuning' / block['tree']
            return json.loads(path.read_text())
    ranges = ', '.join(b['versions'] for b in _config()['blocks'])
    raise TuningError(f'MPICH {version}: no built-in selection tree is known (versions '
                      f'{ranges}); add it to data/tuning/mpich.yaml')


def _strict(branch: Any) -> Any:
    """``branch`` with ``comm_size<N`` keys as ``comm_size<=N-1`` (what pruning meant)."""
    if not isinstance(branch, dict):
        return branch
    return {(f'comm_size<={int(key[10:]) - 1}' if re.fullmatch(r'comm_size<\d+', key)
             else key): _strict(value) for key, value in branch.items()}


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


def _steps_branch(rule: Rule, version: str, library: dict[str, Any],
                  canary: int | None = None) -> dict[str, Any]:
    """One message-size key per step, then ``=any``: the library's own branch. ``canary``:
    the index of a step whose container names another collective's algorithm."""
    key = _size_key(rule.collective)
    scale = rule.ranks if key['times_ranks'] else 1
    ends = [s.start - 1 for s in rule.steps[1:]] + [rule.last_size]
    branch: dict[str, Any] = {}
    for index, (step, end) in enumerate(zip(rule.steps, ends, strict=True)):
        if step.algorithm == DEFAULT:
            value: dict[str, Any] = copy.deepcopy(library)
        else:
            value = {container(rule.collective, step.algorithm, version): {}}
        if index == canary:
            # from a size above 0 the step's first size only: MPICH's own collectives (5.0's
            # MPI_Init gathers addresses with MPI_Allgather) then rarely meet the canary
            first = step.start if step.start > 0 else end
            branch[f"{key['key']}<={first * scale}"] = {
                f"algorithm={_config()['canary_algorithm']}": {}}
            if end == first:
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


def _tree(rules: list[Rule], version: str, canary: int | None = None) -> dict[str, Any]:
    _check(rules)
    tree = _default_tree(version)
    for collective in dict.fromkeys(r.collective for r in rules):
        node = tree[f'collective={collective}']
        library = _strict(node['comm_type=intra'])
        chain: dict[str, Any] = {}
        for rule in sorted((r for r in rules if r.collective == collective),
                           key=lambda r: r.ranks):
            if rule.ranks > 1 and f'comm_size<={rule.ranks - 1}' not in chain:
                chain[f'comm_size<={rule.ranks - 1}'] = copy.deepcopy(library)
            chain[f'comm_size<={rule.ranks}'] = _steps_branch(rule, version, library, canary)
        chain['comm_size=any'] = copy.deepcopy(library)
        node['comm_type=intra'] = chain
    return tree


def write(rules: list[Rule], version: str) -> str:
    """MPICH ``version``'s selection file: its own tree, with ``rules`` in their branches."""
    return json.dumps(_tree(rules, version), indent=1) + '\n'


def proofs(rule: Rule, version: str) -> list[ProofRun]:
    """One launch: the canary file of ``rule`` (its last step from a size above 0, else its
    first) must abort at that step's first size, rows below it printed."""
    index = max(i for i, s in enumerate(rule.steps) if s.start > 0 or i == 0)
    start = rule.steps[index].start
    text = json.dumps(_tree([rule], version, canary=index), indent=1) + '\n'
    return [ProofRun(f'canary-{rule.collective}-{rule.ranks}-from-{start}', text,
                     {'MPIR_CVAR_DEBUG_SUMMARY': '1'},
                     lambda output: expect_canary(output, rule.collective, start))]


def expect_canary(output: str, collective: str, start: int) -> str:
    """Evidence that the canary step took effect exactly from ``start`` bytes (OSU's sizes
    double, so the row below ``start`` is the last one printed), or TuningProofError."""
    refused = _REFUSED.search(output)
    if refused:
        raise TuningProofError(f'MPICH refused the file at MPI_Init: {refused.group(0)}')
    table = output[output.rfind('# Size'):] if '# Size' in output else ''
    sizes = [int(s) for s in _OSU_ROW.findall(table)]
    if _ASSERT not in output:
        raise TuningProofError(f'MPICH did not stop at the canary step of {collective} from '
                               f'{start} B (no {_ASSERT!r}): the file was not read, or its '
                               'collective never reached the MPIR level '
                               '(MPIR_CVAR_DEVICE_COLLECTIVES=none?)')
    if any(size >= start for size in sizes) or (start > 0 and not sizes) \
            or (sizes and 2 * max(sizes) < start):
        raise TuningProofError(f"MPICH stopped {collective} after sizes {sizes}, not at the "
                               f'canary step from {start} B: its size rule differs from the '
                               "writer's")
    source = _SUMMARY.findall(output)
    if source and source[-1] == 'MPII_coll_generic_json':
        raise TuningProofError('MPICH reports its built-in selection tree (MPIR: '
                               'MPII_coll_generic_json), not the file')
    read = f':read={source[-1]}' if source else ''
    return f'mpich-file:{collective}:stopped-at-{start}{read}'
