"""ReFrame site configuration of the OMB regression suite.

Use:  reframe -C reframe/config/settings.py -c reframe/checks -r

- Systems are defined one per file in ``reframe/config/systems/*.py`` and in the
  directories of ``$OMB_SYSTEMS_PATH`` (each defines a ``system`` dict). ``local``
  (any Linux box) comes last and matches every host name, so it is the default when
  no other system matches. Select one with ``--system``.
- Programming environments come from ``omb-setup`` (``.omb/environments.json``): one
  per Spack environment view, system MPI or set of environment modules, with features
  ``+mpi +<family> +osu``... Those that load modules go only to systems with a
  ``modules_system`` (``lmod``, ``envmod``); ReFrame writes their ``module load`` lines into
  the job scripts without loading anything itself (``resolve_module_conflicts`` off: the
  login node need not have the modules, and no test pays for a module command).
- Perflogs go to ``perflogs/<system>/<partition>/<TestClass>.log`` (one record per
  performance variable, time-zone-aware timestamps); run reports and the results
  database go next to them. ``OMB_RESULTS_DIR`` moves all of it.
- Launchers ReFrame lacks (``jsrun``, ``flux``, ``pals``) are registered from their dialect
  records by ``omb_suite.launch.launchers``, which imports no ReFrame layer of the suite: loading
  this file (as ``omb-review`` does) stays light.
"""

import importlib.util
import os
from pathlib import Path

from omb_suite import perflog_schema
from omb_suite.launch import launchers
from omb_suite.setup import environs

launchers.register()

REPO = Path(__file__).resolve().parents[2]
#: Absolute: ReFrame resolves a relative perflog ``basedir`` against the system's ``--prefix``
#: but the report file against the working directory, which would split one run's results.
RESULTS = Path(os.environ.get('OMB_RESULTS_DIR', REPO / 'perflogs')).absolute()


ENVIRONMENTS = environs.reframe_environments()

#: The level of ReFrame's own log file (a temporary file, as ReFrame's default): ``verbose``
#: keeps what each test did; ReFrame's default ``debug2`` also keeps its internals, at the
#: cost of building ~200 records per test (docs/benchmarks.md). ``OMB_REFRAME_LOG=debug2``
#: brings them back.
REFRAME_LOG_LEVEL = os.environ.get('OMB_REFRAME_LOG', 'verbose')
_LEVELS = ('critical', 'error', 'warning', 'info', 'verbose', 'debug', 'debug2')
if REFRAME_LOG_LEVEL not in _LEVELS:
    raise ValueError(f'OMB_REFRAME_LOG={REFRAME_LOG_LEVEL!r} is no ReFrame log level: use one '
                     f'of {", ".join(_LEVELS)} (debug2 is ReFrame\'s own default)')


def _sibling(name: str):
    """A module of this directory (ReFrame loads this file by path, not as a package)."""
    spec = importlib.util.spec_from_file_location(f'omb_config_{name}',
                                                  Path(__file__).parent / f'{name}.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _system_files() -> list[Path]:
    """``systems/*.py`` plus those in ``$OMB_SYSTEMS_PATH`` (site configs kept elsewhere)."""
    dirs = [Path(__file__).parent / 'systems']
    dirs += [Path(d) for d in os.environ.get('OMB_SYSTEMS_PATH', '').split(os.pathsep) if d]
    return [p for d in dirs for p in sorted(d.glob('*.py'))]


def _usable_environments(system: dict) -> list[str]:
    """Every environment, but those loading modules only where a modules system is set."""
    has_modules = system.get('modules_system', 'nomod') != 'nomod'
    return [e['name'] for e in ENVIRONMENTS if has_modules or not e['modules']]


def _load_systems() -> list:
    """Every system file; partitions that name no ``environs`` get all usable environments."""
    systems, local = [], None
    for path in _system_files():
        spec = importlib.util.spec_from_file_location(f'omb_system_{path.stem}', path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for part in module.system['partitions']:
            part.setdefault('environs', _usable_environments(module.system))
        if module.system['name'] == 'local':
            local = module.system
        else:
            systems.append(module.system)
    return [*systems, local]


def _polled_fast(systems: list) -> list[str]:
    """Where tests run one at a time on this machine or as steps of one allocation (scheduler
    ``local`` or launcher ``srunalloc``): a system all of whose partitions do, else each such
    partition (``system:partition``), whatever the site calls them."""
    targets = []
    for system in systems:
        parts = [p['name'] for p in system['partitions']
                 if p.get('scheduler') == 'local' or p.get('launcher') == 'srunalloc']
        whole = len(parts) == len(system['partitions'])
        targets += [system['name']] if whole else [f"{system['name']}:{p}" for p in parts]
    return targets


SYSTEMS = _load_systems()

#: Columns of every perflog record, in order (one definition: omb_suite.perflog_schema).
PERFLOG_COLUMNS = perflog_schema.columns()

site_configuration = {
    'systems': SYSTEMS,
    'environments': ENVIRONMENTS,
    'modes': _sibling('modes').MODES,
    'logging': [
        {
            'perflog_multiline': True,
            'handlers': [
                {
                    'type': 'file',
                    'level': REFRAME_LOG_LEVEL,
                    'format': '[%(asctime)s] %(levelname)s: %(check_info)s: %(message)s',
                    'append': False,
                },
            ],
            'handlers_perflog': [
                perflog_schema.handler(str(RESULTS)),
            ],
        }
    ],
    'general': [
        {
            'report_file': str(RESULTS / 'reports' / 'run-report-{sessionid}.json'),
            'check_search_recursive': False,
            # job scripts `module load` an environment's modules; ReFrame itself loads none
            # (and so needs no module command where it runs): see the module docstring
            'resolve_module_conflicts': False,
        },
        {
            # Jobs of the local scheduler (this machine, or steps inside one allocation) are
            # polled cheaply: notice a finished benchmark within 0.2 s instead of ReFrame's
            # default decay to one poll every 10 s.
            'target_systems': _polled_fast(SYSTEMS),
            'report_file': str(RESULTS / 'reports' / 'run-report-{sessionid}.json'),
            'check_search_recursive': False,
            'resolve_module_conflicts': False,
            'poll_rate_max': 50,
            'poll_rate_min': 5,
        },
    ],
    'storage': [
        {
            'enable': True,
            'sqlite_db_file': str(RESULTS / 'results.db'),
        }
    ],
}
