"""The ``local`` system's GPUs, from ``nvidia-smi`` (omb_suite.machine.host_gpus).

``9.0`` is what the lent H100 machine's nvidia-smi printed (driver 580, 2026-11-26,
docs/gpu-and-procurement.md); the programs here are stand-ins printing such lines.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from setup_helpers import script

from omb_suite.machine import host_gpus

LOCAL = Path(__file__).resolve().parents[2] / 'reframe' / 'config' / 'systems' / 'local.py'


def test_one_line_per_gpu_and_the_arch_of_the_first():
    assert host_gpus.devices_from('9.0\n') == [
        {'type': 'gpu', 'arch': 'sm_90', 'num_devices': 1}]
    assert host_gpus.devices_from('8.0\n8.0\n8.0\n8.0\n')[0]['num_devices'] == 4
    assert host_gpus.devices_from('\n') == []


def test_a_driver_message_is_an_error_naming_the_way_out():
    with pytest.raises(ValueError, match=r"printed '\[N/A\]'.*system file of your own"):
        host_gpus.devices_from('[N/A]\n')


def fake_nvidia_smi(tmp_path: Path, monkeypatch, body: str) -> None:
    script(tmp_path / 'bin' / 'nvidia-smi', body)
    monkeypatch.setenv('PATH', f'{tmp_path / "bin"}:/usr/bin:/bin')


def test_no_driver_or_no_nvidia_smi_is_no_gpu(tmp_path, monkeypatch):
    monkeypatch.setenv('PATH', str(tmp_path))
    assert host_gpus.detect() == []
    fake_nvidia_smi(tmp_path, monkeypatch, 'echo "NVIDIA-SMI has failed" >&2; exit 9')
    assert host_gpus.detect() == []


def load_local() -> dict:
    spec = importlib.util.spec_from_file_location('local_system_under_test', LOCAL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.system['partitions'][0]


def test_local_declares_the_gpus_it_finds(tmp_path, monkeypatch):
    fake_nvidia_smi(tmp_path, monkeypatch, 'echo 9.0')
    part = load_local()
    assert part['features'] == ['cpu', 'gpu']
    assert part['devices'] == [{'type': 'gpu', 'arch': 'sm_90', 'num_devices': 1}]
    monkeypatch.setenv('PATH', str(tmp_path / 'nowhere'))
    part = load_local()
    assert part['features'] == ['cpu'] and part['devices'] == []
