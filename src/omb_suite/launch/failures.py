"""Why a job died, in one line, from what the launcher and scheduler printed.

Checks add this to their sanity messages so a failure names its cause (a node that
failed, a time limit, a killed task) instead of only "output ended early".
"""

from __future__ import annotations

import re

#: Most telling first: a named node failure beats a generic "Killed".
_CAUSES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern)) for label, pattern in (
        # the job's own guard (omb_suite.rfm.environ_facts.modules_guard): the wrong MPI
        ('module not loaded', r'^OMB-MODULE-MISSING: .*'),
        ('node failure', r'Node failure on (?P<node>\S+)'),
        ('node failure', r'NODE_FAIL'),
        ('time limit', r'CANCELLED AT \S+ DUE TO TIME LIMIT'),
        ('cancelled', r'\*\*\* (?:STEP|JOB) \S+ ON (?P<node>\S+) CANCELLED'),
        ('peer lost', r'Peer host:\s+(?P<node>\S+)'),
        ('task killed', r'srun: error: (?P<node>[^:\s]+): tasks? [\d,-]+: (?:Killed|Terminated)'),
        # Open MPI's own signal handler in the rank: '[vm:09913] Signal: Segmentation fault (11)'
        ('rank crashed', r'^\[(?P<node>[^:\]]+):\d+\] Signal: .*'),
        # Open MPI's launcher when the rank's own report did not reach it: 'mpirun noticed
        # that process rank 1 with PID 0 on node vm exited on signal 11 (Segmentation fault).'
        ('rank crashed', r'noticed that process rank \d+ with PID \d+ on node (?P<node>\S+) '
                         r'exited on signal .*'),
        # UCX's handler (MPICH, Open MPI over UCX): '[vm:12648:0:12648] Caught signal 11 (...)'
        ('rank crashed', r'^\[(?P<node>[^:\]]+):\d+:\d+:\d+\] Caught signal .*'),
        # MPICH's hydra after a rank died: '... TERMINATED WITH THE EXIT STRING: Segmentation
        # fault (signal 11)' (or 'Killed (signal 9)')
        ('rank died', r'TERMINATED WITH THE EXIT STRING: .*'),
        # MPICH's own abort in the rank, when every rank stopped before hydra killed one:
        # 'Assertion failed in file src/mpi/coll/mpir_coll.c at line 2868: 0', then
        # 'Abort(1) on node 1: Internal error' (MPICH's "node" is the rank)
        ('rank aborted', r'^Assertion failed in file .*'),
        ('rank aborted', r'^Abort\(\d+\) on node \d+: .*'),
        ('launcher error', r'^(?:mpirun|mpiexec|srun): (?:error|Error).*'),
    ))


def with_cause(message: str, *texts: str) -> str:
    """``message``, followed by ``[job: <cause>]`` when the outputs name why the job died."""
    cause = failure_cause(*texts)
    return message + (f' [job: {cause}]' if cause else '')


def failure_cause(*texts: str) -> str | None:
    """The first line (by priority) that explains a job's failure, or ``None``."""
    lines = [line.strip() for text in texts for line in text.splitlines()]
    for label, pattern in _CAUSES:
        for line in lines:
            if m := pattern.search(line):
                node = m.groupdict().get('node')
                where = f' on {node}' if node and node not in line else ''
                return f'{label}{where}: {line}'
    return None
