"""The command line of ``omb-setup`` (its options, defaults from environment variables, and
the examples of ``--help``)."""

from __future__ import annotations

import argparse
import os
import shlex

from omb_suite.mpi import families
from omb_suite.setup import module_discovery, spack_envs


def parser() -> argparse.ArgumentParser:
    env = os.environ
    p = argparse.ArgumentParser(
        prog='omb-setup',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description='Find the system MPIs, build OSU for those that have none with our\n'
        'Spack recipe (spack/environments; the spack on PATH, or the Spack pinned in\n'
        'spack/pins.yaml, bootstrapped into .omb/spack), and register every MPI + OSU\n'
        'combination as a ReFrame programming environment, in .omb/environments.json\n'
        '(or $OMB_ENVIRONMENTS_FILE). A second run reuses what was built.',
        epilog='examples:\n'
        '  omb-setup                           # system MPIs; OSU built for each (site local)\n'
        '  omb-setup --env openmpi --env mpich # build these Spack environments\n'
        '  omb-setup --site mycluster --env openmpi-cuda --mirror /shared/spack-mirror\n'
        '  omb-setup --no-build                # only register what is installed\n'
        '  OSU_ROOT=$HOME/osu omb-setup --no-spack   # an OSU you built yourself\n'
        '  omb-setup --module openmpi=openmpi/4.1.5,osu-micro-benchmarks/7.3  # site modules\n'
        '  omb-setup --discover-modules        # every OSU module and the MPI it is built on\n'
        '  omb-setup --env openmpi --spack-modules   # through the Lmod modules Spack writes\n'
        'environment variables: OMB_NO_BUILD=1 (--no-build), OMB_SPACK_MIRROR=DIR (--mirror),\n'
        'OMB_OSU_VERSION=7.3 (--osu-version), OMB_SPACK_INSTALL_ARGS="ARG ..." (--install-arg),\n'
        'and, without network, local\n'
        'repositories holding the pinned commits: OMB_SPACK_GIT, OMB_SPACK_PACKAGES_GIT.\n'
        'See docs/spack.md ("Offline and air-gapped").')
    p.add_argument('--repo', help='checkout root (default: the one omb_suite is installed from)')
    p.add_argument('--registry', help='registry file to write (default: $OMB_ENVIRONMENTS_FILE '
                   'or <repo>/.omb/environments.json)')
    p.add_argument('--spack', help='spack executable (default: spack on PATH, else the pinned '
                   'Spack in .omb/spack, fetched on first use)')
    p.add_argument('--no-spack', action='store_true',
                   help='do not run Spack (built environments are still registered)')
    p.add_argument('--env', action='append', metavar='NAME',
                   help='Spack environment (folder of spack/environments) to build; '
                   'repeatable (default: openmpi and/or mpich, for each system MPI without OSU)')
    p.add_argument('--site', default=spack_envs.DEFAULT_SITE,
                   help='site folder of spack/environments/sites with the externals '
                   '(default: local = Debian/Ubuntu packages)')
    p.add_argument('--mirror', metavar='DIR', default=env.get('OMB_SPACK_MIRROR') or None,
                   help='Spack source mirror for offline builds (default: $OMB_SPACK_MIRROR)')
    p.add_argument('--osu-version', metavar='VERSION', default=env.get('OMB_OSU_VERSION') or None,
                   help='OSU version to build, one our recipe declares (default: '
                   '$OMB_OSU_VERSION, else the one spack/environments/common.yaml requires)')
    p.add_argument('--install-arg', action='append', metavar='ARG',
                   default=shlex.split(env.get('OMB_SPACK_INSTALL_ARGS', '')),
                   help='extra argument for `spack install`, e.g. --install-arg=-j8; repeatable '
                   '(default: the words of $OMB_SPACK_INSTALL_ARGS)')
    p.add_argument('--no-build', action='store_true',
                   default=env.get('OMB_NO_BUILD', '') not in ('', '0'),
                   help='build nothing; register the environments already installed '
                   '(default when $OMB_NO_BUILD is set to anything but 0)')
    p.add_argument('--osu-root', action='append', default=[], metavar='[FAMILY=]PREFIX',
                   help='OSU install prefix; repeatable. It is paired with the MPI its '
                   'binaries link (ldd): a system MPI family (openmpi, mpich), or the MPI '
                   'under a prefix, registered with it. $OSU_ROOT likewise')
    p.add_argument('--mpi', action='append', default=[], metavar='[FAMILY=]PREFIX',
                   help='an MPI installed under PREFIX (bin/ with its tools), not as a system '
                   'package; its family is recognised from its tools (FAMILY, one of '
                   f'{", ".join(families.names())}, is checked); repeatable')
    add_module_options(p)
    return p


def add_module_options(p: argparse.ArgumentParser) -> None:
    """Environments that load environment modules (docs/systems.md)."""
    p.add_argument('--module', action='append', default=[], metavar='FAMILY=MODULE[,MODULE...]',
                   help='an environment that loads these modules (an MPI module, optionally '
                   'the OSU module built on it); its facts are read after loading them; '
                   'repeatable')
    p.add_argument('--series', action='append', default=[], metavar='[FAMILY=]NAME',
                   help='the series the module environments (of FAMILY, or all) continue '
                   'across upgrades: recorded in every perflog record (column series), so '
                   'omb-review judges the runs on the next version of the module against '
                   'these (e.g. --module openmpi=openmpi/4.1.6 --series openmpi); repeatable')
    p.add_argument('--loaded-modules', action='store_true',
                   default=os.environ.get('OMB_LOADED_MODULES', '') not in ('', '0'),
                   help='an environment that loads the modules loaded in this shell '
                   '($LOADEDMODULES), whose MPI family is detected (default when '
                   '$OMB_LOADED_MODULES is set to anything but 0)')
    p.add_argument('--discover-modules', nargs='?', const=module_discovery.OSU_NAMES[0],
                   metavar='NAME', help='find the OSU modules (named NAME, default '
                   f'{module_discovery.OSU_NAMES[0]}) on MODULEPATH with Lmod\'s spider and '
                   'register each with the MPI it is built on; lists what it skipped')
    p.add_argument('--spack-modules', action='store_true',
                   help='register the built Spack environments through the Lmod modules '
                   'Spack writes for them (spack/module-config) instead of their views')
