"""What MPICH's output shows of a tuning file (:mod:`omb_suite.tuning.mpich`'s proofs): the
canary's stop, the file MPICH 5 names in its summary, the read proof refused at ``MPI_Init``.
Pure functions of a launch's output; each returns the evidence as a short string or raises
:class:`omb_suite.tuning.rules.TuningProofError` (:class:`TuningNotReached` where the file was
read and the ruled branch not taken)."""

from __future__ import annotations

import os
import re

from omb_suite.tuning.rules import TuningNotReached, TuningProofError

#: the variable that loads the ch4 companion (ch4_init.c)
CH4_VARIABLE = 'MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE'
# a row's size at the start of a line below OSU's header: MPICH's abort message may cut the
# row after the size
_OSU_ROW = re.compile(r'^(\d+) {2,}', re.M)
_ASSERT = 'Assertion failed in file'
_SUMMARY = re.compile(r'^MPIR: (.+)$', re.M)
_DEVICE_SUMMARY = re.compile(r'^MPID: (.+)$', re.M)
_REFUSED = re.compile(r'^(?:unknown|unrecognized) key .*$', re.M)  # csel.c, csel_container.c


def expect_read(output: str, unknown: str) -> str:
    """Evidence that the ranks read the file: MPI_Init refused the algorithm no MPICH has,
    before OSU's first row; or TuningProofError."""
    refused = [m for m in _REFUSED.findall(output) if unknown in m]
    if not refused or _OSU_ROW.search(output):
        raise TuningProofError(f'MPICH did not refuse the read proof\'s unknown algorithm '
                               f'{unknown} at MPI_Init: the ranks did not read the file '
                               '(its variable not passed to them?)')
    return f'mpich-file:read ({refused[0]} at MPI_Init)'


_BUILT_IN = 'MPII_coll_generic_json'  # what MPICH 5's summary names for its own MPIR tree


def _read(output: str) -> str | None:
    """The MPIR tree MPICH says it read (MPIR_CVAR_DEBUG_SUMMARY; MPICH 4 says nothing)."""
    return (_SUMMARY.findall(output) or [None])[-1]


def expect_canary(output: str, collective: str, start: int, *, companion: bool = False,
                  names_file: bool = True, loaded: str | None = None) -> str:
    """Evidence that the canary took effect exactly at ``start`` bytes (OSU's sizes
    double, so the row below ``start`` is the last one printed), or TuningProofError.
    ``companion``: the launch loads the ch4 companion too (MPICH 5 names the file it read);
    ``names_file`` False: the library names no file it read (MPICH 4.0), a read proof beside
    this one shows it read; ``loaded``: the name of the file the launch loads, which a library
    that names the file it read must name."""
    refused = _REFUSED.search(output)
    if refused:
        raise TuningProofError(f'MPICH refused the file at MPI_Init: {refused.group(0)}')
    source = _read(output)
    if loaded and source not in (None, _BUILT_IN) and os.path.basename(source) != loaded:
        raise TuningProofError(f'MPICH read {source}, not the proof\'s file {loaded}: the '
                               "proof's variable did not reach the ranks")
    table = output[output.rfind('# Size'):] if '# Size' in output else ''
    sizes = [int(s) for s in _OSU_ROW.findall(table)]
    if _ASSERT not in output:
        said = (f'MPICH did not stop at the canary of {collective} at {start} B (no '
                f'{_ASSERT!r}): the file was not read, or its collective never reached the MPIR '
                f'level (ch4 companion {CH4_VARIABLE} not loaded?)')
        if _read(output) not in (None, _BUILT_IN):
            # MPICH 5 names the file it read: read, and the ruled branch not taken (on more
            # nodes, a branch or node-aware composition of its tree the rule is not in)
            raise TuningNotReached(said, "another branch of MPICH's tree (the file was read)")
        if not names_file:
            # MPICH 4.0 names no file: the read proof launched beside this one shows it read
            raise TuningNotReached(said, "another branch of MPICH's tree (the read proof shows "
                                   'the file read)')
        raise TuningProofError(said)
    if any(size >= start for size in sizes) or (start > 0 and not sizes) \
            or (sizes and 2 * max(sizes) < start):
        raise TuningProofError(f"MPICH stopped {collective} after sizes {sizes}, not at the "
                               f'canary at {start} B: its size rule differs from the '
                               "writer's")
    source = _read(output)
    if source == _BUILT_IN:
        raise TuningProofError('MPICH reports its built-in selection tree (MPIR: '
                               'MPII_coll_generic_json), not the file')
    read = f':read={source}' if source else ''
    device = _DEVICE_SUMMARY.findall(output)
    if companion and device and device[-1] == 'MPIDI_coll_generic_json':
        raise TuningProofError("MPICH's ch4 level reports its built-in tree (MPID: "
                               'MPIDI_coll_generic_json), not the companion file')
    read += f':ch4={device[-1]}' if companion and device else ''
    return f'mpich-file:{collective}:stopped-at-{start}{read}'
