"""Procurement mode: the job scripts the rules ask for, and the result table from perflogs."""

from __future__ import annotations

import subprocess
import sys
from functools import partial

import pytest
import rfm_helpers
from rfm_helpers import (
    cuda_aware_mpi_bin,
    fake_osu_tree,
    job_scripts,
    needs_osu,
    osu_root,
    write_registry,
)
from testdata import DATA

from omb_review.report import procurement
from omb_review.report.procurement import main

run_reframe = partial(rfm_helpers.run_reframe, checks=('osu_pt2pt.py',))

HEADER = ('job_completion_time|result|system|partition|environ|name|display_name|jobid|'
          'job_nodelist|num_nodes|num_tasks|num_tasks_per_node|benchmark|placement|mapping|'
          'algorithm|buffers|mpi_family|mpi_version|osu_version|osu_spec|mpi_spec|spack_lock|'
          'placement_observed|algorithm_evidence|session_tag|perf_var|perf_value|perf_unit|'
          'perf_ref|perf_lower_thres|perf_upper_thres|perf_result')


def test_table_from_real_local_perflog(capsys):
    """Perflog written by a real procurement run on this 2-core VM (OSU 7.4, Open MPI)."""
    assert main([str(DATA / 'procurement'), '--system', 'local']) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ('| system | environ | device | scope | nodes | tasks/node | '
                        'visible devices | executable | msg_size | result | unit | figure |')
    assert ('| local:default | system-openmpi | cpu | intra-node | 1 | 2 | - | `osu_bw` | '
            '67108864 | 837.94 | MB/s | worst |') in lines
    # OSU 7.x never sends 0-byte messages: the latency rule runs at 1 byte, and says so
    assert any('`osu_latency` | 1 | 0.65 | us |' in x for x in lines)


def _gpu_record(case: str, bench: str, nodes: int, var: str, value: float, unit: str,
                time: str = '2026-11-20T10:00:00+00:00', param: str = 'case') -> str:
    name = f'OsuProcurement %benchmark={bench} %{param}={case}'
    fields = [time, 'pass', 'example-gpu', 'gpu', 'ompi-cuda', name, name, '7', "['g1']",
              str(nodes), '2', str(2 // nodes), bench, 'intra_socket', 'null', 'null', 'D D',
              'openmpi', '5.0.5', '7.4', 'null', 'null', 'null', 'g1:cpu0/s0/n0/gpu0', 'null',
              '', var, str(value), unit, '0', 'null', 'null', 'pass']
    return '|'.join(fields)


@pytest.mark.parametrize('param', ['case', 'scenario'])
def test_worst_gpu_pair_is_the_figure_synthetic(tmp_path, capsys, param):
    """Synthetic GPU perflog (no GPU here): pair 0,1 and 2 nodes take the procurement text's
    example values; pairs 0,2 and 0,3 are made up so that 0,3 is the slowest. The check's
    parameter was renamed from `case` to `scenario`: the table does not depend on it."""
    log = tmp_path / 'example-gpu' / 'gpu' / 'OsuProcurement.log'
    log.parent.mkdir(parents=True)
    record = partial(_gpu_record, param=param)
    rows = [record('gpu_intra_node', 'osu_bibw', 1, f'gpus{d}_bandwidth_67108864', v,
                   'MB/s') for d, v in (('0,1', 176667.35), ('0,2', 120000.0), ('0,3', 95000.5))]
    rows.append(record('gpu_intra_node', 'osu_bibw', 1, 'bandwidth_67108864', 95000.5, 'MB/s'))
    rows.append(record('gpu_inter_node', 'osu_latency', 2, 'gpus0_latency_1', 2.43, 'us'))
    rows.append(record('gpu_inter_node', 'osu_latency', 2, 'gpus0_latency_1', 9.9, 'us',
                       time='2026-11-19T10:00:00+00:00'))  # an older run: replaced
    log.write_text('\n'.join([HEADER, *rows]) + '\n')
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    pairs = [x for x in out if '`osu_bibw`' in x]
    assert [x.split(' | ')[6] for x in pairs] == ['0,1', '0,2', '0,3']
    assert pairs[2].endswith('| 95000.50 | MB/s | worst |')
    assert not pairs[0].endswith('worst |')
    inter = [x for x in out if '`osu_latency`' in x]
    assert inter == ['| example-gpu:gpu | ompi-cuda | gpu | inter-node | 2 | 1 | 0 | '
                     '`osu_latency` | 1 | 2.43 | us | worst |']


def test_shared_library_does_not_import_the_review_tool():
    """omb_suite is what the checks import on compute nodes; the review tool (polars, scipy,
    matplotlib) stays out of it."""
    code = ('import importlib, pkgutil, sys, omb_suite\n'
            'for m in pkgutil.walk_packages(omb_suite.__path__, "omb_suite."):\n'
            '    importlib.import_module(m.name)\n'
            'print(sorted(n for n in sys.modules if n.startswith("omb_review")))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == '[]'


def test_missing_perflogs_say_what_to_run(tmp_path, capsys):
    assert main([str(tmp_path)]) == 1
    assert '--mode procurement' in capsys.readouterr().err
    with pytest.raises(procurement.ProcurementError, match="system 'nope'"):
        procurement.read_records(DATA / 'procurement', 'nope')


def test_dry_run_procurement_rules_on_gpu_system(tmp_path):
    osu = fake_osu_tree(tmp_path / 'osu')
    cuda_bin = cuda_aware_mpi_bin(tmp_path)
    reg = write_registry(tmp_path / 'environments.json', [
        {'name': 'ompi-cuda', 'mpi_family': 'openmpi', 'osu_root': str(osu),
         'osu_version': '6.2', 'cuda': True, 'path': [str(cuda_bin)], 'source': 'spack'}])
    out = run_reframe(tmp_path, '--system', 'example-gpu', '--dry-run', '--mode',
                      'procurement', registry=reg)
    assert out.returncode == 0, out.stdout + out.stderr
    scripts = job_scripts(tmp_path)
    gpu_intra = [s for k, s in scripts.items() if k.startswith('example-gpu/gpu/')
                 and 'osu_bibw -m 67108864:67108864 -d cuda D D' in s
                 and '--ntasks-per-node=2' in s]
    assert len(gpu_intra) == 1
    runs = [x for x in gpu_intra[0].splitlines() if 'omb_rank.sh --gpu cuda' in x]
    # one-to-all: GPU 0 with each other GPU of the 4-GPU node, one launch each
    assert [x.split('--gpu cuda ')[1].split()[0] for x in runs] == ['0,1', '0,2', '0,3']
    assert runs[1].endswith('> osu_gpus0,2.out 2> osu_gpus0,2.err')
    latency = [s for s in scripts.values() if 'osu_latency -m 0:0 -d cuda D D' in s
               and '--ntasks-per-node=1' in s]
    assert latency and 'omb_rank.sh --gpu cuda 0 ' in latency[0]        # one GPU per node
    cpu = [s for k, s in scripts.items() if k.startswith('example-gpu/cpu/')]
    assert any('--distribution=block:cyclic' in s and any(
        x.endswith('osu_bw -m 67108864:67108864') for x in s.splitlines())
        for s in cpu)                                             # two cores, two sockets
    assert not any('OsuPt2Pt' in k for k in scripts)              # procurement only


@pytest.mark.e2e
@needs_osu()
def test_procurement_table_from_a_fresh_local_run(tmp_path, capsys):
    root = osu_root('OSU_ROOT')
    out = run_reframe(tmp_path, '--system', 'local', '--mode', 'procurement', '-n',
                      'OsuProcurement', '-E', "benchmark in ('osu_latency', 'osu_bibw')",
                      '-S', 'iterations=3', '-S', 'warmup=1', '-r',
                      registry=write_registry(tmp_path / 'environments.json', [
                          {'name': 'system-openmpi', 'mpi_family': 'openmpi',
                           'osu_root': root, 'osu_version': '7.4', 'source': 'system'}]))
    assert out.returncode == 0, out.stdout + out.stderr
    assert main([str(tmp_path / 'results'), '--system', 'local']) == 0
    table = capsys.readouterr().out
    assert '| cpu | intra-node | 1 | 2 | - | `osu_bibw` | 67108864 |' in table
    assert '| cpu | intra-node | 1 | 2 | - | `osu_latency` | 1 |' in table
