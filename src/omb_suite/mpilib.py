"""Facts about an installed MPI library, read from its own tools: version, device, GPU
awareness and the collective algorithms it lists.

One subprocess helper (:func:`run_tool`), one version parser (:func:`parse_version`), one
table of the tool and pattern that tell each family's version (:data:`VERSION_TOOLS`).
Every fact is read from the tools found on a search path (an environment's ``PATH``), so
two libraries of one family on one machine are told apart.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

#: Family -> (version tool and arguments, pattern whose group 1 is the version).
VERSION_TOOLS: dict[str, tuple[tuple[str, ...], str]] = {
    'openmpi': (('ompi_info', '--version'), r'Open MPI v(\d+(?:\.\d+)*\S*)'),
    'mpich': (('mpichversion',), r'MPICH Version:\s*(\S+)'),
    'mvapich': (('mpichversion',), r'Version:\s*(\S+)'),
    'mvapich2': (('mpiname', '-a'), r'MVAPICH2\s+(\S+)'),  # bare mpiname: 'MVAPICH2'
}
#: Families whose ``mpirun``/``mpiexec`` is MPICH's Hydra.
HYDRA_FAMILIES = frozenset({'mpich', 'mvapich', 'mvapich2', 'mvapich-plus', 'intel-mpi'})


class MpiToolError(RuntimeError):
    """A library tool is missing or failed; the message names the tool and what to do."""


@cache
def run_tool(*argv: str, timeout: int = 120) -> str:
    """stdout + stderr of a library tool (cached: a library does not change during a run).

    A non-zero exit is not an error by itself (``mpivars`` prints its list and then aborts
    through ``MPI_Abort``); a tool that cannot be started raises :class:`MpiToolError`.
    """
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise MpiToolError(f'{argv[0]}: not found; put the MPI library\'s bin/ on PATH') \
            from None
    except (OSError, subprocess.SubprocessError) as err:
        raise MpiToolError(f'{" ".join(argv)}: {err}') from None
    return done.stdout + done.stderr


def find_tool(name: str, search_path: str | None = None) -> str | None:
    return shutil.which(name, path=search_path)


# ---------------------------------------------------------------- versions


def parse_version(text: str) -> tuple[int, ...]:
    """'4.1.4' -> (4, 1, 4); a suffix after the numbers ('5.0.0rc1', '4.1.4-2') is ignored."""
    match = re.match(r'\s*v?(\d+(?:\.\d+)*)', text)
    if not match:
        raise ValueError(f'cannot read an MPI version from {text!r}: expected e.g. \'4.1.4\'')
    return tuple(int(part) for part in match.group(1).split('.'))


def version_in(version: str, spec: str) -> bool:
    """True when ``version`` satisfies every comma-separated clause of ``spec`` ('>=4.1,<5')."""
    have = parse_version(version)
    for clause in spec.split(','):
        match = re.fullmatch(r'\s*(>=|<=|==|>|<)\s*([\d.]+)\s*', clause)
        if not match:
            raise ValueError(f'bad version range clause {clause!r} in {spec!r}')
        want = parse_version(match.group(2))
        width = max(len(have), len(want))
        left, right = have + (0,) * (width - len(have)), want + (0,) * (width - len(want))
        ok = {'>=': left >= right, '<=': left <= right, '==': left == right,
              '>': left > right, '<': left < right}[match.group(1)]
        if not ok:
            return False
    return True


def version_from(family: str, text: str) -> str | None:
    """The version in a version tool's output of ``family`` (see :data:`VERSION_TOOLS`)."""
    _, pattern = VERSION_TOOLS.get(family, ((), r'$^'))
    match = re.search(pattern, text)
    return match.group(1) if match else None


@cache
def library_version(family: str, search_path: str | None = None) -> str | None:
    """The version the library on ``search_path`` reports, ``None`` if it cannot tell."""
    if family not in VERSION_TOOLS:
        return None
    argv, _ = VERSION_TOOLS[family]
    tool = find_tool(argv[0], search_path)
    if tool is None:
        return None
    try:
        return version_from(family, run_tool(tool, *argv[1:]))
    except MpiToolError:
        return None


def launcher_family(mpirun_version: str) -> tuple[str, str | None]:
    """(family, version) from ``mpirun --version``; ``('unknown', None)`` if neither."""
    if m := re.search(r'Open MPI\)?\s+(\d+\.\d+(?:\.\d+)?)', mpirun_version):
        return 'openmpi', m[1]
    if 'HYDRA' in mpirun_version or 'MPICH' in mpirun_version:
        m = re.search(r'Version:\s+(\S+)', mpirun_version)
        return 'mpich', m[1] if m else None
    return 'unknown', None


def mpich_device(mpichversion: str) -> str | None:
    """'ch4:ucx' from ``mpichversion``'s ``MPICH Device:`` line."""
    match = re.search(r'MPICH Device:\s*(\S+)', mpichversion)
    return match[1] if match else None


# ---------------------------------------------------------------- GPU awareness


@dataclass(frozen=True)
class GpuSupport:
    """Whether a library accepts device pointers; ``aware=None``: cannot tell."""

    aware: bool | None
    evidence: str


_OMPI_GPU = re.compile(r'^mca:[^:]+:base:param:(?:mpi|opal)_built_with_(cuda|rocm)_support'
                       r':value:(true|false)\s*$', re.M)
_MPICH_GPU_FLAGS = {'cuda': ('--with-cuda',), 'rocm': ('--with-hip', '--with-rocm')}


def openmpi_gpu_support(ompi_info: str, kind: str) -> GpuSupport:
    """Read ``ompi_info --parsable --all``: ``mpi_built_with_<kind>_support:value:true``
    (Open MPI 4 prints it as ``opal_built_with_..._support``, a synonym)."""
    found = {k: v == 'true' for k, v in _OMPI_GPU.findall(ompi_info)}
    if kind not in found:
        return GpuSupport(None, f'ompi_info does not report mpi_built_with_{kind}_support '
                                f'(Open MPI older than {"5.0" if kind == "rocm" else "1.7"}?)')
    state = 'true' if found[kind] else 'false'
    return GpuSupport(found[kind], f'ompi_info: mpi_built_with_{kind}_support={state}')


def mpich_gpu_support(mpichversion: str, kind: str, env: Mapping[str, str]) -> GpuSupport:
    """Read ``mpichversion``'s configure line (``--with-cuda``/``--with-hip``, or
    ``--without-yaksa``, which removes all GPU support) and ``MPIR_CVAR_ENABLE_GPU``."""
    if env.get('MPIR_CVAR_ENABLE_GPU', '1').strip() in ('0', 'false', 'no'):
        return GpuSupport(False, 'MPIR_CVAR_ENABLE_GPU=0 disables MPICH\'s GPU support')
    line = next((x for x in mpichversion.splitlines() if 'configure' in x), '')
    if not line:
        return GpuSupport(None, 'mpichversion printed no configure line')
    if '--without-yaksa' in line:
        return GpuSupport(False, 'MPICH configured --without-yaksa (no GPU support)')
    flags = _MPICH_GPU_FLAGS[kind]
    for flag in flags:
        if re.search(rf'{flag}(?:=(?!no\b)\S+)?(?:\s|$)', line):
            return GpuSupport(True, f'MPICH configured {flag}')
    if any(f'--without-{f[len("--with-"):]}' in line for f in flags):
        return GpuSupport(False, f'MPICH configured --without-{flags[0][len("--with-"):]}')
    return GpuSupport(None, f'MPICH configure line names none of {", ".join(flags)} '
                            '(GPU support may still be auto-detected)')


def cray_mpich_gpu_support(env: Mapping[str, str]) -> GpuSupport:
    enabled = env.get('MPICH_GPU_SUPPORT_ENABLED') == '1'
    return GpuSupport(enabled, f'MPICH_GPU_SUPPORT_ENABLED={env.get("MPICH_GPU_SUPPORT_ENABLED")}')


def gpu_support(family: str | None, kind: str, search_path: str | None,
                env: Mapping[str, str] | None = None) -> GpuSupport:
    """Whether the library of ``family`` found on ``search_path`` is CUDA/ROCm-aware."""
    env = os.environ if env is None else env
    family = family or 'unknown'
    if family.startswith('cray'):
        return cray_mpich_gpu_support(env)
    if family not in ('openmpi', 'mpich'):
        return GpuSupport(None, f'no GPU-awareness probe for MPI family {family!r}')
    tool, args = ('ompi_info', ('--parsable', '--all')) if family == 'openmpi' else (
        'mpichversion', ())
    found = find_tool(tool, search_path)
    if not found:
        return GpuSupport(None, f'{tool} not found on the environment\'s PATH')
    try:
        text = run_tool(found, *args)
    except MpiToolError as err:
        return GpuSupport(None, str(err))
    result = (openmpi_gpu_support(text, kind) if family == 'openmpi'
              else mpich_gpu_support(text, kind, env))
    return GpuSupport(result.aware, f'{result.evidence} ({found})')


# ---------------------------------------------------------------- algorithm listings

_OMPI_PARAM = re.compile(r'parameter "coll_(tuned|libnbc)_(\w+?)_algorithm" \(')
_OMPI_VALID = re.compile(r'^\s*Valid values: (.*)$')
_DEVICE_LEVEL = ('_POSIX', '_OFI', '_UCX')  # ch4 shm/netmod knobs, not MPIR-level algorithms
_MPIVARS_LINE = re.compile(r'^\s*MPIR_CVAR_(\w+)_INTRA_ALGORITHM\s*=.*\t(.*)$')
#: MPICH's own selection, listed among the choices: what 'default' means there.
MPICH_AUTOMATIC = ('auto', 'sched_auto')


def parse_ompi_info(text: str) -> dict[str, list[str]]:
    """The enum of every coll_{tuned,libnbc}_<coll>_algorithm in ``ompi_info --param coll
    all --level 9`` output ('ignore' = no forcing, left out)."""
    found: dict[str, list[str]] = {}
    collective = None
    for line in text.splitlines():
        param = _OMPI_PARAM.search(line)
        if param:
            collective = param.group(2)
            continue
        valid = _OMPI_VALID.match(line)
        if valid and collective:
            names = re.findall(r'\d+:"([^"]+)"', valid.group(1))
            found[collective] = [n for n in names if n != 'ignore']
        collective = None if valid else collective
    return found


def parse_mpivars(text: str, known: set[str]) -> dict[str, list[str]]:
    """MPIR_CVAR_<COLL>_INTRA_ALGORITHM choices from ``mpivars`` output.

    mpivars glues each choice to the end of the previous description ('...Binomial Treenb  -
    Force...'), so a choice is found as the longest name of ``known`` ending the word before
    ' - '. A word that ends in no known name is returned as '?<word>': a new algorithm to add.
    """
    known = set(known) | set(MPICH_AUTOMATIC)
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        match = _MPIVARS_LINE.match(line)
        if match and not match.group(1).endswith(_DEVICE_LEVEL):
            words = re.findall(r'(\w+)\s+- ', match.group(2))
            names = [_glued_name(word, known) for word in words]
            found[match.group(1).lower()] = [n for n in names if n not in MPICH_AUTOMATIC]
    return found


def _glued_name(word: str, known: set[str]) -> str:
    """Longest known name ending ``word``; one right after '_' is part of a longer, new name."""
    for start in range(len(word)):
        tail = word[start:]
        if tail in known and (start == 0 or word[start - 1] != '_'):
            return tail
    return '?' + word


def listed_algorithms(family: str, search_path: str | None,
                      known: set[str]) -> dict[str, list[str]] | None:
    """Collective -> algorithm names the installed library lists (Open MPI: ``ompi_info``;
    MPICH, MVAPICH: ``mpivars``), ``None`` where the family has no such tool or it is absent."""
    tool, args = {'openmpi': ('ompi_info', ('--param', 'coll', 'all', '--level', '9')),
                  'mpich': ('mpivars', ()), 'mvapich': ('mpivars', ())}.get(family, ('', ()))
    found = find_tool(tool, search_path) if tool else None
    if found is None:
        return None
    try:
        text = run_tool(found, *args)
    except MpiToolError:
        return None
    return parse_ompi_info(text) if family == 'openmpi' else parse_mpivars(text, known)
