"""One message per failure of a setup step (fetching Spack, installing clingo, concretizing,
installing): what failed and what to do, chosen from the step's output.

The cases are data (``setup/data/step_failures.yaml``): per step, a regex and a message template.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Any

import yaml

#: The source-mirror path Spack names in fetch and checksum errors.
MIRROR_PATH = re.compile(r'_source-cache/archive/[0-9a-f]{2}/[0-9a-f]{64}\S*?(?=[\s:]|$)')


@cache
def _cases() -> dict[str, Any]:
    text = resources.files('omb_suite.setup').joinpath('data/step_failures.yaml').read_text()
    return yaml.safe_load(text)


def detail(output: str, found: re.Match[str], kind: str | None) -> str:
    """The whole line holding the match, or with ``kind: match`` only the matched text."""
    if kind == 'match':
        return found[0].strip()
    start = output.rfind('\n', 0, found.start()) + 1
    end = output.find('\n', found.end())
    return output[start:end if end >= 0 else len(output)].strip()


def explain(step: str, output: str, **context: str) -> str:
    """The message for a failed ``step`` (a key of the data file) given its output."""
    table = _cases()[step]
    missing = MIRROR_PATH.search(output)
    values = {'missing': missing[0] if missing else
              '_source-cache/archive/<sha256[:2]>/<sha256>.<ext> (sha256 from the recipe)',
              **context}
    for case in table['cases']:
        found = re.search(case['pattern'], output)
        if found:
            return case['say'].format(detail=detail(output, found, case.get('detail')), **values)
    last = [line.strip() for line in output.splitlines() if line.strip()]
    return table['default'].format(detail=last[-1] if last else 'no output', **values)
