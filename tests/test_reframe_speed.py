"""The ReFrame workaround (omb_suite.rfm.reframe_speed): a suppressed deprecation no longer
walks the stack; every deprecation a user could see still warns."""

from __future__ import annotations

import inspect
import warnings

import pytest
import reframe.core.fields as fields
import reframe.core.variables as variables
from reframe.core.warnings import ReframeDeprecationWarning, suppress_deprecations

from omb_suite.rfm import reframe_speed


def _no_stack_walk(*args, **kwargs):
    raise AssertionError('inspect.stack() was called for a suppressed deprecation')


def test_applied_where_reframe_calls_the_warning():
    assert reframe_speed.apply()
    for module in (fields, variables):
        assert module.user_deprecation_warning is not reframe_speed._ORIGINAL


def test_a_suppressed_deprecation_skips_the_stack_walk(monkeypatch):
    reframe_speed.apply()
    monkeypatch.setattr(inspect, 'stack', _no_stack_walk)
    with suppress_deprecations():
        assert reframe_speed.suppressed()
        fields.user_deprecation_warning('old name')
        variables.user_deprecation_warning('old variable')


def test_any_other_deprecation_still_warns():
    reframe_speed.apply()
    with warnings.catch_warnings():
        warnings.simplefilter('always')
        with pytest.warns(ReframeDeprecationWarning, match='old name'):
            fields.user_deprecation_warning('old name')
        # an 'ignore' of another category does not count as suppressing ReFrame's
        warnings.simplefilter('ignore', UserWarning)
        assert not reframe_speed.suppressed()
        with pytest.warns(ReframeDeprecationWarning, match='old variable'):
            variables.user_deprecation_warning('old variable')

