"""The cloud team's OSU runs under Flux (``flux run -N2 -n2 -o cpu-affinity=per-task``, their
published outputs in tests/data/osu-world/usernetes-azure/) and the suite's own run of the same
launch line on a real Flux instance (tests/review/data/flux: flux-test:minicluster) are read by
the same review: one report, the same series keys and metrics for both."""

from __future__ import annotations

import shutil

from conftest import DATA
from testdata import REPO

from omb_review.cli import main
from omb_review.report.page import read_payload

USERNETES = REPO / 'tests/data/osu-world/usernetes-azure'
#: what the outputs do not say (README of converged-computing/usernetes-azure): where they ran
MAPPING = """rules:
  - path: 'experiments_README_lines(88-126|129-161|223-254|257-287)\\.txt'
    date: 2023-09-01
    system: usernetes-azure
    partition: flux
    environ: openmpi-4.1
    mpi_family: openmpi
    placement: inter_node
    num_nodes: 2
    num_tasks: 2
"""


def test_the_cloud_teams_flux_runs_and_ours_are_read_by_the_same_review(tmp_path):
    tree = shutil.copytree(DATA / 'flux', tmp_path / 'perflogs')
    mapping = tmp_path / 'mapping.yaml'
    mapping.write_text(MAPPING)
    assert main(['import-osu', str(USERNETES), '--map', str(mapping), '-o', str(tree)]) == 0
    assert main(['report', str(tree), '-o', str(tmp_path / 'out'), '--no-cache']) == 0
    charts = read_payload(tmp_path / 'out/report.html')['charts']
    keys = {(k['system'], k['benchmark'], k['placement'], k['num_nodes'], k['num_tasks'],
             k['metric']) for k in (c['keys'] for c in charts)}
    for system in ('flux-test', 'usernetes-azure'):
        for benchmark, metric in (('osu_latency', 'latency'), ('osu_bw', 'bandwidth')):
            assert (system, benchmark, 'inter_node', 2, 2, metric) in keys, sorted(keys)
