"""ReFrame settings that follow from a partition's configuration, not from its name: a site
copied from ``generic_slurm.py`` (docs/systems.md) gets them as ``local`` does. Read back
through ReFrame's own ``--show-config``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

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


def test_settings_registers_the_record_launchers_without_the_suites_reframe_layer():
    """omb-review loads settings.py through ReFrame's loader: that must stay light, and the
    launchers ReFrame lacks (jsrun, flux, pals) must be there for the systems that use them."""
    code = ('import sys, runpy; runpy.run_path(sys.argv[1]); '
            'from reframe.core.backends import getlauncher; '
            'print(sorted(m for m in sys.modules if m.startswith("omb_suite.rfm"))); '
            'print(" ".join(" ".join(getlauncher(n)().command(None)) '
            'for n in ("jsrun", "flux", "pals")))')
    out = subprocess.run([sys.executable, '-c', code, SETTINGS], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    layer, commands = out.stdout.splitlines()[-2:]
    assert layer == '[]'
    assert commands == 'jsrun flux run mpiexec'


def log_file_level(**env: str) -> subprocess.CompletedProcess:
    return subprocess.run([REFRAME, '-C', SETTINGS, '--system', 'local', '--show-config',
                           'logging/0/handlers'], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


def test_reframes_log_file_keeps_what_each_test_did_and_debug2_on_request():
    """ReFrame's own log at 'verbose' (its default debug2 built ~200 records per test), and
    OMB_REFRAME_LOG brings debug2 back; a level ReFrame does not know is an error saying so."""
    def level(**env: str) -> str:
        out = log_file_level(**env)
        assert out.returncode == 0, out.stdout + out.stderr
        (handler,) = json.loads(out.stdout[out.stdout.index('['):])
        return handler['level']

    assert level() == 'verbose'
    assert level(OMB_REFRAME_LOG='debug2') == 'debug2'
    out = log_file_level(OMB_REFRAME_LOG='loud')
    assert out.returncode != 0
    assert "OMB_REFRAME_LOG='loud' is no ReFrame log level" in out.stdout + out.stderr
