"""Which way is worse for every unit an OSU output or perflog carries (data/units.yaml)."""

from __future__ import annotations

import json

import pytest
from conftest import DATA

from omb_review.cli import main
from omb_review.read.series import worse_when
from omb_suite.osu import catalogue
from omb_suite.osu.parsing import layout

#: Units of OSU's columns that are no measurement (message size, iteration count).
NOT_MEASURED = {"bytes", ""}


def test_every_unit_osu_prints_or_the_suite_logs_has_a_direction():
    units = {unit for _, _, unit in layout.LABELS} | set(catalogue.UNITS.values()) | {"ms"}
    measured = units - NOT_MEASURED
    assert measured >= {"us", "ms", "MB/s", "messages/s", "%"}
    assert {unit: worse_when(unit) for unit in measured} == {
        unit: (1 if unit in ("us", "ms") else -1) for unit in measured}


@pytest.mark.parametrize(
    ("unit", "sign"),
    [("Messages/s", -1), ("usec", 1), ("MB/sec", -1), ("GB/s", -1), ("s", 1), (" us ", 1),
     ("bytes", 0), ("", 0), (None, 0), ("furlongs", 0)],
)
def test_spellings_other_checks_wrote(unit, sign):
    assert worse_when(unit) == sign


def test_reframe3_message_rates_are_judged(tmp_path):
    """StackHPC's ReFrame 3 osu_mbw_mr perflogs log `Messages/s`: its 20 series were "not known
    whether higher or lower is worse"; now they are judged like any rate."""
    out = tmp_path / "gate.json"
    main(["check", str(DATA / "rfm3-stackhpc"), "--no-cache", "--json", str(out)])
    series = json.loads(out.read_text())["series"]
    rates = [s for s in series if s["unit"] == "Messages/s"]
    assert len(rates) == 20
    assert not [s for s in series if "not known whether" in s.get("reason", "")]
