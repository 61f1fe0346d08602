"""Selecting one case, one benchmark, one placement: the forms docs/getting-started.md shows,
each asserted on what ReFrame lists.

ReFrame matches ``-n`` against the display name with its spaces removed, and reads a ``%``
in the pattern literally: ``-n 'osu_alltoall/default %scale=2'`` (with a space) selects
nothing, ``-n 'osu_alltoall/default%scale=2'`` the one case.
"""

from __future__ import annotations

import re

import pytest
from rfm_helpers import run_reframe, two_family_registry

#: The verdict files that hold these classes, and the collectives' exploration.
CHECKS = ('osu_pt2pt.py', 'osu_multipair.py', 'osu_collectives.py',
          'explore/osu_collectives.py')


@pytest.fixture(scope='module')
def listed(tmp_path_factory):
    """What each selection lists on `local` with the exploration loaded."""
    tmp = tmp_path_factory.mktemp('select')
    registry = two_family_registry(tmp)

    def _list(*args: str) -> list[str]:
        out = run_reframe(tmp, '--system', 'local', '-l', *args, registry=registry,
                          checks=CHECKS)
        assert out.returncode == 0, out.stdout + out.stderr
        return re.findall(r'^- (\S+ .*?) /[0-9a-f]{8}$', out.stdout, re.M)
    return _list


def test_one_case_by_class_and_parameters_without_spaces(listed):
    assert listed('-n', 'OsuCollective%case=osu_alltoall/default%scale=2') == [
        'OsuCollective %case=osu_alltoall/default %scale=2 %mapping=core']
    assert listed('-n', 'osu_alltoall/default %scale=2') == []      # a space: nothing
    assert listed('-n', 'OsuPt2Pt%benchmark=osu_bw%placement=intra_socket%buffers=HH') == [
        'OsuPt2Pt %benchmark=osu_bw %placement=intra_socket %buffers=H H']


def test_one_benchmark_by_tag_across_verdict_and_exploration(listed):
    names = listed('-t', '^osu_alltoall$')
    assert names and all('osu_alltoall/' in n for n in names)
    assert {n.split()[0] for n in names} == {'OsuCollective', 'OsuCollectiveSweep'}
    assert listed('-t', '^osu_latency$', '-t', 'verdict') == [
        'OsuPt2Pt %benchmark=osu_latency %placement=intra_socket %buffers=H H']


def test_one_placement_by_tag_or_expression(listed):
    tagged = listed('-t', '^intra_socket$', '-t', 'verdict')
    assert {n.split()[0] for n in tagged} == {'OsuPt2Pt', 'OsuMbwMr'}
    assert listed('-n', 'OsuPt2Pt', '-E', "benchmark == 'osu_latency' and placement == "
                  "'intra_socket'") == [
        'OsuPt2Pt %benchmark=osu_latency %placement=intra_socket %buffers=H H']


def test_one_algorithm_at_one_scale_by_expression(listed):
    assert listed('-n', 'OsuCollectiveSweep', '-E',
                  "benchmark == 'osu_bcast' and algorithm == 'knomial' and scale == 4") == [
        'OsuCollectiveSweep %case=osu_bcast/knomial %scale=4 %mapping=core']


def test_the_exploration_scales_go_as_far_as_omb_max_scale(monkeypatch):
    """A small machine explores a bigger one's rank counts oversubscribed; never fewer than the
    partitions offer, and a word instead of a number is refused saying what to give."""
    from omb_suite.rfm import site_offers
    monkeypatch.setattr(site_offers, 'topologies', lambda: [])
    monkeypatch.delenv('OMB_MAX_SCALE', raising=False)
    assert site_offers.all_scales() == [2, 4]
    monkeypatch.setenv('OMB_MAX_SCALE', '32')
    assert site_offers.all_scales() == [2, 4, 8, 16, 32]
    monkeypatch.setenv('OMB_MAX_SCALE', 'big')
    with pytest.raises(ValueError, match='give a number of ranks'):
        site_offers.all_scales()
