"""Facts about an installed MPI library, read from its own tools: version, device, GPU
awareness and the collective algorithms it lists.

One subprocess helper (:func:`run_tool`), one version parser (:func:`parse_version`); which
tool tells a family's version, its GPU awareness and its algorithms is the family's record
(:mod:`omb_suite.mpi.families`). Every fact is read from the tools found on a search path (an
environment's ``PATH``), so two libraries of one family on one machine are told apart.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from omb_suite.mpi import families


class MpiToolError(RuntimeError):
    """A library tool is missing or failed; the message names the tool and what to do."""


@cache
def run_tool(*argv: str, timeout: int = 120, env: tuple[tuple[str, str], ...] = ()) -> str:
    """stdout + stderr of a library tool (cached: a library does not change during a run).

    A non-zero exit is not an error by itself (``mpivars`` prints its list and then aborts
    through ``MPI_Abort``); a tool that cannot be started raises :class:`MpiToolError`.
    """
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, **dict(env)} if env else None)
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
    """The version in the output of ``family``'s version tool (its record's pattern)."""
    return families.version_from(family, text)


def family_tool(family: str, argv: list[str], search_path: str | None) -> str | None:
    """Output of one of ``family``'s tools found on ``search_path`` (with the variables the
    record says it needs), ``None`` when the tool is absent or cannot start."""
    tool = find_tool(argv[0], search_path)
    if tool is None:
        return None
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(tool)))
    try:
        return run_tool(tool, *argv[1:], env=tuple(families.tool_env(family, prefix).items()))
    except MpiToolError:
        return None


@cache
def library_version(family: str, search_path: str | None = None) -> str | None:
    """The version the library on ``search_path`` reports, ``None`` if it cannot tell."""
    if not families.known(family) or not families.get(family)['recognise']['version_tool']:
        return None
    text = family_tool(family, families.get(family)['recognise']['version_tool'], search_path)
    return version_from(family, text) if text is not None else None


def recognise(bindir: str, family: str | None = None) -> tuple[str, str]:
    """(family, version) of the library whose programs are in ``bindir``, from the records'
    tools and version outputs (only ``family``'s where given); ValueError naming what was
    found when no record fits, or when two do (Debian's /usr/bin holds Open MPI and MPICH)."""
    present = {f for tool, fams in families.tool_families().items()
               if os.path.isfile(os.path.join(bindir, tool)) for f in fams}
    found, seen = [], []
    for each in sorted(present if family is None else present & {family}):
        argv = families.get(each)['recognise']['version_tool']
        text = family_tool(each, argv, bindir) if argv else None
        version = families.tool_version(each, text) if text is not None else None
        if version:
            found.append((each, version))
        seen.append(f'{" ".join(argv or [])}: {(text or "no output").strip()[:80]!r}')
    if len(found) == 1:
        return found[0]
    if found:
        raise ValueError(f'{bindir} holds {" and ".join(f"{f} {v}" for f, v in found)}: name '
                         f'one as FAMILY=PREFIX')
    mpi = sorted(p for p in (os.listdir(bindir) if os.path.isdir(bindir) else []) if 'mpi' in p)
    raise ValueError(f'{bindir}: no known MPI family (data/families/: '
                     f'{", ".join(families.names())}); found there: '
                     f'{", ".join(mpi) or "no MPI program"}'
                     + (f'; {"; ".join(seen)}' if seen else ''))


def launcher_family(mpirun_version: str) -> tuple[str, str | None]:
    """(family, version) from ``mpirun --version``; ``('unknown', None)`` if no record's."""
    return families.from_mpirun_version(mpirun_version) or ('unknown', None)


def device_from(family: str, text: str) -> str | None:
    """The device in the family's version tool output ('ch4:ucx' from ``mpichversion``'s
    ``MPICH Device:`` line), ``None`` where the record names no device."""
    pattern = families.get(family)['recognise']['device_pattern']
    match = re.search(pattern, text, re.M) if pattern else None
    return match[1] if match else None


def library_device(family: str | None, search_path: str | None) -> str | None:
    """The device of the library of ``family`` on ``search_path`` (see :func:`device_from`)."""
    if not families.known(family) or not families.get(family)['recognise']['device_pattern']:
        return None
    text = family_tool(family, families.get(family)['recognise']['version_tool'], search_path)
    return device_from(family, text) if text else None


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


def env_gpu_support(env: Mapping[str, str], variable: str, enabled: str) -> GpuSupport:
    """A library whose GPU support is switched by a variable (Cray MPICH, Intel MPI)."""
    return GpuSupport(env.get(variable) == enabled, f'{variable}={env.get(variable)}')


def gpu_support(family: str | None, kind: str, search_path: str | None,
                env: Mapping[str, str] | None = None) -> GpuSupport:
    """Whether the library of ``family`` found on ``search_path`` is CUDA/ROCm-aware, read
    the way its record's ``gpu.probe`` says (:data:`GPU_PROBES`)."""
    env = os.environ if env is None else env
    if not families.known(family):
        return GpuSupport(None, f'no GPU-awareness probe for MPI family {family!r}')
    gpu = families.get(family)['gpu']
    if gpu['probe'] == 'none':
        return GpuSupport(None, f'no GPU-awareness probe for MPI family {family!r}')
    if gpu['probe'] == 'env':
        return env_gpu_support(env, gpu['variable'], gpu['enabled'])
    text = family_tool(family, [gpu['probe'], *gpu['args']], search_path)
    if text is None:
        return GpuSupport(None, f'{gpu["probe"]} not found on the environment\'s PATH')
    result = GPU_PROBES[gpu['probe']](text, kind, env)
    return GpuSupport(result.aware, f'{result.evidence} ({find_tool(gpu["probe"], search_path)})')


#: ``gpu.probe`` of a family record -> the reader of that tool's output ('env' and 'none'
#: need no tool).
GPU_PROBES = {
    'ompi_info': lambda text, kind, env: openmpi_gpu_support(text, kind),
    'mpichversion': mpich_gpu_support,
}


# ---------------------------------------------------------------- algorithm listings

_OMPI_ENUM = re.compile(r'^mca:coll:(?:tuned|libnbc):param:coll_(?:tuned|libnbc)_(\w+?)'
                        r'_algorithm:enumerator:value:(\d+):(\S+)$', re.M)
_DEVICE_LEVEL = ('_POSIX', '_OFI', '_UCX')  # ch4 shm/netmod knobs, not MPIR-level algorithms
_MPIVARS_LINE = re.compile(r'^\s*MPIR_CVAR_(\w+)_INTRA_ALGORITHM\s*=.*\t(.*)$')
_MPIVARS_CHOICE = re.compile(r'^(\w+)\s+- ')  # MPICH 5: one choice a line after the variable
#: MPICH's own selection, listed among the choices: what 'default' means there.
MPICH_AUTOMATIC = ('auto', 'sched_auto')


def parse_ompi_parsable(text: str, known: set[str] | None = None) -> dict[str, list[str]]:
    """The enum of every coll_{tuned,libnbc}_<coll>_algorithm in ``ompi_info --parsable
    --param coll all --level 9`` output, the same in Open MPI 4.1 and 5.0 ('ignore' = no
    forcing, left out)."""
    found: dict[str, list[str]] = {}
    for collective, _, name in _OMPI_ENUM.findall(text):
        if name != 'ignore':
            found.setdefault(collective, []).append(name)
    return found


def parse_mpivars(text: str, known: set[str]) -> dict[str, list[str]]:
    """MPIR_CVAR_<COLL>_INTRA_ALGORITHM choices from ``mpivars`` output.

    MPICH 4 glues each choice to the end of the previous description ('...Binomial Treenb  -
    Force...'), so a choice is found as the longest name of ``known`` ending the word before
    ' - '; a word that ends in no known name is returned as '?<word>': a new algorithm to add.
    MPICH 5 prints one choice a line after the variable's line.
    """
    known = set(known) | set(MPICH_AUTOMATIC)
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        match = _MPIVARS_LINE.match(line)
        if match:
            current = None if match.group(1).endswith(_DEVICE_LEVEL) else match.group(1).lower()
            if current:
                words = re.findall(r'(\w+)\s+- ', match.group(2))
                found[current] = [_glued_name(word, known) for word in words]
            continue
        choice = _MPIVARS_CHOICE.match(line)
        if choice and current:
            found[current].append(choice.group(1))
        elif line.startswith('\t'):
            current = None
    return {coll: [n for n in names if n not in MPICH_AUTOMATIC] for coll, names in found.items()}


def _glued_name(word: str, known: set[str]) -> str:
    """Longest known name ending ``word``; one right after '_' is part of a longer, new name."""
    for start in range(len(word)):
        tail = word[start:]
        if tail in known and (start == 0 or word[start - 1] != '_'):
            return tail
    return '?' + word


def parse_impi_range(text: str) -> list[str]:
    """The preset ids ``impi_info -v I_MPI_ADJUST_<COLL>`` accepts ('range: 0-22' -> '1'..'22';
    0 is the library's own selection)."""
    match = re.search(r'range:\s*(\d+)-(\d+)', text)
    return [str(i) for i in range(max(1, int(match[1])), int(match[2]) + 1)] if match else []


def listed_algorithms(family: str, search_path: str | None, known: set[str],
                      collectives: tuple[str, ...] = ()) -> dict[str, list[str]] | None:
    """Collective -> algorithms the installed library lists (the record's ``listing``: its
    tool, arguments and parser), ``None`` where the family has no such tool or it is absent.
    A tool asked one collective at a time (``{COLLECTIVE}`` in its arguments) is asked for
    each of ``collectives``."""
    listing = families.get(family)['listing'] if families.known(family) else None
    if listing is None or find_tool(listing['tool'], search_path) is None:
        return None
    if not any('{COLLECTIVE}' in arg for arg in listing['args']):
        text = family_tool(family, [listing['tool'], *listing['args']], search_path)
        return None if text is None else LISTING_PARSERS[listing['parser']](text, known)
    found = {}
    for coll in collectives:
        argv = [listing['tool'], *(a.format(COLLECTIVE=coll.upper()) for a in listing['args'])]
        found[coll] = LISTING_PARSERS[listing['parser']](family_tool(family, argv, search_path)
                                                       or '', known)
    return found


#: ``listing.parser`` of a family record -> (tool output, known names) -> listed names.
LISTING_PARSERS = {
    'ompi_parsable': parse_ompi_parsable,
    'mpivars': parse_mpivars,
    'impi_range': lambda text, known: parse_impi_range(text),
}
