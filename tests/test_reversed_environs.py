"""reframe/config/reversed_environs.py: layered after a configuration, every partition of the
selected system lists its environments in the reverse order (scripts/upgrade.sh side-by-side
runs half its pairs so), and nothing else changes."""

from __future__ import annotations

import re
import subprocess

from rfm_helpers import REFRAME, REPO, run_reframe, two_family_registry

REVERSED = str(REPO / 'reframe' / 'config' / 'reversed_environs.py')
ONE = ['-n', 'OsuPt2Pt%benchmark=osu_latency%placement=intra_socket%buffers=HH',
       '--system', 'local', '-l']


def environs(text: str) -> list[str]:
    return re.findall(r' on local:default\+(\S+):', text)


def test_the_environments_are_listed_reversed_and_the_rest_kept(tmp_path):
    registry = two_family_registry(tmp_path)
    plain = run_reframe(tmp_path, *ONE, registry=registry, checks=('osu_pt2pt.py',))
    layered = run_reframe(tmp_path, '-C', REVERSED, *ONE, registry=registry,
                          checks=('osu_pt2pt.py',))
    assert plain.returncode == layered.returncode == 0, layered.stdout + layered.stderr
    assert environs(plain.stdout) == ['test-openmpi', 'test-mpich']
    assert environs(layered.stdout) == ['test-mpich', 'test-openmpi']
    # only the selected system is defined again
    assert "redefinition of system 'local'" in layered.stdout + layered.stderr
    assert 'example-epyc' not in layered.stdout + layered.stderr


def test_alone_it_says_to_layer_it_after_a_configuration(tmp_path):
    out = subprocess.run([REFRAME, '-C', REVERSED, '--system', 'local', '-l'], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert 'layer it after the configuration it reverses' in out.stdout + out.stderr
