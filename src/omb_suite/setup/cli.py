"""``omb-setup``: find or build MPI + OSU combinations and register them for ReFrame.

It writes the environment registry (``.omb/environments.json``, or ``$OMB_ENVIRONMENTS_FILE``)
that :mod:`omb_suite.setup.environs` turns into ReFrame programming environments, so nobody edits
``settings.py`` or types an OSU path. Sources of entries:

* the system MPIs (Debian/Ubuntu Open MPI and MPICH), with OSU from ``$OSU_ROOT`` or
  ``--osu-root FAMILY=PREFIX``;
* MPIs installed under a prefix of their own (``--mpi /opt/mvapich2``, family recognised, or
  the MPI an ``--osu-root`` build links: :mod:`omb_suite.setup.prefix_mpi`);
* every built Spack environment of ``spack/environments`` (its view is the OSU prefix),
  after building the chosen ones (by default one per system MPI without OSU) with the
  ``spack`` on ``PATH`` or the pinned one (:mod:`omb_suite.setup.spack_bootstrap`), reusing those
  built before from the same files (:mod:`omb_suite.setup.spack_build`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from omb_suite.mpi import families, mpilib
from omb_suite.osu import versions as osu_versions
from omb_suite.setup import (
    environs,
    module_discovery,
    module_envs,
    prefix_mpi,
    spack_bootstrap,
    spack_build,
    spack_envs,
    spack_modules,
)
from omb_suite.setup.options import parser
from omb_suite.setup.progress import Progress
from omb_suite.setup.spack_bootstrap import Spack
from omb_suite.setup.spack_envs import SpackSetupError

OSU_MPI_DIR = Path('libexec') / 'osu-micro-benchmarks' / 'mpi'
#: Plain name -> Debian alternative name of each MPI program a family's shim prefix links.
SHIM_PROGRAMS = {
    'openmpi': {n: f'{n}.openmpi' for n in
                ('mpicc', 'mpicxx', 'mpif90', 'mpifort', 'mpirun', 'mpiexec')},
    'mpich': {**{n: f'{n}.mpich' for n in
                 ('mpicc', 'mpicxx', 'mpif90', 'mpifort', 'mpirun', 'mpiexec')},
              **{n: n for n in ('mpiexec.hydra', 'hydra_pmi_proxy', 'hydra_nameserver',
                                'hydra_persist', 'mpichversion', 'mpivars')}},
}
#: The system (Debian) MPI families: those with alternatives to shim.
SYSTEM_FAMILIES = tuple(SHIM_PROGRAMS)

NO_OSU_MESSAGE = """\
omb-setup: no OSU Micro-Benchmarks found for any MPI: only the placement probe can run.
Get OSU one of these ways:
  1. Let omb-setup build it with our Spack recipe: run it without --no-build (and without
     OMB_NO_BUILD). With no spack on PATH it fetches the Spack 1.1 pinned in spack/pins.yaml
     into .omb/spack; without network set OMB_SPACK_GIT, OMB_SPACK_PACKAGES_GIT and
     OMB_SPACK_MIRROR (docs/spack.md, "Offline and air-gapped").
  2. An OSU you built against one of the MPIs above (./configure CC=<its mpicc>):
       OSU_ROOT=/path/to/osu/prefix omb-setup
       omb-setup --osu-root mpich=/path/to/osu/prefix      (one per MPI family)
"""


def run(argv: list[str], timeout: int = 120) -> str:
    """stdout+stderr of a command, '' if it cannot run (detection must never crash)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return ''
    return done.stdout + done.stderr


def find_repo(explicit: str | None) -> Path:
    """The checkout root: --repo, else the one this package lives in, else git's."""
    if explicit:
        repo = Path(explicit).resolve()
    else:
        here = Path(__file__).resolve()
        repo = next((p for p in here.parents if (p / 'spack' / 'environments').is_dir()),
                    Path(run(['git', 'rev-parse', '--show-toplevel']).strip() or '.'))
    if not (repo / 'spack' / 'environments').is_dir():
        raise SystemExit(f'omb-setup: {repo} is not an omb-regression-suite checkout '
                         f'(no spack/environments); pass --repo /path/to/checkout')
    return repo.resolve()


def make_shim(repo: Path, family: str, bindir: Path) -> Path | None:
    """``.omb/prefix/<family>/bin`` with plain names for the family's Debian alternatives.

    Debian's ``mpicc``/``mpirun`` follow one alternative (Open MPI's by default); this gives
    each family a prefix whose ``bin/`` is unambiguous, for PATH and as a Spack external.
    """
    links = {name: bindir / target for name, target in SHIM_PROGRAMS[family].items()
             if (bindir / target).exists()}
    if f'mpicc.{family}' not in {t.name for t in links.values()}:
        return None
    prefix = repo / '.omb' / 'prefix' / family
    (prefix / 'bin').mkdir(parents=True, exist_ok=True)
    for name, target in links.items():
        link = prefix / 'bin' / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    return prefix


def detect_mpi(repo: Path, family: str) -> dict[str, Any] | None:
    """Version, CUDA support and bin/ of a system MPI family, or None if not installed."""
    probe = shutil.which(families.get(family)['recognise']['tools'][0])
    if probe is None:
        return None
    bindir = Path(probe).parent
    path = str(bindir)
    device = mpilib.library_device(family, path)
    shim = make_shim(repo, family, bindir)
    return {'family': family, 'version': mpilib.library_version(family, path),
            'cuda': mpilib.gpu_support(family, 'cuda', path, {}).aware is True,
            'bin': str(shim / 'bin') if shim else str(bindir),
            'prefix': str(shim) if shim else str(bindir.parent), 'device': device}


def osu_latency_bytes(root: Path) -> bytes:
    """The ``osu_latency`` program under ``root`` (empty when unreadable)."""
    try:
        return (root / OSU_MPI_DIR / 'pt2pt' / 'osu_latency').read_bytes()
    except OSError:
        return b''


def osu_version(root: Path) -> str | None:
    """OSU release compiled into osu_latency's title ('7.4', '8.0b')."""
    return osu_versions.banner_version(root / OSU_MPI_DIR / 'pt2pt' / 'osu_latency')


#: The runtime library a GPU build of OSU links (OSU's configure.ac: ``--enable-cuda`` links
#: ``-lcudart``, ``--enable-rocm`` ``-lamdhip64``), named in the program's dynamic section.
GPU_RUNTIMES = {'cuda': b'libcudart.so', 'rocm': b'libamdhip64.so'}


def osu_gpu(root: Path | None, kind: str) -> bool:
    """Whether the OSU under ``root`` was built for ``kind`` (``cuda``, ``rocm``): the
    environment's ``+cuda``/``+rocm``, so that its device-buffer cases exist. Whether its MPI
    takes device buffers is asked before each such case, which is skipped with the evidence
    when not (omb_suite.rfm.gpu): an OSU built with CUDA on an MPI without shows as skipped
    cases, not as none."""
    return root is not None and GPU_RUNTIMES[kind] in osu_latency_bytes(root)


def check_osu_root(text: str, origin: str) -> Path:
    root = Path(text).expanduser().resolve()
    if not (root / OSU_MPI_DIR).is_dir():
        raise SystemExit(f'omb-setup: {origin}={text}: no {OSU_MPI_DIR} under it; give the '
                         f'prefix OSU was installed to (configure --prefix)')
    return root


def system_entry(mpi: dict[str, Any], osu_root: Path | None,
                 source: str = 'system') -> dict[str, Any]:
    """A system MPI's entry (``system-<family>``), or one of a prefix (``<family>``, and
    ``<family>-<version>`` where two prefixes hold the family: :func:`prefix_entries`)."""
    return {
        'name': f'system-{mpi["family"]}' if source == 'system' else mpi['family'],
        'mpi_family': mpi['family'],
        'mpi_version': mpi['version'], 'osu_root': str(osu_root) if osu_root else None,
        'osu_version': osu_version(osu_root) if osu_root else None,
        'cuda': osu_gpu(osu_root, 'cuda'), 'rocm': osu_gpu(osu_root, 'rocm'),
        'path': [mpi['bin']], 'env_vars': {},
        'source': source, 'spack_env': None, 'spack_lock': None,
        'osu_spec': None, 'mpi_spec': None,
    }


def prefix_entries(mpis: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries of MPIs under prefixes; two of one family are told apart by version."""
    entries = [system_entry(m, m['osu_root'], 'prefix') for m in mpis]
    names = [e['name'] for e in entries]
    for entry in entries:
        if names.count(entry['mpi_family']) > 1:
            entry['name'] = f'{entry["mpi_family"]}-{entry["mpi_version"]}'
    return entries


def find_spack(explicit: str | None) -> str | None:
    if explicit:
        if not (shutil.which(explicit) or Path(explicit).is_file()):
            raise SystemExit(f'omb-setup: --spack {explicit}: no such program')
        return shutil.which(explicit) or explicit
    return shutil.which('spack')


def check_spack_version(spack: str, repo: Path) -> None:
    """Warn (not fail) when Spack is not the pinned release: recipes may not concretize."""
    pinned = str(spack_envs.read_yaml(repo / 'spack' / 'pins.yaml')['spack']['version'])
    found = run([spack, '--version']).split()
    if not found or found[0] != pinned:
        print(f'omb-setup: warning: {spack} is Spack {found[0] if found else "?"}, this suite '
              f'is tested with Spack {pinned} (spack/pins.yaml)')


def choose_spack(args: argparse.Namespace, repo: Path, names: list[str],
                 progress: Progress) -> Spack | None:
    """The user's spack (--spack, PATH); else the pinned one, bootstrapped when there is work."""
    if args.no_spack or args.no_build:
        return None
    user = find_spack(args.spack)
    if user is not None:
        check_spack_version(user, repo)
        return Spack(user, {})
    if not names:
        return None
    progress.say('no spack on PATH: using the Spack pinned in spack/pins.yaml, in '
                 f'{spack_bootstrap.root(repo)}')
    return spack_bootstrap.bootstrap(repo, progress)


def spack_entries(args: argparse.Namespace, repo: Path, lacking: list[str],
                  progress: Progress) -> list[dict[str, Any]]:
    """Build the chosen environments (with a Spack found or bootstrapped), then register
    every built one."""
    names = args.env if args.env is not None else spack_envs.default_environments(repo, lacking)
    unknown = sorted(set(names) - set(spack_envs.environment_names(repo)))
    if unknown:
        raise SpackSetupError(f'unknown environment(s) {", ".join(unknown)}; choose from '
                              f'{", ".join(spack_envs.environment_names(repo))}')
    spack = choose_spack(args, repo, names, progress)
    mirror = Path(args.mirror).resolve() if args.mirror else None
    if spack is not None and names:
        spack_build.build(spack, repo, args.site, names, mirror, args.install_arg, progress,
                          args.osu_version)
    built = spack_envs.built_environments(repo)
    if args.spack_modules and built:
        if spack is None and not args.no_spack:  # writing modules builds nothing
            user = find_spack(args.spack)
            spack = Spack(user, {}) if user else spack_bootstrap.bootstrap(repo, progress)
        if spack is None:
            raise SpackSetupError('--spack-modules runs Spack to write the modules: drop '
                                  '--no-spack')
        argv, env = spack_envs.spack_command(spack.executable, repo, args.site, mirror,
                                          args.osu_version)
        site = spack_envs.environments_dir(repo) / 'sites' / args.site
        with progress.step('modules', 'write the Lmod modules of the built environments'):
            return [spack_modules.registry_entry(argv, {**env, **spack.env}, repo, d, site)
                    for d in built]
    return [spack_envs.registry_entry(repo, d) for d in built]


def module_entries(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Environments of ``--module``, ``--loaded-modules`` and ``--discover-modules``."""
    entries = [module_envs.registry_entry(*module_envs.parse_item(i)) for i in args.module]
    loaded = [m for m in os.environ.get('LOADEDMODULES', '').split(':') if m]
    if args.loaded_modules and loaded:
        try:
            entries.append(module_envs.registry_entry(None, loaded))
        except module_envs.ModuleError as err:  # modules of other things: PATH decides
            print(f'omb-setup: the modules loaded here are no MPI environment: {err}')
    elif args.loaded_modules:
        print('omb-setup: --loaded-modules: no module is loaded in this shell')
    if args.discover_modules:
        found = module_discovery.discover((args.discover_modules.lower(),))
        print(found.report())
        entries += found.entries
    unique = module_envs.name_uniquely(list({tuple(e['modules']): e for e in entries}.values()))
    return module_envs.with_series(unique, args.series)


def from_modules(mpi: dict[str, Any], entries: list[dict[str, Any]]) -> str | None:
    """The module environment whose MPI is this one found on ``PATH`` (same version tool)."""
    tool = families.get(mpi['family'])['recognise']['tools'][0]
    mine = shutil.which(tool, path=os.pathsep.join([mpi['bin'], os.environ.get('PATH', '')]))
    return next((e['name'] for e in entries if mine and e['mpi_family'] == mpi['family']
                 and (Path(e['mpi_bin']) / tool).resolve() == Path(mine).resolve()), None)


def registry_file(args: argparse.Namespace, repo: Path) -> Path:
    return Path(args.registry) if args.registry else environs.registry_path(repo)


def write_registry(path: Path, entries: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({'version': 1, 'environments': entries}, indent=2) + '\n')


def summary(path: Path, entries: list[dict[str, Any]]) -> str:
    lines = [f'omb-setup: {len(entries)} environment(s) registered in {path}:']
    for e in entries:
        osu = f'OSU {e["osu_version"]} at {e["osu_root"]}' if e['osu_root'] else 'no OSU'
        gpu = ''.join(f' +{g}' for g in ('cuda', 'rocm') if e[g])
        lines.append(f'  {e["name"]:<22} {e["mpi_family"]} {e["mpi_version"]}{gpu}, {osu}')
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    repo = find_repo(args.repo)
    mpis = [m for m in (detect_mpi(repo, fam) for fam in SYSTEM_FAMILIES) if m is not None]
    try:
        osu = prefix_mpi.osu_roots(args.osu_root, [m['family'] for m in mpis], check_osu_root)
        prefixed, roots = prefix_mpi.prefixed_mpis(args.mpi, osu, {m['family'] for m in mpis})
    except prefix_mpi.PrefixError as err:
        raise SystemExit(f'omb-setup: {err}') from None
    spack_envs.write_local_site(repo, mpis)
    spack_envs.write_pip_sites(repo)
    for warning in spack_envs.local_site_mismatches(repo, mpis):
        print(f'omb-setup: warning: {warning}')
    try:
        modular = module_entries(args)
    except module_envs.ModuleError as err:
        raise SystemExit(f'omb-setup: {err}') from None
    for mpi in [m for m in mpis if from_modules(m, modular)]:
        print(f'omb-setup: the {mpi["family"]} on PATH is the one of environment '
              f'{from_modules(mpi, modular)}: registered through its modules only')
        mpis.remove(mpi)
    entries = [system_entry(m, roots.get(m['family'])) for m in mpis] + modular
    entries += prefix_entries(prefixed)
    lacking = [m['family'] for m in mpis if m['family'] not in roots]
    progress = Progress()
    try:
        entries += spack_entries(args, repo, lacking, progress)
    except SpackSetupError as err:
        print(f'omb-setup: FAILED: {err}', file=sys.stderr)
        return 1
    if progress.times:
        progress.say(f'steps and their times:\n{progress.summary()}')
    path = registry_file(args, repo)
    write_registry(path, entries)
    print(summary(path, entries))
    for note in module_envs.shell_notes(entries):
        print(note)
    if not any(e['osu_root'] for e in entries):
        print(NO_OSU_MESSAGE)
    return 0


if __name__ == '__main__':
    sys.exit(main())
