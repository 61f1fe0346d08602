"""What a programming environment gives a job, found in that environment: its MPI family and
version, its ``mpirun``, the OSU programs on its ``PATH``, an ``OSU_ROOT`` it sets.

A site's ReFrame environment says ``features: [mpi]`` and loads modules or sets ``env_vars``;
the suite must not look for MPI and OSU in ReFrame's own process, whose ``PATH`` the job does
not share. So one small shell script runs the environment's own ``module load`` lines and
exports, then reports (:func:`probe_script`); :func:`parse` turns its output into
:class:`EnvironFacts`, the family recognised from the family records (the version tool of a
family found on ``PATH``, else ``mpirun --version``). :func:`environ_facts` runs it once per
environment definition and keeps the answer for the process (and on disk, for listings).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from omb_suite.mpi import families

#: Programs whose place on the environment's PATH the probe reports.
LAUNCHERS = ('mpirun', 'mpiexec')
OSU_MARK = 'osu_latency'  # one program of every OSU build since 5.x
_MODULE_INIT = ('/etc/profile.d/lmod.sh', '/usr/share/lmod/lmod/init/bash',
                '/etc/profile.d/modules.sh', '/usr/share/modules/init/bash')


@dataclass(frozen=True)
class EnvironFacts:
    """What the job of one environment sees; ``family`` None: no record recognised it."""

    path: str
    family: str | None = None
    version: str | None = None
    mpirun: str | None = None
    osu_program: str | None = None
    osu_root: str | None = None
    evidence: str = ''
    problems: tuple[str, ...] = field(default_factory=tuple)
    #: module load lines that failed where ReFrame runs (no ``module`` command there, or an
    #: unknown module), as written
    failed_loads: tuple[str, ...] = field(default_factory=tuple)
    has_module: bool = True  # a ``module`` command was there (or found by the init files)

    def looked_in(self) -> str:
        """The job's PATH, each directory once, in order."""
        return ', '.join(dict.fromkeys(d for d in self.path.split(os.pathsep) if d))


def _version_tools() -> dict[tuple[str, ...], list[str]]:
    """Version tool argv -> the families that share it (MPICH's and MVAPICH's mpichversion)."""
    found: dict[tuple[str, ...], list[str]] = {}
    for name in families.usable():
        tool = families.get(name)['recognise']['version_tool']
        if tool:
            found.setdefault(tuple(tool), []).append(name)
    return found


def probe_script(load_commands: Sequence[str], env_vars: Mapping[str, str]) -> str:
    """The shell script that sets the environment up as a job script would (its prepare
    commands and ``module load`` lines, then its variables), then reports."""
    tools = sorted({argv[0] for argv in _version_tools()} | {*LAUNCHERS, OSU_MARK})
    lines = ['set +e',
             'type module >/dev/null 2>&1 || for f in '
             + ' '.join(_MODULE_INIT) + '; do [ -r "$f" ] && . "$f" && break; done',
             'type module >/dev/null 2>&1 || echo "@@NOMODULE"',
             *(f'{c} || echo {shlex.quote("@@LOADFAIL " + c)}' if _is_load(c) else c
               for c in load_commands),
             # as ReFrame writes them into job scripts: unquoted, so '$PATH' expands
             *(f'export {k}={v}' for k, v in env_vars.items()),
             'echo "@@PATH=$PATH"', 'echo "@@OSU_ROOT=${OSU_ROOT:-}"',
             *(f'echo "@@WHICH {t}=$(command -v {t})"' for t in tools)]
    for argv, users in sorted(_version_tools().items()):
        # the tool's prefix, for the variables some tools need (Intel MPI's I_MPI_ROOT)
        env = ' '.join(f'{k}="{v}"' for f in users
                       for k, v in families.tool_env(f, '$p').items())
        lines.append(f'if command -v {argv[0]} >/dev/null; then echo "@@TOOL {shlex.join(argv)}"; '
                     f'p=$(dirname "$(dirname "$(command -v {argv[0]})")"); '
                     f'{env} {shlex.join(argv)} 2>&1 | head -40; echo "@@END"; fi')
    lines.append('launcher=$(command -v mpirun || command -v mpiexec); if [ -n "$launcher" ]; '
                 'then echo "@@TOOL mpirun"; "$launcher" --version 2>&1 | head -20; '
                 'echo "@@END"; fi')
    return '\n'.join(lines) + '\n'


def _is_load(command: str) -> bool:
    return command.split()[:2] == ['module', 'load'] or command.startswith('ml ')


def parse(output: str) -> EnvironFacts:
    """:class:`EnvironFacts` from the probe's output (a missing line is reported, not guessed)."""
    values: dict[str, str] = {}
    which: dict[str, str] = {}
    blocks: dict[str, list[str]] = {}
    current = None
    for line in output.splitlines():
        if current is not None:
            if line == '@@END':
                current = None
            else:
                blocks[current].append(line)
        elif line.startswith('@@WHICH '):
            tool, _, path = line[len('@@WHICH '):].partition('=')
            which[tool] = path.strip()
        elif line.startswith('@@TOOL '):
            current = line[len('@@TOOL '):].strip()
            blocks[current] = []
        elif line.startswith('@@') and '=' in line:
            key, _, value = line[2:].partition('=')
            values[key] = value
    problems = [] if 'PATH' in values else ['the probe printed no PATH: did the shell start?']
    family, version, evidence = _recognise(blocks)
    lines = output.splitlines()
    failed = tuple(line[len('@@LOADFAIL '):] for line in lines if line.startswith('@@LOADFAIL '))
    return EnvironFacts(path=values.get('PATH', ''), family=family, version=version,
                        mpirun=which.get('mpirun') or which.get('mpiexec') or None,
                        osu_program=which.get(OSU_MARK) or None,
                        osu_root=values.get('OSU_ROOT') or None, evidence=evidence,
                        problems=tuple(problems), failed_loads=failed,
                        has_module='@@NOMODULE' not in lines)


def _recognise(blocks: Mapping[str, list[str]]) -> tuple[str | None, str | None, str]:
    """Family and version. The ``mpirun`` first on PATH is the job's launcher, so it names the
    family; that family's version tool, where it is on PATH too, gives the exact version. With
    no recognisable ``mpirun``, the one family whose version tool is on PATH."""
    launcher = '\n'.join(blocks.get('mpirun', []))
    found = families.from_mpirun_version(launcher) if launcher else None
    tools = {}
    for argv, users in _version_tools().items():
        text = '\n'.join(blocks.get(shlex.join(argv), []))
        for family in users:
            version = families.tool_version(family, text) if text else None
            if version:
                tools[family] = version
    if found:
        family = found[0]
        version = tools.get(family) or found[1]
        return family, version, f'mpirun --version: {_first_line(launcher)}'
    if len(tools) == 1:
        (family, version), = tools.items()
        return family, version, f"{families.get(family)['recognise']['version_tool'][0]}: " \
                                f'{version}'
    seen = (f'mpirun --version: {_first_line(launcher)!r}' if launcher
            else 'no mpirun or mpiexec on PATH')
    if tools:
        seen += f"; version tools of {', '.join(sorted(tools))} (cannot tell which the job uses)"
    return None, None, seen


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), '')[:120]


_FACTS: dict[str, EnvironFacts] = {}


def environ_facts(load_commands: Sequence[str], env_vars: Mapping[str, str],
                  cache_dir: Path | None = None, *, fresh: bool = False) -> EnvironFacts:
    """The facts of one environment definition: probed once per process; with ``cache_dir``,
    an earlier process's answer is reused unless ``fresh`` (a real run probes again: an
    upgrade changes what a module loads, not its name)."""
    script = probe_script(load_commands, env_vars)
    key = hashlib.sha256(script.encode()).hexdigest()[:16]
    if key in _FACTS:
        return _FACTS[key]
    stored = cache_dir / f'{key}.json' if cache_dir else None
    if stored and stored.is_file() and not fresh:
        try:
            data = json.loads(stored.read_text())
            _FACTS[key] = EnvironFacts(**{**data, 'problems': tuple(data['problems']),
                                          'failed_loads': tuple(data.get('failed_loads', ()))})
            return _FACTS[key]
        except (ValueError, TypeError, KeyError):
            pass  # unreadable: probe again and overwrite it
    try:
        done = subprocess.run(['bash', '-c', script], capture_output=True, text=True,
                              timeout=120, stdin=subprocess.DEVNULL)
        facts = parse(done.stdout)
    except (OSError, subprocess.SubprocessError) as err:
        facts = EnvironFacts(path='', problems=(f'the environment probe did not run: {err}',))
    _FACTS[key] = facts
    if stored and not facts.problems and not facts.failed_loads:  # a fixed host probes again
        stored.parent.mkdir(parents=True, exist_ok=True)
        stored.write_text(json.dumps(asdict(facts)))
    return facts
