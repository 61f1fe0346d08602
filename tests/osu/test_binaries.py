"""OSU binary lookup across install and build trees of OSU 5.9 to 7.5."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from omb_suite.osu import binaries


def _exe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('#!/bin/sh\n')
    path.chmod(0o755)
    return path


@pytest.mark.parametrize('sub', [
    'libexec/osu-micro-benchmarks/mpi/pt2pt/persistent',   # 7.x install tree
    'libexec/osu-micro-benchmarks/mpi/congestion',         # 7.4+ install tree
    'c/mpi/pt2pt/persistent',                              # 7.x build tree
    'c/mpi/collective/non_blocking',                       # 7.x build tree
    'mpi/one-sided',                                       # 5.9 build tree
])
def test_finds_program_in_each_layout(tmp_path, sub):
    exe = _exe(tmp_path / sub / 'osu_prog')
    assert binaries.find_osu_binary('osu_prog', [tmp_path]) == exe.resolve()


def test_first_root_wins_and_path_is_fallback(tmp_path, monkeypatch):
    a = _exe(tmp_path / 'a/libexec/osu-micro-benchmarks/mpi/pt2pt/osu_latency')
    _exe(tmp_path / 'b/libexec/osu-micro-benchmarks/mpi/pt2pt/osu_latency')
    assert binaries.find_osu_binary('osu_latency', [None, tmp_path / 'a', tmp_path / 'b']) == a
    on_path = _exe(tmp_path / 'bin-dir/osu_bw')
    found = binaries.find_osu_binary('osu_bw', [tmp_path / 'a'],
                                     search_path=str(tmp_path / 'bin-dir'))
    assert found == on_path


def test_missing_program_says_how_to_get_osu(tmp_path):
    with pytest.raises(binaries.OsuNotFoundError) as err:
        binaries.find_osu_binary('osu_latency', [tmp_path], search_path=str(tmp_path))
    text = str(err.value)
    assert str(tmp_path) in text and 'omb-setup' in text and 'OSU_ROOT' in text


def test_non_executable_file_is_ignored(tmp_path):
    p = tmp_path / 'libexec/osu-micro-benchmarks/mpi/pt2pt/osu_bw'
    _exe(p).chmod(0o644)
    assert binaries.find_in_root('osu_bw', tmp_path) is None


def test_list_benchmarks_of_real_install_when_present():
    root = os.environ.get('OSU_ROOT')
    if not root:
        pytest.skip('OSU_ROOT not set: no real OSU install to list')
    found = binaries.list_benchmarks(root)
    for name in ('osu_latency', 'osu_bcast', 'osu_put_latency', 'osu_init'):
        assert name in found, f'{name} not found under {root}'
