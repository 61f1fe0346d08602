"""libyaml's parser gives the same data as PyYAML's own for every YAML file the suite reads
at run time (omb_suite.yamldata: data files; omb_suite.rfm.reframe_speed: references)."""

from __future__ import annotations

import pytest
import yaml
from testdata import REPO

from omb_suite import yamldata

FILES = sorted((REPO / 'src' / 'omb_suite' / 'data').rglob('*.yaml')) + \
    sorted((REPO / 'reframe' / 'references').glob('*.yaml'))


def test_libyaml_is_used_here():
    assert yaml.__with_libyaml__ and yamldata.LOADER is yaml.CSafeLoader


@pytest.mark.parametrize('path', FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_the_same_data_as_pyyaml(path):
    assert yamldata.load(path.read_text()) == yaml.safe_load(path.read_text())


def test_reframe_reads_references_with_libyaml():
    from reframe.core import pipeline

    from omb_suite.rfm import reframe_speed
    reframe_speed.apply()
    assert pipeline.yaml.safe_load is reframe_speed.safe_load
    with open(REPO / 'reframe' / 'references' / 'local.yaml') as fp:
        assert pipeline.yaml.safe_load(fp) == yaml.safe_load(
            (REPO / 'reframe' / 'references' / 'local.yaml').read_text())
