"""``scripts/build-flux.sh`` without building: its source is pinned by sha256, a prefix it built
is reused as it is, a site's prefix is checked and used, and a missing source says what to set.
Run on a copy of the script in a sandbox (the build itself runs in CI: .ci/run, and its real
instances in tests/test_e2e_flux.py)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from setup_helpers import script
from testdata import REPO

PINNED = re.search(r'^PINNED_SHA256=(\w+)', (REPO / 'scripts/build-flux.sh').read_text(),
                   re.M)[1]
VERSION = re.search(r'^VERSION=(\S+)', (REPO / 'scripts/build-flux.sh').read_text(), re.M)[1]
WORKING_FLUX = 'exit 0'        # `flux version` and `flux python -c 'import flux.job'` succeed


def sandbox(tmp: Path) -> Path:
    root = tmp / 'main'
    (root / 'scripts').mkdir(parents=True)
    shutil.copy(REPO / 'scripts/build-flux.sh', root / 'scripts/build-flux.sh')
    return root


def build(root: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(['bash', 'scripts/build-flux.sh'], cwd=root, capture_output=True,
                          text=True, timeout=60, env={'PATH': '/usr/bin:/bin', **env})


def test_without_a_source_it_says_which_variables_name_one(tmp_path):
    done = build(sandbox(tmp_path))
    assert done.returncode == 1
    assert f'no flux-core source at {tmp_path}/shared/mirror/flux-core-{VERSION}.tar.gz' \
        in done.stderr
    assert 'OMB_FLUX_SOURCE' in done.stderr and 'OMB_FLUX_PREFIX' in done.stderr


def test_a_tarball_of_another_content_is_refused(tmp_path):
    root = sandbox(tmp_path)
    other = tmp_path / f'flux-core-{VERSION}.tar.gz'
    other.write_bytes(b'not flux-core')
    done = build(root, OMB_FLUX_SOURCE=str(other))
    assert done.returncode == 1
    assert f'not the pinned {PINNED}' in done.stderr
    assert not (root / '.omb').exists()


def test_a_prefix_it_built_is_reused_without_building(tmp_path):
    root = sandbox(tmp_path)
    source = tmp_path / 'shared/mirror' / f'flux-core-{VERSION}.tar.gz'
    source.parent.mkdir(parents=True)
    source.write_bytes(b'stand-in')
    sha = subprocess.run(['sha256sum', str(source)], capture_output=True, text=True,
                         check=True).stdout.split()[0]
    prefix = root / '.omb/flux' / VERSION
    script(prefix / 'bin/flux', WORKING_FLUX)
    (prefix / '.omb-flux-sha256').write_text(sha + '\n')
    done = build(root, OMB_FLUX_SHA256=sha)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(prefix)
    assert 'reusing' in done.stderr and 'building' not in done.stderr


def test_a_sites_prefix_is_checked_and_used(tmp_path):
    site = tmp_path / 'site-flux'
    script(site / 'bin/flux', WORKING_FLUX)
    done = build(sandbox(tmp_path), OMB_FLUX_PREFIX=str(site))
    assert (done.returncode, done.stdout.strip()) == (0, str(site))
    script(site / 'bin/flux', 'exit 1')
    done = build(sandbox(tmp_path / 'again'), OMB_FLUX_PREFIX=str(site))
    assert done.returncode == 1
    assert f'OMB_FLUX_PREFIX={site} has no working bin/flux' in done.stderr
