"""Every mode of reframe/config/modes.py beside the user's selection: ``--mode X -p P`` lists
what ``-p P`` lists (and so for ``-n`` and ``-E``) where the mode adds no checks; where it adds
checks (``-c``), ``-p`` still restricts their environments; the user's ``-S`` wins over the
mode's. ReFrame 4.9 and 4.10 widened ``-p`` under a mode to every environment
(``merge_mode_options_without_defaults`` in modes.py says why)."""

from __future__ import annotations

import functools
import importlib.util
import re

import pytest
from rfm_helpers import REPO, job_scripts, launch_line, run_reframe, two_family_registry

_spec = importlib.util.spec_from_file_location(
    'omb_config_modes', REPO / 'reframe' / 'config' / 'modes.py')
_modes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_modes)
MODES = {mode['name']: mode['options'] for mode in _modes.MODES}
ADD_CHECKS = sorted(name for name, options in MODES.items() if '-c' in options)
ADD_NO_CHECKS = sorted(set(MODES) - set(ADD_CHECKS))

CHECKS = ('osu_pt2pt.py',)
MPICH = '^test-mpich$'
#: Each selection form, and the cases of osu_pt2pt.py on `local` it leaves (of six: three
#: programs, two environments).
SELECTIONS = {
    '-p': (('-p', MPICH), 3),
    '-n': (('-n', 'osu_bw'), 2),
    '-E': (('-E', "benchmark == 'osu_latency'"), 2),
}


@pytest.fixture(scope='module')
def cases(tmp_path_factory):
    """The test cases (name, partition and environment) ``reframe -lC`` lists on `local` for
    the given options, from osu_pt2pt.py with two environments, Open MPI's and MPICH's."""
    tmp = tmp_path_factory.mktemp('modes')
    registry = two_family_registry(tmp)

    @functools.cache
    def _cases(*args: str) -> list[str]:
        out = run_reframe(tmp, '--system', 'local', '-lC', *args, registry=registry,
                          checks=CHECKS)
        assert out.returncode == 0, out.stdout + out.stderr
        return re.findall(r'^- (\S+ .*?) /[0-9a-f]{8} (@\S+)$', out.stdout, re.M)
    return _cases


@pytest.mark.parametrize('mode', ADD_NO_CHECKS)
@pytest.mark.parametrize('form', SELECTIONS)
def test_a_mode_lists_what_the_selection_lists_without_it(cases, mode, form):
    selection, count = SELECTIONS[form]
    selected = cases(*selection)
    assert len(selected) == count, selected
    assert cases('--mode', mode, *selection) == selected


@pytest.mark.parametrize('mode', ADD_CHECKS)
def test_the_checks_a_mode_adds_run_in_the_environments_p_selects(cases, mode):
    listed = cases('--mode', mode, '-p', MPICH, '-n', 'osu_bw')
    added = {name.split()[0] for name, _ in listed} - {'OsuPt2Pt'}
    assert added, listed                                   # the mode's own checks
    assert {where for _, where in listed} == {'@local:default+test-mpich'}


def test_the_users_setvar_wins_over_the_modes_and_p_still_selects(tmp_path):
    """``quick`` sets sizes and iterations: the user's ``-S iterations`` wins, its sizes stay."""
    out = run_reframe(tmp_path, '--system', 'local', '--dry-run', '--mode', 'quick',
                      '-S', 'iterations=7', '-p', MPICH, '-n', 'osu_latency',
                      registry=two_family_registry(tmp_path), checks=CHECKS)
    assert out.returncode == 0, out.stdout + out.stderr
    scripts = job_scripts(tmp_path)
    assert [where.rsplit('/', 1)[0] for where in scripts] == ['local/default/test-mpich']
    line = launch_line(*scripts.values(), 'osu_latency')
    assert line.endswith(' -x 20 -i 7') and '-m :65536 ' in line, line
