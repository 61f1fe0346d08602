"""Measured ReFrame 4.10 slowdowns, and the narrow workarounds the suite applies.

**Suppressed deprecation warnings.**

Every log record of a running test (ReFrame's ``_update_check_extras``) reads every loggable
variable of the check, among them the deprecated alias ``variables`` of ``env_vars`` (and
instantiating a test reads the defaults of the deprecated variables). Their descriptors call
``reframe.core.warnings.user_deprecation_warning``, which walks the whole stack with
``inspect.stack()`` (source lines and module of every frame) *before* the warning is filtered,
although the read happens under ``suppress_deprecations()``, which ignores it. Measured here
(benchmarks/harness_overhead.py, three tests on ``local``): about 330 walks, 0.8-1.1 s of a
4.0-4.6 s run, the largest single cost of the suite on top of OSU.

The workaround skips the walk only when the innermost warning filter is the one
``suppress_deprecations()`` installs (``ignore`` for ``ReframeDeprecationWarning``): then
``warnings.warn`` would drop the warning anyway, so nothing a user can see changes. Any other
deprecation (a site's own test using ``variables``) still warns, at the user's line.

**References read by the pure-Python YAML parser.** Every test reads its references file
(``reframe/references/<system>.yaml``, ``$ref``) again with ``yaml.safe_load``, PyYAML's
parser written in Python: 20-35 ms for ``local.yaml`` per test on the 2-core VM, against
under 1 ms with libyaml's parser (``yaml.CSafeLoader``, the same constructors, so the same
data). ReFrame's pipeline module is given a ``yaml`` whose ``safe_load`` uses libyaml where
PyYAML has it.

**Records no handler writes.** ReFrame builds every log record of a running test with all the
check's loggable variables (``_update_check_extras``) before its handlers filter it by level,
because its logger's own level is unset: about 600 debug records for three tests, 0.5-0.6 s of
CPU. The logger is given the level of its most verbose handler, so a record that every handler
would drop is not built; with ReFrame's default ``debug2`` log file nothing changes, with the
suite's ``verbose`` one (``OMB_REFRAME_LOG``, settings.py) the debug records are skipped.

``OMB_REFRAME_AS_IS=1`` turns the workarounds off (the benchmark measures both ways).
"""

from __future__ import annotations

import logging
import os
import types
import warnings
from typing import IO, Any

import reframe.core.fields as fields
import reframe.core.logging as rfm_logging
import reframe.core.pipeline as pipeline
import reframe.core.variables as variables
import reframe.core.warnings as rfm_warnings
import yaml
from reframe.core.warnings import ReframeDeprecationWarning

_ORIGINAL = rfm_warnings.user_deprecation_warning
#: The modules that call it on every read of a deprecated variable or field.
_CALLERS = (fields, variables)


def suppressed() -> bool:
    """The innermost warning filter ignores ReFrame's deprecation warnings."""
    if not warnings.filters:
        return False
    action, message, category, module, lineno = warnings.filters[0]
    return (action == 'ignore' and message is None and module is None and lineno == 0
            and isinstance(category, type) and issubclass(ReframeDeprecationWarning, category))


def _deprecation_warning(message: str, from_version: str = '0.0.0') -> Any:
    if suppressed():
        return None
    return _ORIGINAL(message, from_version)


def safe_load(stream: str | IO) -> Any:
    """``yaml.safe_load`` with libyaml's parser."""
    return yaml.load(stream, Loader=yaml.CSafeLoader)


def skip_unwritten_records(adapter: Any = None) -> bool:
    """Give ReFrame's logger (that of ``adapter``, default ReFrame's own) its most verbose
    handler's level (``True`` where that raised it): what ``-v`` asked of the console is
    kept, since the handlers' levels are already set when the checks load."""
    logger = getattr(adapter or rfm_logging.getlogger(), 'logger', None)
    if not isinstance(logger, logging.Logger) or not logger.handlers:
        return False
    lowest = min(handler.level for handler in logger.handlers)
    if lowest <= logger.level:
        return False
    logger.setLevel(lowest)
    return True


def apply() -> bool:
    """Install the workarounds: where ReFrame's variables and fields call the warning, and
    where its pipeline reads references; ``False`` where they are turned off or this ReFrame
    calls the warning from elsewhere."""
    if os.environ.get('OMB_REFRAME_AS_IS', '0') not in ('', '0'):
        return False
    skip_unwritten_records()
    if getattr(yaml, '__with_libyaml__', False) and getattr(pipeline, 'yaml', None) is yaml:
        pipeline.yaml = types.SimpleNamespace(safe_load=safe_load)
    done = False
    for module in _CALLERS:
        if getattr(module, 'user_deprecation_warning', None) in (_ORIGINAL, _deprecation_warning):
            module.user_deprecation_warning = _deprecation_warning
            done = True
    return done
