"""ReFrame on real Flux instances (``flux-test``: scheduler ``local``, launcher ``flux``, the
``example-flux`` shape), with the flux-core ``scripts/build-flux.sh`` built in ``.omb/flux`` or
``$OMB_FLUX_PREFIX``: started outside an instance, or without ``flux``, a test fails before it
launches anything, saying what to start; inside ``flux start --test-size=1`` the placement
probe runs with the job script the dry run wrote; across the mini-cluster's two nodes (brokers
started by srun) the inter-node pair lands on node1 and node2. The whole verdict set under
both instances runs in CI (tests/flux-ci.sh).

Skipped, saying how, where no Flux is built (and the mini-cluster case where it is not up).
"""

from __future__ import annotations

import os
import re
from functools import partial
from pathlib import Path

import pytest
import rfm_helpers
from rfm_helpers import OPENMPI, job_scripts, local_registry, perflog
from testdata import REPO

pytestmark = [pytest.mark.e2e]

run_reframe = partial(rfm_helpers.run_reframe, checks=('placement_probe.py',))
INSTANCE = str(REPO / 'tests/flux/instance')


def flux_bin() -> Path | None:
    """The bin/ of the Flux the tests use: ``$OMB_FLUX_PREFIX``, else the build in .omb/flux."""
    if os.environ.get('OMB_FLUX_PREFIX'):
        built = [Path(os.environ['OMB_FLUX_PREFIX']) / 'bin']
    else:
        built = sorted((REPO / '.omb/flux').glob('*/bin'))
    return next((b for b in built if (b / 'flux').is_file()), None)


FLUX = flux_bin()
needs_flux = pytest.mark.skipif(
    FLUX is None or not OPENMPI,
    reason='needs Debian Open MPI and a flux-core: bash scripts/install-deps.sh --flux && '
           'bash scripts/build-flux.sh (or OMB_FLUX_PREFIX=<a Flux prefix>)')


def probe(placement: str) -> list[str]:
    """The placement probe's case of ``placement`` with Debian's Open MPI."""
    return ['-n', f'PlacementProbe%placement={placement}', '-p', 'system-openmpi']


@needs_flux
def test_outside_an_instance_a_flux_test_fails_before_its_launch_saying_what_to_start(
        tmp_path, monkeypatch):
    for name in [k for k in os.environ if k.startswith('FLUX_')]:
        monkeypatch.delenv(name)
    env = {'PATH': f'{FLUX}:{os.environ["PATH"]}'}
    out = run_reframe(tmp_path, '--system', 'flux-test:host', *probe('intra_socket'), '-r',
                      registry=local_registry(tmp_path), extra_env=env)
    assert out.returncode != 0
    assert ('partition flux-test:host launches every test with `flux run` in the Flux instance '
            'ReFrame runs in, but ReFrame runs outside any (FLUX_URI is not set)') in out.stdout
    assert '`flux start --test-size=1 reframe ...`' in out.stdout
    written = [k for k in job_scripts(tmp_path) if '/PlacementProbe_' in k]
    assert written == [], f'a job script was written: the test reached its launch: {written}'


@needs_flux
def test_without_flux_on_path_a_flux_test_says_where_flux_comes_from(tmp_path):
    path = ':'.join(p for p in os.environ['PATH'].split(':')
                    if not (Path(p) / 'flux').exists())
    out = run_reframe(tmp_path, '--system', 'flux-test:host', *probe('intra_socket'), '-r',
                      registry=local_registry(tmp_path),
                      extra_env={'PATH': path, 'FLUX_URI': 'local:///nonexistent'})
    assert out.returncode != 0
    assert 'but no `flux` is on PATH' in out.stdout and 'scripts/build-flux.sh' in out.stdout


def flux_line(root: Path) -> str:
    """The probe's launch line, wherever ReFrame left its job script (the stage of a dry run,
    the output of a passed run), its paths under ``root`` made alike."""
    (script,) = [p for where in ('stage', 'output')
                 for p in (root / 'rfm' / where).rglob('PlacementProbe_*/rfm_job.sh')]
    (line,) = [x for x in script.read_text().splitlines() if x.startswith('flux run')]
    return line.replace(str(root), '<root>')


@needs_flux
def test_in_one_instance_the_probe_runs_the_line_its_dry_run_wrote(tmp_path):
    registry = local_registry(tmp_path)
    dry, real = tmp_path / 'dry', tmp_path / 'real'
    args = ['--system', 'flux-test:host', *probe('intra_socket')]
    for where in (dry, real):
        where.mkdir()
    out = run_reframe(dry, *args, '--dry-run', registry=registry,
                      extra_env={'PATH': f'{FLUX}:{os.environ["PATH"]}'})
    assert out.returncode == 0, out.stdout + out.stderr
    out = run_reframe(real, *args, '-r', registry=registry, inside=(INSTANCE, '--'),
                      extra_env={'PATH': f'{FLUX}:{os.environ["PATH"]}'})
    assert out.returncode == 0, out.stdout + out.stderr
    line = flux_line(real)
    assert line == flux_line(dry)
    assert re.fullmatch(r"flux run -N 1 -n 2 -x -o 'cpu-affinity=map:0;1' \S+/placement_probe",
                        line), line
    (row,) = perflog(real, 'PlacementProbe', system='flux-test/host')
    places = row['placement_observed'].split(';')
    assert len(places) == 2 and len({p.split(':')[0] for p in places}) == 1, places


@needs_flux
@pytest.mark.cluster
def test_across_the_minicluster_the_pair_lands_on_both_brokers_nodes(cluster, work):
    out = run_reframe(work, '--system', 'flux-test:minicluster', *probe('inter_node'),
                      '-r', '--max-retries', '1',
                      registry=local_registry(work), inside=(INSTANCE, '--minicluster', '--'),
                      extra_env={**cluster, 'PATH': f'{FLUX}:{cluster["PATH"]}'})
    assert out.returncode == 0, out.stdout + out.stderr
    line = flux_line(work)
    assert line.startswith('flux run -N 2 -n 2 -o cpu-affinity=per-task '), line
    (row,) = perflog(work, 'PlacementProbe', system='flux-test/minicluster')
    hosts = [p.split(':')[0] for p in row['placement_observed'].split(';')]
    assert hosts == ['node1', 'node2'], row['placement_observed']
