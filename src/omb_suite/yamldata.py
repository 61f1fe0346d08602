"""Reading the suite's YAML data files with libyaml's parser where PyYAML has it.

PyYAML's own parser is written in Python: every ReFrame start read the data files (the
catalogue, placements, the algorithm tables, the cost model) in 0.1-0.4 s on the 2-core VM;
libyaml's parser (``yaml.CSafeLoader``, the same safe constructors, so the same data) takes
a tenth of that (benchmarks/harness_overhead.py, where the suite's time goes).
"""

from __future__ import annotations

from typing import IO, Any

import yaml

LOADER = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)


def load(stream: str | IO) -> Any:
    """``yaml.safe_load``, faster."""
    return yaml.load(stream, Loader=LOADER)
