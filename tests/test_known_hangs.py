"""Runs a library is known to hang in: skipped before the run with the defect, only where the
library, its device and the node count are the affected ones."""

from __future__ import annotations

import shutil

import pytest
from rfm_helpers import fake_osu_tree, job_scripts, run_reframe, write_registry

from omb_suite.known_hangs import Run, known_hang


@pytest.mark.parametrize(('run', 'hangs'), [
    (Run('osu_init', 'mpich', '4.0.2', 'ch4:ucx', 2), True),
    (Run('osu_hello', 'mpich', '4.1.2', 'ch4:ucx', 8), True),
    (Run('osu_init', 'mpich', '4.0.2', 'ch4:ucx', 1), False),     # one node: no hang seen
    (Run('osu_init', 'mpich', '4.2.0', 'ch4:ucx', 2), False),     # fixed in 4.2
    (Run('osu_init', 'mpich', '4.0.2', 'ch4:ofi', 2), False),     # another netmod
    (Run('osu_init', 'mpich', None, 'ch4:ucx', 2), False),        # unknown: run it
    (Run('osu_init', 'openmpi', '4.1.4', None, 2), False),
    (Run('osu_latency', 'mpich', '4.0.2', 'ch4:ucx', 2), False),  # traffic connects all
])
def test_only_the_affected_library_device_and_scale_match(run, hangs):
    reason = known_hang(run)
    assert (reason is not None) == hangs
    if hangs:
        assert 'pmodels/mpich#6596' in reason and 'fixed in mpich 4.2' in reason


@pytest.mark.skipif(not shutil.which('mpichversion'), reason='Debian MPICH not installed')
def test_mpich_startup_on_two_nodes_is_skipped_naming_the_defect(tmp_path):
    """The mini-cluster's alloc partition with Debian's MPICH 4.0.2 (ch4:ucx): the two-node
    osu_init is skipped before the run, the one-node one is not."""
    osu = fake_osu_tree(tmp_path / 'osu')
    mpich_bin = tmp_path / 'mpich' / 'bin'
    mpich_bin.mkdir(parents=True)
    (mpich_bin / 'mpichversion').symlink_to(shutil.which('mpichversion'))
    registry = write_registry(tmp_path / 'environments.json', [
        {'name': 'test-mpich', 'mpi_family': 'mpich', 'mpi_version': '4.0.2',
         'osu_root': str(osu), 'path': [str(mpich_bin)], 'source': 'system'}])
    out = run_reframe(tmp_path, '--system', 'minicluster:alloc', '--dry-run', '-n',
                      'OsuStartup', checks=('osu_startup.py',), registry=registry)
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'mpich 4.0.2 ch4:ucx is known to hang in osu_init on 2+ nodes' in out.stdout
    assert 'pmodels/mpich#6596' in out.stdout
    scripts = job_scripts(tmp_path)
    assert len(scripts) == 1 and '--nodes=1' in next(iter(scripts.values()))
