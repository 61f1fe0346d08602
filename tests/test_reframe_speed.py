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



def test_records_no_handler_writes_are_not_built(tmp_path):
    """ReFrame's logger takes its most verbose handler's level: a debug record, which a
    'verbose' file and an 'info' console would drop, is never built (its check's loggable
    variables never read), while a verbose one still is."""
    import logging

    import reframe.core.logging as rfm_logging

    logger = rfm_logging.Logger('omb-test')
    for level in ('verbose', 'info'):
        handler = logging.FileHandler(tmp_path / f'{level}.log')
        handler.setLevel(level)
        logger.addHandler(handler)
    adapter = rfm_logging.LoggerAdapter(logger)
    built = []
    adapter.process = lambda msg, kwargs: (built.append(msg), (msg, kwargs))[1]
    assert reframe_speed.skip_unwritten_records(adapter)
    adapter.debug('dropped by every handler')
    adapter.verbose('kept by the file')
    assert built == ['kept by the file']
    # ReFrame's default debug2 file: every record is written, so every record is built
    handler = logging.FileHandler(tmp_path / 'debug2.log')
    handler.setLevel('debug2')
    logger.addHandler(handler)
    logger.setLevel('verbose')
    assert not reframe_speed.skip_unwritten_records(adapter)
    logger.setLevel('debug2')
    adapter.debug('written to the debug2 file')
    assert built[-1] == 'written to the debug2 file'
