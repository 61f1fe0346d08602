"""Deprecated for one release: ``omb_suite.launchers`` is now
``omb_suite.launch.launchers``; import that.

After a DeprecationWarning this name is the new module itself (the same objects, imported once).
relayout: keep (the layout script leaves this file as it is)
"""

import importlib
import sys
import warnings

warnings.warn('omb_suite.launchers is deprecated: import omb_suite.launch.launchers',
              DeprecationWarning, stacklevel=2)
sys.modules[__name__] = importlib.import_module('omb_suite.launch.launchers')
