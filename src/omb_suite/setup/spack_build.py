"""Building our Spack environments for omb-setup: concretize and install each chosen one,
with progress and, on failure, one message saying what to do.

Spack's concretizer uses one core: several environments are concretized at once, as many as
the cores this process may use, each one's output shown when it ends; then each is installed
in turn (the builds use every core).

An environment built before from the same files (its ``spack.yaml``, ``common.yaml``, the
site, our recipe repository, the pins) by the same Spack is reused without starting Spack:
a fingerprint of those files is kept in ``.omb/spack-built/<env>.json`` after each build.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import deque
from concurrent.futures import ThreadPoolExecutor
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


def _run(argv: list[str], env: dict[str, str], env_dir: Path,
         args: list[str]) -> tuple[list[str], int, str]:
    cmd = [*argv, '-e', str(env_dir), *args]
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors='replace')
    return cmd, done.returncode, done.stdout


def warm_indexes(argv: list[str], env: dict[str, str]) -> None:
    """Build Spack's package indexes (providers, tags, patches) once, alone: a fresh Spack
    builds them on first use under a lock another process waits at most 120 s for, and on a
    slow or busy machine the build takes longer (3 min 14 s measured on 2 cores), so a second
    concretization beside the first failed ("Timed out waiting for a write lock"). Quick once
    built; a failure here is left to the concretizations to report."""
    subprocess.run([*argv, 'providers', 'mpi'], env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)


def concretize(argv: list[str], env: dict[str, str], repo: Path, env_dirs: list[Path],
               site: str, progress: Progress, cores: int | None = None) -> None:
    """``spack concretize --force`` of each environment, ``cores`` at a time (default: the
    cores this process may use); the first that failed, in the given order, is explained."""
    args = ['concretize', '--force']
    names = ', '.join(d.name for d in env_dirs)
    cores = cores or len(os.sched_getaffinity(0))
    at_once = min(cores, len(env_dirs))
    what = f'concretize {names} on site {site}' + (
        f' ({at_once} at a time, each one\'s output when it ends)' if at_once > 1 else '')
    with progress.step('concretize', what):
        if at_once == 1:
            results = []
            for env_dir in env_dirs:
                cmd = [*argv, '-e', str(env_dir), *args]
                status, output = run_shown(cmd, env)
                results.append((cmd, status, output))
                if status:
                    break
        else:
            warm_indexes(argv, env)
            with ThreadPoolExecutor(at_once) as pool:
                futures = [pool.submit(_run, argv, env, d, args) for d in env_dirs]
                results = []
                for future in futures:
                    cmd, status, output = future.result()
                    print('+', ' '.join(cmd), flush=True)
                    sys.stdout.write(output)
                    sys.stdout.flush()
                    results.append((cmd, status, ''.join(output.splitlines(True)[-TAIL_LINES:])))
        for env_dir, (cmd, status, output) in zip(env_dirs, results, strict=False):
            if status != 0:
                raise SpackSetupError(step_failures.explain(
                    'concretize', output, **context(repo, env_dir, site, cmd)))


def install(argv: list[str], env: dict[str, str], repo: Path, env_dir: Path, site: str,
            install_args: list[str], progress: Progress) -> None:
    """``spack install`` of one concretized environment."""
    cmd = [*argv, '-e', str(env_dir), 'install', '--fail-fast', *install_args]
    if '--no-checksum' in install_args:
        progress.say('WARNING: spack install --no-checksum, as you asked: Spack will NOT '
                     'verify that source tarballs are the ones our recipe declares')
    with progress.step('install', f'build {env_dir.name}'):
        status, output = run_shown(cmd, env)
        if status != 0:
            raise SpackSetupError(step_failures.explain(
                'install', output, **context(repo, env_dir, site, cmd)))


def build(spack: Spack, repo: Path, site: str, names: list[str], mirror: Path | None,
          install_args: list[str], progress: Progress, osu_version: str | None = None) -> None:
    """Build the environments ``names`` on ``site`` (OSU ``osu_version``, else the one
    common.yaml requires), reusing those built from the same files."""
    argv, env = spack_envs.spack_command(spack.executable, repo, site, mirror, osu_version)
    env.update(spack.env)
    todo: list[tuple[Path, str]] = []
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
        todo.append((env_dir, digest))
    if not todo:
        return
    concretize(argv, env, repo, [d for d, _ in todo], site, progress)
    for env_dir, digest in todo:
        install(argv, env, repo, env_dir, site, install_args, progress)
        write_stamp(repo, env_dir, digest, site, spack)
