"""Every partition's programming environments in the reverse order: layered last, after the
configuration it reverses (``-C site.py -C reframe/config/reversed_environs.py``).

ReFrame launches the environments of a test case in the order its partition lists them, so in a
side-by-side session (``scripts/upgrade.sh side-by-side``) the library listed first is always
launched first. Measured on `local`, the launch that comes second can be faster
(docs/dev/gate.md): the side-by-side step runs half its pairs in each order, the second half
with this file last, and ``omb-review compare`` cancels the order effect between the two halves.

It takes the systems of the configuration ReFrame has loaded before it (the files given before
it with ``-C``, or ``RFM_CONFIG_FILES``) and defines each again with the environments of every
partition reversed (only the system ``--system`` names, when it is given); ReFrame selects the
last definition of a system (it warns "redefinition of system"), so nothing else changes.
"""

from __future__ import annotations

import copy
import sys

from reframe.core.config import _SiteConfig


def loading() -> _SiteConfig | None:
    """The configuration ReFrame is loading this file into (``load_config``'s), if any."""
    frame = sys._getframe(1)
    while frame is not None:
        for value in frame.f_locals.values():
            if isinstance(value, _SiteConfig):
                return value
        frame = frame.f_back
    return None


def selected(argv: list[str]) -> str | None:
    """The system ``--system`` names on ReFrame's command line (None: not given)."""
    for i, arg in enumerate(argv):
        if arg == '--system' and i + 1 < len(argv):
            return argv[i + 1].split(':')[0]
        if arg.startswith('--system='):
            return arg.split('=', 1)[1].split(':')[0]
    return None


def reversed_systems(systems: list[dict], only: str | None = None) -> list[dict]:
    """``systems`` (those named ``only``, when given) with every partition's environments in
    the reverse order."""
    out = copy.deepcopy([s for s in systems if only in (None, s.get('name'))])
    for system in out:
        for partition in system.get('partitions', []):
            partition['environs'] = list(reversed(partition.get('environs', [])))
    return out


# pylint: disable=protected-access
_config = loading()
_systems = (_config._site_config or {}).get('systems', []) if _config is not None else []
if not [s for s in _systems if s.get('name') != 'generic']:
    raise SystemExit('reframe/config/reversed_environs.py: layer it after the configuration it '
                     'reverses: reframe -C YOUR_CONFIG.py -C reframe/config/reversed_environs.py')
site_configuration = {'systems': reversed_systems(_systems, selected(sys.argv))}
