"""The ReFrame launchers our dialects need and ReFrame lacks (``jsrun``, ``flux``, ``pals``),
registered from their records (``command`` in ``data/launchers/<dialect>.yaml``).

Light on purpose: ``reframe/config/settings.py`` imports it, and so does every reader of the
site configuration (``omb-review``); it imports ReFrame's launcher registry and the pure
dialect records, never the suite's ReFrame layer (``omb_suite.rfm``). Each launcher emits its
command only: the job's shape and binding are the dialect's options, placeholders filled per
test (:func:`omb_suite.launch.placements.launch_options`).
"""

from __future__ import annotations

from reframe.core.backends import getlauncher, register_launcher
from reframe.core.exceptions import ConfigError
from reframe.core.launchers import JobLauncher

from omb_suite.mpi import dialects


def _launcher_class(name: str, command: tuple[str, ...]) -> type[JobLauncher]:
    class RecordLauncher(JobLauncher):
        def command(self, job) -> list[str]:
            return list(command)

    RecordLauncher.__name__ = RecordLauncher.__qualname__ = f'{name.capitalize()}Launcher'
    RecordLauncher.__doc__ = f'``{" ".join(command)}`` (data/launchers: {name})'
    return RecordLauncher


def register() -> list[str]:
    """Register every launcher a record adds (once per process; settings.py may be loaded
    more than once); the names registered now."""
    added = []
    for name, command in dialects.new_launchers().items():
        try:
            getlauncher(name)
        except ConfigError:
            register_launcher(name)(_launcher_class(name, command))
            added.append(name)
    return added
