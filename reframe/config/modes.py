"""The suite's run modes as a configuration layer: a site adds them to its own configuration.

    reframe -C site.py -C <checkout>/reframe/config/modes.py -c <checkout>/reframe/checks \
        --mode explore -r

Its configuration holds only ``modes``: layered after (or before) a site's configuration it
selects nothing, so the site's systems, environments, perflog handlers and results database
stay in force. The suite's own ``settings.py`` takes its modes from here too (one
definition). Paths are this checkout's (``-c`` of the mode's checks), wherever ReFrame runs
from. Loading it also keeps the command line's ``-p`` beside a mode, which ReFrame's merge
of a mode's options loses (:func:`merge_mode_options_without_defaults`).
"""

import argparse
from pathlib import Path

CHECKS = Path(__file__).resolve().parents[1] / 'checks'

MODES = [
    {
        # everything beyond the verdict set: every algorithm, scale, mapping, one-sided
        # window/sync pair, multi-pair and start-up sweep, persistent and neighbourhood
        # collectives (add `-c reframe/checks/explore` to combine with another mode)
        'name': 'explore',
        'options': ['-c', str(CHECKS / 'explore')],
    },
    {
        # which node or link is slow: every node of one allocation, every pair in rounds
        # (docs/howto-fleet.md); without another -c, only the fleet checks
        'name': 'fleet',
        'options': ['-c', str(CHECKS / 'fleet')],
    },
    {
        'name': 'quick',
        'options': ['-S', 'message_sizes=1,8,1024,65536', '-S', 'max_size=65536',
                    '-S', 'iterations=200', '-S', 'warmup=20'],
    },
    {
        'name': 'nightly',
        'options': ['-S', 'iterations=2000', '-S', 'warmup=200'],
    },
    {
        'name': 'procurement',
        'options': ['-c', str(CHECKS / 'procurement'), '--tag', 'procurement'],
    },
    {
        'name': 'upgrade',
        # at least OSU's full counts, never fewer from history (docs/benchmarks.md)
        'options': ['-S', 'require_reference=1', '-S', 'iterations=10000',
                    '-S', 'warmup=1000', '-S', 'iterations_from_history=0'],
    },
]


def merge_mode_options_without_defaults() -> None:
    """Keep the user's ``-p`` beside ``--mode``: ReFrame's merge of a mode's options with the
    command line, without the defaults of the options the mode leaves unset.

    ReFrame 4.9.3 and 4.10.4 (``reframe/frontend/cli.py``, "Parse the mode's options and
    reparse the command-line") parse a mode's options alone, then the command line again with that
    result as the namespace; ``ArgumentParser.parse_args`` (``frontend/argparse.py``) fills
    every option the mode left unset with its default, and the second parse puts an
    ``append`` option's earlier value before the command line's. ``-p`` is the one
    ``append`` option with a default that selects (``[r'.*']``): ``--mode quick -p X`` ran
    with ``['.*', 'X']``, any of which matches, so every environment. ``-n``, ``-t``, ``-x``,
    ``-T`` and ``-S`` default to ``[]`` and ``-E`` to nothing: they were kept. No pattern in
    a mode's own ``-p`` helps: ReFrame takes an environment matching any pattern, so one that
    lets the command line's ``-p`` restrict would also select nothing without one.

    The mode's result goes into the second parse without the values it took from the
    defaults (the defaults' own objects), so an unset option is resolved as without a mode
    and an ``append`` option given by the mode is still combined with the command line's.
    Once per process (this file may be loaded twice: settings.py and a ``-C`` layer).
    """
    from reframe.frontend.argparse import ArgumentParser

    reparse = ArgumentParser.parse_args
    if getattr(reparse, 'merges_without_defaults', False):
        return

    def parse_args(self, args=None, namespace=None, suppress_required=False):
        if namespace is not None:
            self._update_defaults()
            defaults = vars(self._defaults)
            given = vars(getattr(namespace, 'cmd_options', namespace))
            namespace = argparse.Namespace(**{
                name: None if name in defaults and value is defaults[name] else value
                for name, value in given.items()})
        return reparse(self, args, namespace, suppress_required)

    parse_args.merges_without_defaults = True
    ArgumentParser.parse_args = parse_args


merge_mode_options_without_defaults()

site_configuration = {'modes': MODES}
