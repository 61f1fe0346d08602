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


SETTINGS = Path(__file__).parents[2] / 'reframe' / 'config' / 'settings.py'


def test_the_tolerance_is_the_partitions_own_from_the_configuration(monkeypatch, capsys):
    monkeypatch.delenv('RFM_CONFIG_FILES', raising=False)
    assert cli.main(['fleet', str(DATA / 'healthy')]) == 0
    assert 'tolerance x2' in capsys.readouterr().out  # no configuration: the default
    assert cli.main(['fleet', str(DATA / 'healthy'), '-C', str(SETTINGS)]) == 0
    assert 'tolerance x5' in capsys.readouterr().out  # minicluster:alloc declares 5
    assert cli.main(['fleet', str(DATA / 'healthy'), '-C', str(SETTINGS),
                     '--tolerance', '3']) == 0
    assert 'tolerance x3' in capsys.readouterr().out  # given beats declared


def test_an_unreadable_configuration_is_said(tmp_path, capsys):
    assert cli.main(['fleet', str(DATA / 'healthy'), '-C', str(tmp_path / 'none.py')]) == 2
    assert 'no such ReFrame configuration file' in capsys.readouterr().err


def test_the_report_draws_the_fleet_node_by_node(tmp_path, capsys):
    out = tmp_path / 'out'
    assert cli.main(['report', str(DATA / 'slow-node'), '--out', str(out), '-C', str(SETTINGS),
                     '--no-cache']) == 0
    page = (out / 'report.html').read_text()
    top = page[page.index('<h1>'):page.index('<nav>')]
    assert "Fleet: node node3 (osu_latency, job 30863 on minicluster:alloc" in top
    fleet = page[page.index("<h2 id='sec-fleet'>"):page.index("<h2 id='sec-procurement'>")]
    assert 'tolerance x5' in fleet and 'to drain: scontrol update nodename=node3' in fleet
    matrix = fleet[fleet.index("<table class='fleet-matrix'>"):]
    assert matrix.count('<tr>') == 5  # a head row and one per node
    slow = [c for c in matrix.split('<td')[1:] if 'fleet-slow' in c.split('>')[0]]
    assert len(slow) == 6  # node3's 3 pairs, each in its row and its column
    assert all('node3' in c for c in slow)


def test_a_healthy_report_names_nothing_at_the_top(tmp_path):
    out = tmp_path / 'out'
    assert cli.main(['report', str(DATA / 'healthy'), '--out', str(out), '-C', str(SETTINGS),
                     '--no-cache']) == 0
    page = (out / 'report.html').read_text()
    assert 'Fleet:' not in page[page.index('<h1>'):page.index('<nav>')]
    fleet = page[page.index("<h2 id='sec-fleet'>"):page.index("<h2 id='sec-procurement'>")]
    assert "<table class='fleet-matrix'>" in fleet and 'fleet-slow' not in fleet


def test_a_report_without_a_fleet_run_has_no_fleet_section(tmp_path):
    src = Path(__file__).parent / 'data' / 'site-format'
    out = tmp_path / 'out'
    assert cli.main(['report', str(src), '--out', str(out), '--no-cache', '-C', '']) == 0
    assert "sec-fleet" not in (out / 'report.html').read_text()


def test_dry_run_records_are_no_fleet_run(capsys):
    """A site's `--dry-run` wrote OsuFleet records with no figure ('null'): not a crash."""
    assert cli.main(['fleet', str(DATA.parent / 'dry-run')]) == 2
    assert 'no fleet run' in capsys.readouterr().err
