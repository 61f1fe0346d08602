"""A test's result does not depend on the OMB_*/OSU_* variables of the shell that runs
pytest (tests/conftest.py, tests/caller_env.py; issue 29)."""

from __future__ import annotations

import os
import subprocess
import sys

from caller_env import PASSED_IN, documented, from_caller, harmless_values
from testdata import REPO


def test_no_variable_of_the_caller_reaches_a_test():
    assert from_caller(os.environ) == []


def test_documented_variables_are_found_and_given_values():
    names = documented()
    assert {'OMB_ENVIRONMENTS_FILE', 'OMB_RESULTS_DIR', 'OSU_ROOT'} <= names
    assert set(harmless_values()) == names - PASSED_IN


def test_module_tests_pass_with_every_documented_variable_exported():
    """The tests of environments from modules (their Lmod shell copies the caller's
    environment) with every documented variable set, as a user's shell may have them."""
    env = {**os.environ, **harmless_values()}
    done = subprocess.run(
        [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-m', 'not e2e',
         'tests/test_modules_rfm.py', 'tests/test_caller_environment.py::'
         'test_no_variable_of_the_caller_reaches_a_test'],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
