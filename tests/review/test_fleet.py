"""``omb-review fleet`` on real fleet perflogs (the 4-node mini-cluster, 2026-11-29: one
healthy run, one with node3's network rate-limited by tests/cluster/fault): the same verdict
as the run's own, from the perflog alone."""

from __future__ import annotations

from pathlib import Path

from omb_review import cli

DATA = Path(__file__).parent / 'data' / 'fleet'


def test_a_healthy_fleet_perflog_names_nothing(capsys):
    assert cli.main(['fleet', str(DATA / 'healthy'), '--tolerance', '5']) == 0
    assert 'nothing slow' in capsys.readouterr().out


def test_the_slow_node_is_named_again_from_the_perflog(capsys):
    assert cli.main(['fleet', str(DATA / 'slow-node'), '--tolerance', '5']) == 1
    out = capsys.readouterr().out
    assert 'node node3: slow with 3 of 3 partners; its network' in out
    assert 'to drain: scontrol update nodename=node3 state=drain' in out
    assert out.count('scontrol') == 1


def test_no_fleet_run_says_what_to_run(tmp_path, capsys):
    assert cli.main(['fleet', str(tmp_path)]) == 2
    assert '--mode fleet -r' in capsys.readouterr().err
