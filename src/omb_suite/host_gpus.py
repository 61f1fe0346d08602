"""Deprecated for one release: ``omb_suite.host_gpus`` is now
``omb_suite.machine.host_gpus``; import that.

After a DeprecationWarning this name is the new module itself (the same objects, imported once).
relayout: keep (the layout script leaves this file as it is)
"""

import importlib
import sys
import warnings

warnings.warn('omb_suite.host_gpus is deprecated: import omb_suite.machine.host_gpus',
              DeprecationWarning, stacklevel=2)
sys.modules[__name__] = importlib.import_module('omb_suite.machine.host_gpus')
