"""Runs a library is known to hang in: the programs that hang in most runs skipped before the
run with the defect, every other program of an affected run told that it may hang after its
result; only where the library, its device and the node count are the affected ones."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from rfm_helpers import fake_osu_tree, job_scripts, run_reframe, write_registry

from omb_suite.mpi import known_hangs
from omb_suite.mpi.known_hangs import Run, hang_after_result, known_hang
from omb_suite.mpi.records import RecordError


@pytest.mark.parametrize(('run', 'skipped', 'after_result'), [
    (Run('osu_init', 'mpich', '4.0.2', 'ch4:ucx', 2), True, True),
    (Run('osu_hello', 'mpich', '4.1.2', 'ch4:ucx', 8), True, True),
    (Run('osu_barrier', 'mpich', '4.0.2', 'ch4:ucx', 2), False, True),   # run, bounded
    (Run('osu_latency', 'mpich', '4.0.2', 'ch4:ucx', 2), False, True),
    (Run('osu_init', 'mpich', '4.0.2', 'ch4:ucx', 1), False, False),     # one node: no hang
    (Run('osu_barrier', 'mpich', '4.0.2', 'ch4:ucx', 1), False, False),
    (Run('osu_init', 'mpich', '4.2.0', 'ch4:ucx', 2), False, False),     # fixed in 4.2
    (Run('osu_init', 'mpich', '4.0.2', 'ch4:ofi', 2), False, False),     # another netmod
    (Run('osu_init', 'mpich', None, 'ch4:ucx', 2), False, False),        # unknown: run it
    (Run('osu_init', 'openmpi', '4.1.4', None, 2), False, False),
])
def test_only_the_affected_library_device_and_scale_match(run, skipped, after_result):
    for reason, expected in ((known_hang(run), skipped), (hang_after_result(run), after_result)):
        assert (reason is not None) == expected
        if expected:
            assert 'pmodels/mpich#6596' in reason and 'fixed in mpich 4.2' in reason
            assert f'known to hang in {run.program} on 2+ nodes' in reason


def _debian_mpich(tmp: Path) -> dict:
    """A registry entry: Debian's MPICH 4.0.2 (its mpichversion says ch4:ucx), fake OSU."""
    mpich_bin = tmp / 'mpich' / 'bin'
    mpich_bin.mkdir(parents=True)
    (mpich_bin / 'mpichversion').symlink_to(shutil.which('mpichversion'))
    return {'name': 'test-mpich', 'mpi_family': 'mpich', 'mpi_version': '4.0.2',
            'osu_root': str(fake_osu_tree(tmp / 'osu')), 'path': [str(mpich_bin)],
            'source': 'system'}


@pytest.mark.skipif(not shutil.which('mpichversion'), reason='Debian MPICH not installed')
def test_mpich_startup_on_two_nodes_is_skipped_naming_the_defect(tmp_path):
    """The mini-cluster's alloc partition with Debian's MPICH 4.0.2 (ch4:ucx): the two-node
    osu_init is skipped before the run, the one-node one is not."""
    registry = write_registry(tmp_path / 'environments.json', [_debian_mpich(tmp_path)])
    out = run_reframe(tmp_path, '--system', 'minicluster:alloc', '--dry-run', '-n',
                      'OsuStartup', checks=('osu_startup.py',), registry=registry)
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'mpich 4.0.2 ch4:ucx is known to hang in osu_init on 2+ nodes' in out.stdout
    assert 'pmodels/mpich#6596' in out.stdout
    scripts = job_scripts(tmp_path)
    assert len(scripts) == 1 and '--nodes=1' in next(iter(scripts.values()))


@pytest.mark.skipif(not shutil.which('mpichversion'), reason='Debian MPICH not installed')
def test_affected_runs_get_a_bounded_limit_without_a_partition_model(tmp_path):
    """No model to predict from (the built-in defaults): an unaffected launch keeps ReFrame's
    limit alone; one that may hang after its result runs under ``timeout`` at ReFrame's limit
    less its grace, so that sanity sees what it printed."""
    mpich = _debian_mpich(tmp_path)
    registry = write_registry(tmp_path / 'environments.json', [
        mpich, {'name': 'test-openmpi', 'mpi_family': 'openmpi', 'mpi_version': '4.1.4',
                'osu_root': mpich['osu_root'], 'source': 'system'}])
    out = run_reframe(tmp_path, '--system', 'minicluster:alloc', '--dry-run', '-n',
                      'OsuCollective%case=osu_barrier/default', checks=('osu_collectives.py',),
                      registry=registry)
    assert out.returncode == 0, out.stdout + out.stderr
    scripts = job_scripts(tmp_path)
    for where, script in scripts.items():
        launch = next(line for line in script.splitlines() if 'osu_barrier' in line
                      and not line.startswith('#'))
        two_nodes = '--nodes=2' in launch or '-N 2' in launch
        bounded = launch.startswith('timeout --kill-after=10 150s ')   # 3 min - 30 s
        assert bounded == ('test-mpich' in where and two_nodes), (where, launch)
    assert any('test-mpich' in w for w in scripts) and any('test-openmpi' in w for w in scripts)


@pytest.mark.parametrize(("change", "message"), [
    ({"family": "mpich2"}, r"hangs\[0\]\.family: 'mpich2' is no record of data/families/"),
    ({"min_nodes": 0}, r"hangs\[0\]\.min_nodes: expected a whole number >= 1"),
    ({"skip": []}, r"hangs\[0\]\.skip: expected a non-empty list"),
    ({"why": None}, r"hangs\[0\]\.why: expected a non-empty string"),
    ({"when": "always"}, r"unknown key\(s\) hangs\[0\]\.when"),
])
def test_a_synthetic_bad_rule_is_refused_naming_file_and_key(change, message):
    rule = {"name": "x", "family": "mpich", "before": "4.2", "min_nodes": 2,
            "skip": ["osu_init"], "why": "w", "evidence": "e", **change}
    with pytest.raises(RecordError, match=rf"^data/known_hangs\.yaml: {message}"):
        known_hangs.validate(rule, "hangs[0]")
