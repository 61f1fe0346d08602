"""ReFrame settings that follow from a partition's configuration, not from its name: a site
copied from ``generic_slurm.py`` (docs/systems.md) gets them as ``local`` does. Read back
through ReFrame's own ``--show-config``."""

from __future__ import annotations

import os
import subprocess

import pytest
from rfm_helpers import REFRAME, REPO, SETTINGS


def poll_rate_max(system: str, site_dir: str) -> int:
    out = subprocess.run([REFRAME, '-C', SETTINGS, '--system', system,
                          '--show-config', 'general/0/poll_rate_max'],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, 'OMB_SYSTEMS_PATH': site_dir})
    assert out.returncode == 0, out.stdout + out.stderr
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(('partition', 'rate'), [
    ('alloc', 50),      # scheduler local, launcher srunalloc: steps of one allocation
    ('cpu', 10),        # one Slurm job per test: ReFrame's default
])
def test_a_copied_generic_slurm_site_polls_its_allocation_partition_fast(tmp_path, partition,
                                                                          rate):
    template = (REPO / 'reframe/config/systems/generic_slurm.py').read_text()
    site = template.replace("'name': 'generic-slurm'", "'name': 'mysite'")
    assert site != template
    (tmp_path / 'mysite.py').write_text(site)
    assert poll_rate_max(f'mysite:{partition}', str(tmp_path)) == rate


def test_local_polls_fast(tmp_path):
    assert poll_rate_max('local', str(tmp_path)) == 50
