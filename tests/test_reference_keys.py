"""Reference keys cannot collide: every case of the verdict set, the exploration and the
procurement checks, dry-run on `local` and the example systems, is read back from ReFrame's
run report (its variables after set-up, as the perflog logs them); its key under the
``$index`` of its class is unique, and the reference files index each class by the columns
``omb-review baseline`` derives from the perflog (``baseline.INDEX_COLUMNS``, in that order),
so references written by hand and derived from history read alike."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
import yaml
from rfm_helpers import REPO, cuda_aware_mpi_bin, fake_osu_tree, run_reframe, write_registry

from omb_review.references.baseline import INDEX_COLUMNS

REFERENCES = REPO / 'reframe' / 'references'
#: (system, mode, check directories) dry-run: the verdict set and procurement checks on every
#: example system (the GPU system's device buffers included), the exploration on `local`
#: (on the example systems it holds thousands of cases: minutes of dry run).
RUNS = [*((system, mode, checks) for system in ('local', 'example-epyc', 'example-gpu',
                                                'example-cloud')
          for mode, checks in ((None, ()), ('procurement', ('procurement',)))),
        ('local', 'explore', ('explore',))]
#: Index levels that are no perflog column: a class's own parameter, kept in its file.
PARAMETER_LEVELS: dict[str, list[str]] = {}


def registry(tmp: Path) -> Path:
    """Open MPI, MPICH and a CUDA-aware Open MPI (device buffers) over a fake OSU tree."""
    osu = str(fake_osu_tree(tmp / 'osu'))
    return write_registry(tmp / 'environments.json', [
        {'name': 'test-openmpi', 'mpi_family': 'openmpi', 'mpi_version': '4.1.4',
         'osu_root': osu, 'osu_version': '7.4', 'source': 'system'},
        {'name': 'test-mpich', 'mpi_family': 'mpich', 'mpi_version': '4.0.2',
         'osu_root': osu, 'path': ['/opt/mpich/bin'], 'source': 'system'},
        {'name': 'test-ompi-cuda', 'mpi_family': 'openmpi', 'mpi_version': '5.0.5',
         'osu_root': osu, 'osu_version': '7.4', 'cuda': True,
         'path': [str(cuda_aware_mpi_bin(tmp))], 'source': 'spack'}])


@cache
def _cases(tmp: Path, system: str, mode: str | None, checks: tuple[str, ...]) -> list[dict]:
    where = tmp / f'{system}-{mode}'
    where.mkdir()
    report = where / 'report.json'
    args = ['--system', system, '--dry-run', '--report-file', str(report)]
    out = run_reframe(where, *args, *(['--mode', mode] if mode else []),
                      registry=registry(where), checks=checks)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return [case for run in json.loads(report.read_text())['runs']
            for case in run['testcases'] if case['result'] != 'skip']


@pytest.fixture(scope='module')
def cases(tmp_path_factory) -> list[dict]:
    tmp = tmp_path_factory.mktemp('keys')
    return [case for run in RUNS for case in _cases(tmp, *run)]


def class_of(case: dict) -> str:
    return case['name'].split()[0]


def logged_index(classes: dict[str, list[dict]], test: str) -> list[str]:
    """The ``$index`` baseline derives for ``test``: its columns that are not null."""
    return ['$partition', '$environ', *PARAMETER_LEVELS.get(test, []),
            *(c for c in INDEX_COLUMNS if any(k.get(c) is not None for k in classes[test]))]


def declared_indexes() -> dict[tuple[str, str], list[str]]:
    """``$index`` per (reference file, class) of every file in reframe/references."""
    return {(path.name, test): entry['$index']
            for path in sorted(REFERENCES.glob('*.yaml'))
            for test, entry in (yaml.safe_load(path.read_text()) or {}).items()}


def key(case: dict, index: list[str]) -> tuple:
    where = {'$partition': f"{case['system']}:{case['partition']}", '$environ': case['environ']}
    return (class_of(case), *(where.get(level, case.get(level)) for level in index))


def by_class(cases: list[dict]) -> dict[str, list[dict]]:
    classes: dict[str, list[dict]] = {}
    for case in cases:
        classes.setdefault(class_of(case), []).append(case)
    return classes


def test_every_case_has_a_key_of_its_own(cases):
    classes = by_class(cases)
    assert {'OsuPt2Pt', 'OsuCollective', 'OsuStartup', 'OsuOneSided', 'OsuMbwMr',
            'OsuProcurement'} <= set(classes), sorted(classes)
    assert any(c['buffers'] == 'D D' for c in classes['OsuPt2Pt'])  # example-gpu
    assert len({c['num_nodes'] for c in classes['OsuStartup']}) > 1
    keys = Counter(key(c, logged_index(classes, class_of(c))) for c in cases
                   if class_of(c) != 'PlacementProbeBuild')
    # one case per key: a repeated one would be two measurements sharing one reference
    assert [k for k, n in keys.items() if n > 1] == []
    assert len(keys) > 300, len(keys)


def test_reference_files_index_each_class_by_its_logged_columns(cases):
    classes = by_class(cases)
    for (name, test), index in declared_indexes().items():
        assert index == logged_index(classes, test), f'{name}: {test}'


def test_the_key_levels_tell_host_from_device_buffers_and_nodes_apart(cases):
    pt2pt = by_class(cases)['OsuPt2Pt']
    index = logged_index({'OsuPt2Pt': pt2pt}, 'OsuPt2Pt')
    assert {'buffers', 'num_nodes'} <= set(index)
    gpu = [c for c in pt2pt if c['system'] == 'example-gpu' and c['placement'] == 'inter_node'
           and c['benchmark'] == 'osu_bw' and c['environ'] == 'test-ompi-cuda']
    assert {c['buffers'] for c in gpu} >= {'H H', 'D D'}
    assert len({key(c, index) for c in gpu}) == len(gpu)
