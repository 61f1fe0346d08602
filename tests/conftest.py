"""Every test starts without the caller's OMB_*/OSU_* variables (tests/caller_env.py): a
test's result must not depend on what the shell that runs pytest exported.

(Nothing is imported from this module: tests/review has its own conftest, and two
``conftest`` modules would shadow each other; shared paths are in ``testdata``.)
"""

from __future__ import annotations

import os

import pytest
from caller_env import from_caller


@pytest.fixture(autouse=True)
def _without_the_callers_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in from_caller(os.environ):
        monkeypatch.delenv(name)
