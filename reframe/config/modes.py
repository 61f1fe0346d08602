"""The suite's run modes as a configuration layer: a site adds them to its own configuration.

    reframe -C site.py -C <checkout>/reframe/config/modes.py -c <checkout>/reframe/checks \
        --mode explore -r

This file holds only ``modes``: layered after (or before) a site's configuration it selects
nothing, so the site's systems, environments, perflog handlers and results database stay in
force. The suite's own ``settings.py`` takes its modes from here too (one definition).
Paths are this checkout's (``-c`` of the mode's checks), wherever ReFrame runs from.
"""

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

site_configuration = {'modes': MODES}
