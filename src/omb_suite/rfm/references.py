"""Where a check's references come from, and how they reach ReFrame of any supported release.

References live in ``reframe/references/<system>.yaml`` (ReFrame 4.10 external references:
``$index`` levels, leaves ``perf_var: [reference, lower, upper, unit]``). They are found
beside the checks being run (the ``reframe/references`` of the repository that holds the
check file), not beside the installed package: a site that installs the package into its own
ReFrame and runs ``-c <checkout>/reframe/checks`` gets that checkout's references.
``$RFM_REFERENCE_PREFIX`` overrides both.

ReFrame 4.10 reads the file itself (``reference = {'$ref': path}``). ReFrame 4.9 has no
external references: there the same file is resolved here, with 4.10's rules (an exact key,
else the first key that matches the value as an anchored regular expression), into the
``{'system:partition': {...}}`` form every 4.x release takes.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from typing import Any

from reframe.core import pipeline

from omb_suite import yamldata

#: Whether this ReFrame reads ``{'$ref': file}`` references itself (4.10 and later).
EXTERNAL_REFERENCES = hasattr(pipeline, 'RegressionTestDict')


def references_dir(check_dir: str | Path | None, fallback: Path) -> Path:
    """``$RFM_REFERENCE_PREFIX``, else the ``reframe/references`` of the repository holding
    ``check_dir`` (the nearest parent that has one), else ``fallback``."""
    if os.environ.get('RFM_REFERENCE_PREFIX'):
        return Path(os.environ['RFM_REFERENCE_PREFIX'])
    if check_dir is not None:
        for parent in Path(check_dir).resolve().parents:
            if (parent / 'reframe' / 'references').is_dir():
                return parent / 'reframe' / 'references'
    return fallback


def reference_of(test: Any, path: Path) -> dict[str, Any] | None:
    """What to assign to ``test.reference`` for the references file ``path`` (None: no file)."""
    if not path.is_file():
        return None
    if EXTERNAL_REFERENCES:
        return {'$ref': str(path.resolve())}
    entry = _load(str(path.resolve())).get(type(test).__name__)
    leaves = _resolve(entry, test) if entry else None
    return {test.current_partition.fullname: leaves} if leaves else {}


@cache
def _load(path: str) -> dict[str, Any]:
    with open(path) as stream:
        return yamldata.load(stream) or {}


def _resolve(entry: dict[str, Any], test: Any) -> dict[str, tuple] | None:
    """The leaves of ``entry`` for ``test``, walking its ``$index`` as ReFrame 4.10 does."""
    data: Any = {k: v for k, v in entry.items() if k != '$index'}
    for level in entry.get('$index', []):
        data = _lookup(data, _index_value(test, level))
        if data is None:
            return None
    if not isinstance(data, dict):
        return None
    return {var: tuple(value) for var, value in data.items()}


def _index_value(test: Any, level: str) -> Any:
    special = {'$system': lambda: test.current_system.name,
               '$partition': lambda: test.current_partition.fullname,
               '$environ': lambda: test.current_environ.name}
    if level in special:
        return special[level]()
    if level.startswith('$processor.'):
        return getattr(test.current_partition.processor, level.split('.', 1)[1])
    return getattr(test, level)


def _lookup(data: Any, key: Any) -> Any:
    if not isinstance(data, dict):
        return None
    if key in data:
        return data[key]
    if isinstance(key, str):
        for pattern, value in data.items():
            if isinstance(pattern, str) and re.match(f'^{pattern}$', key):
                return value
    return None
