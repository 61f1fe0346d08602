"""Intel MPI's documented tuning form: ``I_MPI_ADJUST_<COLL>`` with conditions, written as an
environment file (``KEY=VALUE`` lines) from a tuning recommendation (:mod:`omb_suite.tuning.rules`).

Intel MPI Library Developer Reference for Linux OS 2021.x, "I_MPI_ADJUST Family Environment
Variables": ``I_MPI_ADJUST_<opname>="<presetid>[:<conditions>][;<presetid>:<conditions>...]"``,
a condition ``<l>-<m>@<p>-<q>`` selects messages of ``l`` to ``m`` bytes, inclusive, on ``p``
to ``q`` processes; preset 0 is the library's own selection. The steps' bounds are written as
OSU's sizes, i.e. taking Intel's message size to be the buffer per process (bcast, allreduce:
count x type size; alltoall: send count x type size; allgather: receive count x type size).
That is an assumption: the reference's excerpts read here do not define it per collective,
and Intel MPI prints nothing that could check it (MPICH's, by contrast, is proven). The JSON
tuning files (``I_MPI_TUNING``, ``I_MPI_TUNING_BIN``) are written by ``mpitune``; the
reference documents the variables, not the format, so they are not written.
Sizes above a rule's ``last_size``, other process counts and other collectives match no
condition written here; that they keep the library's own selection is the reading of the
reference (conditions select), not something a run here can show.

What can be proven (pip Intel MPI 2021.18.1 here): with ``I_MPI_DEBUG=6`` the library echoes
each variable as read at ``MPI_Init`` (``[0] MPI startup(): I_MPI_ADJUST_BCAST=<value>``) and
rejects a value it cannot parse (``Incorrect adjust value: BCAST=..., will be ignored``). An
out-of-range preset id is echoed without complaint, and nothing shows which preset ran: the
proof is that the value was read and parsed, and its evidence says
:data:`omb_suite.mpi.evidence.FORCED_NOT_PROVEN`, as for a forced preset.
"""

from __future__ import annotations

import re

from omb_suite.mpi import algorithms, families
from omb_suite.mpi.evidence import FORCED_NOT_PROVEN
from omb_suite.tuning.rules import DEFAULT, ProofRun, Rule, TuningError, TuningProofError

_FAMILY = 'intel-mpi'
_REJECTED = re.compile(r'Incorrect adjust value: (\w+)=')


def _variable(collective: str) -> str:
    return families.get(_FAMILY)['forcing']['variable'].format(COLLECTIVE=collective.upper())


def _preset(rule: Rule, name: str, version: str) -> str:
    """The preset id of table algorithm ``name`` (``choose`` refuses unknown names)."""
    if name == DEFAULT:
        return '0'
    try:
        return str(algorithms.choose(_FAMILY, version, rule.collective, name).library_id)
    except algorithms.AlgorithmError as err:
        raise TuningError(str(err)) from None


def _conditions(rule: Rule, version: str) -> list[str]:
    """``<preset>:<first>-<last>@<ranks>-<ranks>`` per step, within what was measured."""
    ends = [s.start - 1 for s in rule.steps[1:]] + [rule.last_size]
    return [f'{_preset(rule, step.algorithm, version)}:{step.start}-{end}'
            f'@{rule.ranks}-{rule.ranks}'
            for step, end in zip(rule.steps, ends, strict=True)]


def _values(rules: list[Rule], version: str) -> dict[str, str]:
    values: dict[str, list[str]] = {}
    seen: set[tuple[str, int]] = set()
    for rule in sorted(rules, key=lambda r: (r.collective, r.ranks)):
        if (rule.collective, rule.ranks) in seen:
            raise TuningError(f'{rule.collective} at {rule.ranks} ranks: two rules; '
                              'I_MPI_ADJUST conditions select by process count, not by nodes')
        seen.add((rule.collective, rule.ranks))
        values.setdefault(_variable(rule.collective), []).extend(_conditions(rule, version))
    return {variable: ';'.join(conditions) for variable, conditions in values.items()}


def write(rules: list[Rule], version: str) -> str:
    """The environment file: one ``I_MPI_ADJUST_<COLL>=<conditions>`` line per collective."""
    header = (f'# Intel MPI {version}: collective presets per message size and process count '
              '(I_MPI_ADJUST family); export each line, unquoted value\n')
    return header + ''.join(f'{k}={v}\n' for k, v in _values(rules, version).items())


def environment(text: str) -> dict[str, str]:
    """The variables of an environment file :func:`write` made."""
    return dict(line.split('=', 1) for line in text.splitlines()
                if line and not line.startswith('#'))


def extras(rules: list[Rule], version: str, text: str) -> tuple[dict[str, str],
                                                               dict[str, str]]:
    """No file beside it; its variables are the file's own lines (the job exports them)."""
    return {}, environment(text)


def touches(rules: list[Rule], version: str) -> tuple[list[str], str]:
    """The collectives the load can change, and what it changes, in words (measured: a set
    variable replaces the library's own selection of its collective at every size)."""
    names = sorted({r.collective for r in rules})
    return names, ('I_MPI_ADJUST_' + '/'.join(n.upper() for n in names) + ' replace Intel '
                   "MPI's own selection of these collectives at every size and process count, "
                   "the file's 'default' steps and the sizes it names no condition for "
                   'included (measured: not the library\'s choice there)')


def unsafe(rules: list[Rule], version: str) -> str | None:
    """Why the load cannot be proven to leave Intel MPI's own choice where the file means to:
    always (measured on 2021.18.1: a set variable replaces the selection at every size)."""
    names = ', '.join(sorted({r.collective for r in rules}))
    return (f'I_MPI_ADJUST_<COLL> replaces Intel MPI {version}\'s own selection of {names} at '
            'every size, also where the file leaves it (measured: allreduce 16-32 B 0.57-0.64 us '
            'against 0.25-0.39 us): the load cannot be proven never slower than the default')


def proofs(rule: Rule, version: str) -> list[ProofRun]:
    """One launch with the rule's variable and ``I_MPI_DEBUG``: the value read back, parsed."""
    text = write([rule], version)
    env = {**environment(text), **families.get(_FAMILY)['proof']['env']}
    variable = _variable(rule.collective)
    return [ProofRun(f'read-back-{rule.collective}-{rule.ranks}', text, env,
                     lambda output: expect_read_back(output, variable, env[variable]))]


def expect_read_back(output: str, variable: str, value: str) -> str:
    """FORCED_NOT_PROVEN evidence when Intel MPI read ``variable=value`` and accepted it."""
    read = re.findall(rf'MPI startup\(\): {re.escape(variable)}=(\S+)$', output, re.M)
    if not read or read[-1] != value:
        raise TuningProofError(f"Intel MPI did not report {variable}={value} at MPI_Init (it "
                               f"printed {read[-1] if read else 'nothing'}): export the file's "
                               'variables and I_MPI_DEBUG=6')
    rejected = _REJECTED.findall(output)
    if variable.removeprefix('I_MPI_ADJUST_') in rejected:
        raise TuningProofError(f'Intel MPI rejected {variable}={value} ("Incorrect adjust '
                               'value ... will be ignored"): the conditions do not parse')
    return f'{FORCED_NOT_PROVEN}:{variable}={value}'
