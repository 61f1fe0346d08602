"""References: found beside the checks run, and resolved for ReFrame releases without
external references (4.9) exactly as ReFrame 4.10 resolves them."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from reframe.core import pipeline

from omb_suite.rfm import references

REPO = Path(__file__).resolve().parents[1]
LOCAL = REPO / 'reframe' / 'references' / 'local.yaml'


class OsuCollectiveSweep(SimpleNamespace):
    """A stand-in with the attributes the file's ``$index`` names (class name = entry)."""


def sweep(**attrs: object) -> OsuCollectiveSweep:
    where = SimpleNamespace(current_system=SimpleNamespace(name='local'),
                            current_partition=SimpleNamespace(fullname='local:default'),
                            current_environ=SimpleNamespace(name='spack-mpich'))
    return OsuCollectiveSweep(**vars(where), **{'benchmark': 'osu_bcast', 'algorithm': 'chain',
                                                'num_tasks': 2, 'mapping': 'core', 'num_nodes': 1,
                                                **attrs})


@pytest.fixture
def without_external_references(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(references, 'EXTERNAL_REFERENCES', False)


def test_reframe_410_reads_the_file_itself() -> None:
    if not hasattr(pipeline, 'RegressionTestDict'):
        pytest.skip('this ReFrame is older than 4.10: no external references')
    assert references.EXTERNAL_REFERENCES
    assert references.reference_of(sweep(), LOCAL) == {'$ref': str(LOCAL.resolve())}


@pytest.mark.usefixtures('without_external_references')
def test_an_older_reframe_gets_the_leaves_by_regex_keys_as_410_does() -> None:
    # environment '.*' and algorithm '(basic_linear|chain|...)' are anchored regexes
    assert references.reference_of(sweep(), LOCAL) == {'local:default': {
        'avg_latency_8': (0.35, -1.0, 20.0, 'us'),
        'avg_latency_65536': (7.0, -1.0, 50.0, 'us')}}


@pytest.mark.usefixtures('without_external_references')
def test_an_older_reframe_gets_no_reference_where_410_finds_none() -> None:
    assert references.reference_of(sweep(algorithm='chainx'), LOCAL) == {}  # anchored
    assert references.reference_of(sweep(num_tasks=4), LOCAL) == {}
    assert references.reference_of(sweep(), LOCAL.with_name('absent.yaml')) is None


def test_references_come_from_the_checks_repository_not_the_install(tmp_path: Path,
                                                                    monkeypatch) -> None:
    monkeypatch.delenv('RFM_REFERENCE_PREFIX', raising=False)
    checks = tmp_path / 'site-copy' / 'reframe' / 'checks'
    checks.mkdir(parents=True)
    (tmp_path / 'site-copy' / 'reframe' / 'references').mkdir()
    found = references.references_dir(checks, fallback=REPO / 'reframe' / 'references')
    assert found == tmp_path / 'site-copy' / 'reframe' / 'references'
    lone = tmp_path / 'lone'
    lone.mkdir()
    assert references.references_dir(lone, fallback=Path('/fallback')) == Path('/fallback')
    monkeypatch.setenv('RFM_REFERENCE_PREFIX', str(tmp_path))
    assert references.references_dir(checks, fallback=Path('/fallback')) == tmp_path
