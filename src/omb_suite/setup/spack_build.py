"""Building our Spack environments for omb-setup: concretize and install each chosen one,
with progress and, on failure, one message saying what to do.

An environment built before from the same files (its ``spack.yaml``, ``common.yaml``, the
site, our recipe repository, the pins) by the same Spack is reused without starting Spack:
a fingerprint of those files is kept in ``.omb/spack-built/<env>.json`` after each build.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import deque
from datetime import datetime, timezone
from pathlib import Path

from omb_suite.setup import spack_envs, step_failures
from omb_suite.setup.progress import Progress
from omb_suite.setup.spack_bootstrap import Spack
from omb_suite.setup.spack_envs import SpackSetupError

#: Lines of Spack output kept to explain a failure (the error is printed last).
TAIL_LINES = 400


def stamp_path(repo: Path, name: str) -> Path:
    return repo / '.omb' / 'spack-built' / f'{name}.json'


def inputs(repo: Path, env_dir: Path, site: str) -> list[Path]:
    """Every file whose change can change what Spack builds for ``env_dir`` on ``site``."""
    envs = spack_envs.environments_dir(repo)
    files = [env_dir / 'spack.yaml', envs / 'common.yaml', repo / 'spack' / 'pins.yaml']
    # The site, the part omb-setup generates for it, and what the environment alone includes
    # (a pip MPI's external): not the generated parts of other environments.
    folders = [envs / 'sites' / site, repo / '.omb' / 'spack-site' / site, repo / 'spack' / 'repo',
               *spack_envs.own_includes(env_dir)]
    for folder in folders:
        files += sorted(p for p in folder.rglob('*')
                        if p.is_file() and '__pycache__' not in p.parts)
    return files


def fingerprint(repo: Path, env_dir: Path, site: str, spack: Spack,
                osu_version: str | None = None) -> str:
    digest = hashlib.sha256(f'{spack.executable}\0{site}\0{osu_version or ""}\0'.encode())
    for path in inputs(repo, env_dir, site):
        digest.update(f'{path}\0'.encode() + path.read_bytes())
    return digest.hexdigest()


def is_fresh(repo: Path, env_dir: Path, digest: str) -> bool:
    """Built (lock and OSU view present) from inputs with this fingerprint."""
    try:
        stamp = json.loads(stamp_path(repo, env_dir.name).read_text())
    except (OSError, ValueError):
        return False
    return stamp.get('fingerprint') == digest and env_dir in spack_envs.built_environments(repo)


def write_stamp(repo: Path, env_dir: Path, digest: str, site: str, spack: Spack) -> None:
    path = stamp_path(repo, env_dir.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        'fingerprint': digest, 'spack': spack.executable, 'site': site,
        'built': datetime.now(timezone.utc).isoformat(timespec='seconds')}, indent=2) + '\n')


def run_shown(cmd: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run ``cmd`` with its output shown as it comes; return its status and output's tail."""
    print('+', ' '.join(cmd), flush=True)
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors='replace') as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            tail.append(line)
    return proc.returncode, ''.join(tail)


def context(repo: Path, env_dir: Path, site: str, cmd: list[str]) -> dict[str, str]:
    """What a failure message names: the environment's spec, the site, the command."""
    manifest = spack_envs.read_yaml(env_dir / 'spack.yaml')['spack']
    site_dir = spack_envs.environments_dir(repo) / 'sites' / site
    return {'spec': ', '.join(manifest.get('specs', [])), 'env': env_dir.name, 'site': site,
            'site_dir': str(site_dir.relative_to(repo)), 'cmd': ' '.join(cmd)}


def build_one(argv: list[str], env: dict[str, str], repo: Path, env_dir: Path, site: str,
              install_args: list[str], progress: Progress) -> None:
    """``spack concretize --force`` then ``spack install`` of one environment."""
    steps = (('concretize', ['concretize', '--force'], f'concretize {env_dir.name} on site '
              f'{site}'),
             ('install', ['install', '--fail-fast', *install_args], f'build {env_dir.name}'))
    for key, args, what in steps:
        cmd = [*argv, '-e', str(env_dir), *args]
        if '--no-checksum' in args:
            progress.say('WARNING: spack install --no-checksum, as you asked: Spack will NOT '
                         'verify that source tarballs are the ones our recipe declares')
        with progress.step(key, what):
            status, output = run_shown(cmd, env)
            if status != 0:
                raise SpackSetupError(step_failures.explain(
                    key, output, **context(repo, env_dir, site, cmd)))


def build(spack: Spack, repo: Path, site: str, names: list[str], mirror: Path | None,
          install_args: list[str], progress: Progress, osu_version: str | None = None) -> None:
    """Build the environments ``names`` on ``site`` (OSU ``osu_version``, else the one
    common.yaml requires), reusing those built from the same files."""
    argv, env = spack_envs.spack_command(spack.executable, repo, site, mirror, osu_version)
    env.update(spack.env)
    for name in names:
        env_dir = spack_envs.environments_dir(repo) / name
        missing = [p for p in spack_envs.own_includes(env_dir) if not p.exists()]
        if missing:
            raise SpackSetupError(
                f'environment {name} includes {missing[0]}, which is not there: it is '
                f'written by omb-setup for an MPI installed by `bash scripts/install-deps.sh '
                f'--pip-mpi` (docs/systems.md, "Today\'s MPI releases"); install it first')
        digest = fingerprint(repo, env_dir, site, spack, osu_version)
        if is_fresh(repo, env_dir, digest):
            progress.say(f'reusing environment {name}: built before from the same files, '
                         f'nothing to concretize or build')
            continue
        build_one(argv, env, repo, env_dir, site, install_args, progress)
        write_stamp(repo, env_dir, digest, site, spack)
