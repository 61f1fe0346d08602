"""The module names that sites and documents imported before the package layout still work for
one release: each is the new module itself, after a DeprecationWarning naming the new path.
relayout: keep (the layout script leaves this file as it is)"""

from __future__ import annotations

import importlib
import sys

import pytest

#: old name -> the module it now is
MOVED = {
    'omb_suite.parsing': 'omb_suite.osu.parsing',
    'omb_suite.launchers': 'omb_suite.launch.launchers',
    'omb_suite.algorithms': 'omb_suite.mpi.algorithms',
    'omb_suite.host_gpus': 'omb_suite.machine.host_gpus',
}


@pytest.mark.parametrize(('old', 'new'), MOVED.items())
def test_an_old_name_warns_and_is_the_new_module(old, new, monkeypatch):
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match=f'{old} is deprecated: import {new}$'):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)


def test_an_old_package_name_still_reaches_its_modules(monkeypatch):
    monkeypatch.delitem(sys.modules, 'omb_suite.parsing', raising=False)
    with pytest.warns(DeprecationWarning):
        from omb_suite.parsing import summary
    assert summary is importlib.import_module('omb_suite.osu.parsing.summary')
