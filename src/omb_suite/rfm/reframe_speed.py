"""A measured ReFrame 4.10 slowdown, and the narrow workaround the suite applies.

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
``OMB_REFRAME_AS_IS=1`` turns the workaround off (the benchmark measures both).
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import reframe.core.fields as fields
import reframe.core.variables as variables
import reframe.core.warnings as rfm_warnings
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


def apply() -> bool:
    """Install the workaround where ReFrame's variables and fields call the warning;
    ``False`` where it is turned off or this ReFrame calls it from elsewhere."""
    if os.environ.get('OMB_REFRAME_AS_IS', '0') not in ('', '0'):
        return False
    done = False
    for module in _CALLERS:
        if getattr(module, 'user_deprecation_warning', None) in (_ORIGINAL, _deprecation_warning):
            module.user_deprecation_warning = _deprecation_warning
            done = True
    return done
