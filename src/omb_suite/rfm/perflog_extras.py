"""What a test's perflog records beside its measurements, and where ReFrame writes it: the
modules its environment loads (column ``environ_modules``) and the perflog's directory (the
whole OSU curves are kept beside it)."""

from __future__ import annotations

import os
from pathlib import Path

import reframe as rfm
import reframe.utility.osext as osext
from reframe.core.runtime import runtime


def perflog_dir(test: rfm.RegressionTest) -> Path | None:
    """Where ReFrame's ``filelog`` handler writes this test's perflog (``basedir`` and
    ``prefix`` resolved as ReFrame does; ``OMB_RESULTS_DIR`` in our configuration)."""
    config = runtime().site_config
    for i, handler in enumerate(config.get('logging/0/handlers_perflog') or []):
        if handler.get('type') == 'filelog':
            key = f'logging/0/handlers_perflog/{i}'
            basedir = os.path.join(config.get('systems/0/prefix'),
                                   osext.expandvars(config.get(f'{key}/basedir')))
            where = f'{test.current_system.name}/{test.current_partition.name}'
            names = {'check_system': test.current_system.name, 'check_name': test.name,
                     'check_partition': test.current_partition.name,
                     'check_environ': test.current_environ.name}
            try:
                where = osext.expandvars(config.get(f'{key}/prefix')) % names
            except (KeyError, TypeError, ValueError):  # other attributes: ReFrame's default
                pass
            return Path(os.path.abspath(basedir), where)
    return None


def environ_modules(test: rfm.RegressionTest) -> str | None:
    """The modules the test's environment loads in its job script, for the perflog column
    ``environ_modules`` (``openmpi/4.1.4,osu-micro-benchmarks/7.3``); ``None`` for none."""
    return ','.join(test.current_environ.modules) or None
