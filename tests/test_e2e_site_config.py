"""A site's own ReFrame configuration runs the suite (docs/site-config.md): its OSU
environments declare only feature ``mpi`` and put MPI and OSU on their PATH; the suite finds
the family, version and OSU in the environment as its job sees it, and says why wherever it
generates or runs nothing. The site's configuration is tests/data/site-config/site.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from rfm_helpers import CHECKS, MPICH, OPENMPI, REFRAME, REPO, fake_osu_tree, mpich_prefix, osu_root

SITE = REPO / 'tests' / 'data' / 'site-config' / 'site.py'
MODES = REPO / 'reframe' / 'config' / 'modes.py'

pytestmark = pytest.mark.skipif(not (OPENMPI and MPICH), reason='needs Debian Open MPI and MPICH')


def run_site(tmp: Path, *args: str, configs: tuple[Path, ...] = (SITE,), osu: tuple = (),
             checks: str = CHECKS, launch: tuple[str, ...] = (),
             **env: str) -> subprocess.CompletedProcess:
    """ReFrame as a site runs it (after ``launch``, e.g. ``salloc``): its configuration, our
    checks, no suite variable set."""
    osu_openmpi, osu_mpich = osu or (str(fake_osu_tree(tmp / 'osu')),) * 2
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(('OMB_', 'OSU_')) or k.startswith('OMB_CLUSTER')}
    environ.update({'SITE_RESULTS': str(tmp / 'site-results'), 'SITE_OSU_OPENMPI': osu_openmpi,
                    'SITE_OSU_MPICH': osu_mpich, 'SITE_MPICH_BIN': str(mpich_prefix(tmp)),
                    'XDG_CACHE_HOME': str(tmp / 'cache'), **env})
    cmd = [*launch, REFRAME, '--nocolor', *(x for c in configs for x in ('-C', str(c))),
           '-c', checks,
           '--prefix', str(tmp / 'rfm'), *args]
    return subprocess.run(cmd, cwd=tmp, env=environ, capture_output=True, text=True, timeout=900)


def ran(out: str) -> tuple[int, int, int]:
    """(passed, failed, skipped) from ReFrame's summary line."""
    found = re.search(r'Ran (\d+)/(\d+) test case\(s\).*\((\d+) failure\(s\).*?(\d+) skipped', out)
    assert found, out[-3000:]
    return int(found[1]) - int(found[3]), int(found[3]), int(found[4])


def test_only_feature_mpi_lists_the_verdict_set_and_names_a_partition_without_mpi(tmp_path):
    out = run_site(tmp_path, '--system', 'sitebox', '-l')
    listing = out.stdout + out.stderr
    assert out.returncode == 0, listing[-3000:]
    for check in ('OsuPt2Pt', 'OsuCollective', 'OsuStartup', 'OsuMbwMr'):
        assert f'- {check} ' in listing
    assert ("partition sitebox:tools: no environment has feature 'mpi' (environments: "
            "builtin), so no OSU check runs there") in listing
    # partitions that declare no processor (and a Slurm one no node count): said once each,
    # with what to declare; a local scheduler's one node is this host, not an assumption
    assert listing.count('partition sitebox:batch: no processor.num_cpus: assumed 2 CPUs') == 1
    assert listing.count('partition sitebox:login: no processor.num_cpus: assumed 2 CPUs') == 1
    assert listing.count('no extras.num_nodes: assumed 2 nodes') == 1


def test_mpich_gets_hydra_options_and_openmpi_its_own(tmp_path):
    out = run_site(tmp_path, '--system', 'sitebox:login', '-n', 'OsuPt2Pt', '--dry-run')
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    scripts = {p.parent.parent.name: p.read_text()
               for p in (tmp_path / 'rfm' / 'stage').rglob('OsuPt2Pt_*/rfm_job.sh')}
    assert 'mpirun -np 2 -bind-to core' in scripts['gnu-mpich']   # Hydra
    assert 'mpirun -np 2 --map-by core --bind-to core' in scripts['gnu-openmpi']


def test_a_family_that_cannot_be_told_is_skipped_with_the_reason(tmp_path):
    strange = tmp_path / 'strange-mpi'
    strange.mkdir()
    (strange / 'mpirun').write_text('#!/bin/sh\necho "SuperMPI launcher 1.0"\n')
    (strange / 'mpirun').chmod(0o755)
    out = run_site(tmp_path, '--system', 'sitebox:login', '-n', 'OsuPt2Pt', '-p', 'gnu-mpich',
                   '--dry-run', SITE_MPICH_BIN=str(strange))
    text = out.stdout + out.stderr
    assert 'cannot tell which MPI family its mpirun is' in text
    assert "'SuperMPI launcher 1.0'" in text and 'set extras: {mpi_family: ...}' in text
    assert '-bind-to' not in ''.join(p.read_text() for p in tmp_path.rglob('rfm_job.sh'))


def test_osu_missing_from_the_environment_names_where_it_looked(tmp_path):
    out = run_site(tmp_path, '--system', 'sitebox:login', '-n', 'OsuPt2Pt', '-p', 'gnu-openmpi',
                   '--dry-run', osu=('', ''))
    text = out.stdout + out.stderr
    assert 'osu_latency: not found (on PATH) in environment gnu-openmpi as its job sees it' \
        in text
    assert '/usr/bin' in text.split('as its job sees it', 1)[1].split('\n', 1)[0]


@pytest.mark.parametrize('order', ['site first', 'modes first'])
def test_modes_are_a_layer_that_keeps_the_site_system(tmp_path, order):
    configs = (SITE, MODES) if order == 'site first' else (MODES, SITE)
    out = run_site(tmp_path, '--mode', 'explore', '-l', configs=configs)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-3000:]
    assert '- OsuCollectiveSweep %case=osu_bcast/' in text  # the explore mode's checks
    assert 'sitebox' in text and '@local' not in text


@pytest.mark.parametrize('order', ['site first', 'modes first'])
def test_a_mode_of_the_layer_keeps_the_users_environment_selection(tmp_path, order):
    """modes.py as a layer keeps ``-p`` beside ``--mode`` as settings.py does
    (tests/test_mode_selection.py: every mode)."""
    configs = (SITE, MODES) if order == 'site first' else (MODES, SITE)
    listings = [run_site(tmp_path, '--system', 'sitebox:login', '-n', 'OsuPt2Pt', '-p',
                         '^gnu-mpich$', '-lC', *mode, configs=configs).stdout
                for mode in ((), ('--mode', 'quick'))]
    cases = [re.findall(r'^- OsuPt2Pt .* (@\S+)$', text, re.M) for text in listings]
    assert cases[0] == ['@sitebox:login+gnu-mpich'] * 3, listings[0][-3000:]
    assert cases[1] == cases[0], listings[1][-3000:]


@pytest.mark.e2e
@pytest.mark.skipif(not (osu_root('OSU_ROOT') and osu_root('OSU_ROOT_MPICH')),
                    reason='needs OSU_ROOT and OSU_ROOT_MPICH (OSU built for Debian Open MPI '
                           'and MPICH); skipped: OSU end-to-end runs')
def test_the_verdict_set_runs_for_real_with_the_site_configuration(tmp_path):
    # --mode quick (through the modes layer): few sizes and iterations, every check
    osu = (osu_root('OSU_ROOT'), osu_root('OSU_ROOT_MPICH'))
    out = run_site(tmp_path, '--system', 'sitebox:login', '-r', '--exec-policy', 'serial',
                   '--mode', 'quick', osu=osu, configs=(SITE, MODES))
    text = out.stdout + out.stderr
    passed, failed, _ = ran(text)
    assert (failed, out.returncode) == (0, 0), text[-6000:]
    assert passed >= 12
    # results where the site's configuration says, in its own format; none in the checkout
    perflogs = tmp_path / 'site-results' / 'perflogs' / 'sitebox' / 'login'
    latency = [line.split('|') for line in (perflogs / 'OsuPt2Pt.log').read_text().splitlines()
               if 'osu_latency' in line and '|gnu-mpich|' in line]
    assert latency and float(latency[-1][3]) > 0 and latency[-1][4] == 'us'
    assert list((tmp_path / 'site-results' / 'reports').glob('run-report-*.json'))
    assert not (REPO / 'perflogs' / 'sitebox').exists()
    shutil.rmtree(tmp_path / 'rfm', ignore_errors=True)


@pytest.mark.cluster
@pytest.mark.e2e
@pytest.mark.skipif(not (osu_root('OSU_ROOT') and osu_root('OSU_ROOT_MPICH')),
                    reason='needs OSU_ROOT and OSU_ROOT_MPICH; skipped: OSU end-to-end runs')
def test_the_verdict_set_runs_in_one_allocation_of_the_mini_cluster(cluster, work,
                                                                      slurm_job_ids):
    """ReFrame in `salloc -N 2` on the site's `srunalloc` partition: every test a step of the
    one job, across both nodes (the allocation's size from Slurm, nothing suite-specific)."""
    osu = (osu_root('OSU_ROOT'), osu_root('OSU_ROOT_MPICH'))
    jobs_before = slurm_job_ids()
    out = run_site(work, '--system', 'sitebox:alloc', '-r', '--exec-policy', 'serial',
                   '--max-retries', '1', '--mode', 'quick', osu=osu, configs=(SITE, MODES),
                   launch=('salloc', '-N', '2', '--exclusive', '-p', 'compute'), **cluster)
    text = out.stdout + out.stderr
    passed, failed, _ = ran(text)
    assert (failed, out.returncode) == (0, 0), text[-6000:]
    assert passed >= 12 and len(slurm_job_ids() - jobs_before) == 1
    assert 'OsuPt2Pt %benchmark=osu_latency %placement=inter_node' in text
