"""Every test starts without the caller's OMB_*/OSU_* variables (tests/caller_env.py): a
test's result must not depend on what the shell that runs pytest exported. The fixtures of
the tests on the two-node Slurm mini-cluster (tests/cluster/up): ``cluster``, ``work``,
``slurm_job_ids``.

(Nothing is imported from this module: tests/review has its own conftest, and two
``conftest`` modules would shadow each other; shared paths are in ``testdata``.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest
import testdata
from caller_env import from_caller


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """End-to-end and mini-cluster tests start MPI, OSU, Slurm or Flux: they are ``launches``
    too (scripts/run-tests.sh runs those one at a time, so that nothing competes with the OSU
    runs checked against references, and the others two at a time)."""
    for item in items:
        if item.get_closest_marker('e2e') or item.get_closest_marker('cluster'):
            item.add_marker(pytest.mark.launches)


@pytest.fixture(autouse=True)
def _without_the_callers_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in from_caller(os.environ):
        monkeypatch.delenv(name)


@pytest.fixture(scope='module')
def cluster() -> dict[str, str]:
    """The variables that reach the mini-cluster; a skip when it is not up (a failure with
    OMB_CLUSTER_UP=1: .ci/run brought it up, so one that does not answer is broken)."""
    up = subprocess.run([str(testdata.REPO / 'tests/cluster/status')], capture_output=True,
                        text=True)
    if up.returncode != 0:
        if os.environ.get('OMB_CLUSTER_UP') == '1':
            pytest.fail(f'OMB_CLUSTER_UP=1 but the mini-cluster is not healthy:\n{up.stdout}')
        pytest.skip('mini-cluster not up: run tests/cluster/up (root) to run these tests')
    return testdata.minicluster_env()


@pytest.fixture
def work(cluster: dict[str, str]) -> Iterator[Path]:
    """Stage under the cluster directory: every node sees it, while each node has its own
    /tmp (and a CI checkout may well live under /tmp)."""
    path = Path(cluster['OMB_CLUSTER_DIR']) / 'work' / uuid.uuid4().hex[:8]
    path.mkdir(parents=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def slurm_job_ids(cluster: dict[str, str]) -> Callable[[], set[str]]:
    """Reads the ids of every job the mini-cluster's Slurm controller has logged so far."""
    return partial(testdata.slurm_job_ids, Path(cluster['OMB_CLUSTER_DIR']))
