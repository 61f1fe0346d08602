"""Facts about the MPI (and OSU) that loaded environment modules provide, read from inside the
shell that loaded them.

``omb-setup --module`` runs ``python -m omb_suite.setup.module_facts`` in a shell that did ``module
load ...`` (:mod:`omb_suite.setup.module_envs`), so every fact comes from the tools the modules put
on ``PATH`` with the variables they set (``LD_LIBRARY_PATH``...), never from a module's name:
the MPI family (recognised from the tools the modules added, by the family records:
:mod:`omb_suite.mpi.families`), its version and CUDA awareness, where ``osu_latency`` is, the OSU
release in its banner and the MPI library it links.

It prints one line, ``OMB-FACTS <json>``: the facts, or ``{"error": "..."}`` saying what the
modules lack.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from omb_suite.mpi import families, mpilib
from omb_suite.osu import versions as osu_versions

MARKER = 'OMB-FACTS '
OSU_INSTALL = Path('libexec') / 'osu-micro-benchmarks' / 'mpi' / 'pt2pt' / 'osu_latency'
_LINKED = re.compile(r'^\s*(lib(?:mpi|mpich)\.so[.\d]*)\s+=>\s+(/\S+)', re.M)


class FactsError(RuntimeError):
    """What the loaded modules lack, said so that the user can pick other modules."""


def added_dirs(before: str, after: str) -> list[str]:
    """``PATH`` entries present after ``module load`` and not before, in ``PATH`` order."""
    old = set(before.split(os.pathsep))
    return [d for d in after.split(os.pathsep) if d and d not in old]


def linked_family(library: str | None) -> str | None:
    """The family of an MPI library file a module's OSU links, where one family's record alone
    names such a file (``libmpich.so.12`` -> ``mpich``; ``libmpi.so.12`` is several's)."""
    candidates = families.linking(Path(library).name) if library else []
    return candidates[0] if len(candidates) == 1 else None


def recognised(dirs: list[str]) -> tuple[str, str] | None:
    """(family, directory) of the first directory holding a library a family record
    recognises (:func:`omb_suite.mpi.mpilib.recognise`)."""
    for directory in dirs:
        try:
            return mpilib.recognise(directory)[0], directory
        except ValueError:
            continue
    return None


def family_tool(family: str | None, added: list[str], path: str,
                osu_links: str | None = None) -> tuple[str, str]:
    """(family, version tool): the given family's tool on ``path``; else the family of the
    first directory the modules added that holds a library; else that of the library OSU
    links (a module of a system MPI adds nothing to ``PATH``)."""
    found = recognised(added)
    if family is None:
        family = found[0] if found else linked_family(osu_links)
    if family is None:
        raise FactsError('the modules put no MPI a family record recognises on PATH '
                         f'({", ".join(families.names())}) and no OSU linking an MPI: they '
                         'load no MPI')
    if not families.known(family):
        raise FactsError(f'unknown MPI family {family!r}: one of {", ".join(families.names())}')
    if found is not None and found[0] != family:
        raise FactsError(f'the modules provide {found[0]} ({found[1]}), not {family}: '
                         f'name the family they provide')
    name = families.get(family)['recognise']['tools'][0]
    tool = shutil.which(name, path=path)
    if tool is None:
        raise FactsError(f'no {name} on PATH after loading the modules: they provide no {family}')
    return family, tool


def osu_root_of(program: Path) -> Path | None:
    """The install prefix of an OSU program in the ``libexec/osu-micro-benchmarks`` layout."""
    parts = program.parts
    tail = OSU_INSTALL.parts
    return Path(*parts[:-len(tail)]) if parts[-len(tail):] == tail else None


def linked_mpi(program: Path) -> str | None:
    """The MPI library file ``program`` links as the loaded environment resolves it."""
    try:
        match = _LINKED.search(mpilib.run_tool('ldd', str(program)))
    except mpilib.MpiToolError:
        return None
    return match[2] if match else None


def osu_facts(path: str) -> dict[str, Any]:
    """Where ``osu_latency`` is on ``path``, its prefix, release and linked MPI library."""
    found = shutil.which('osu_latency', path=path)
    if found is None:
        return {'osu_program': None, 'osu_root': None, 'osu_version': None, 'osu_links': None}
    program = Path(found)
    root = osu_root_of(program)
    return {'osu_program': str(program), 'osu_root': str(root) if root else None,
            'osu_version': osu_versions.banner_version(program), 'osu_links': linked_mpi(program)}


def read_facts(family: str | None, before_path: str) -> dict[str, Any]:
    """Every fact of the environment this process runs in (the modules already loaded)."""
    path = os.environ.get('PATH', '')
    added = added_dirs(before_path, path)
    osu = osu_facts(path)
    family, tool = family_tool(family, added, path, osu['osu_links'])
    links = osu['osu_links']
    if links is not None and family not in families.linking(Path(links).name):
        raise FactsError(f'{osu["osu_program"]} links {links}, not a {family} library: the OSU '
                         f'module was built with another MPI than the one loaded')
    version = mpilib.library_version(family, path)
    if version is None:
        raise FactsError(f'{tool} printed no {family} version')
    return {'family': family, 'version': version, 'bin': str(Path(tool).parent),
            'cuda': mpilib.gpu_support(family, 'cuda', path).aware is True,
            'added_path': added, 'modulepath': os.environ.get('MODULEPATH', ''), **osu}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog='python -m omb_suite.setup.module_facts',
                                description='Print the facts of the loaded modules.')
    p.add_argument('--family', help='MPI family the modules should provide (default: detect)')
    p.add_argument('--before', default='', help='PATH before the modules were loaded')
    args = p.parse_args(argv)
    try:
        facts = read_facts(args.family, args.before)
    except FactsError as err:
        facts = {'error': str(err)}
    print(MARKER + json.dumps(facts))
    return 0


if __name__ == '__main__':
    sys.exit(main())
