"""Steps a user waits for (cloning Spack, concretizing, building OSU), announced with how
long they usually take and reported with how long they took.

The usual durations are data (``setup/data/step_durations.yaml``), measured on the machine named
there; a step that fails says after how long, then the error propagates unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources

import yaml


def usual_durations() -> dict[str, str]:
    """Step key -> how long it usually takes, in words."""
    text = resources.files('omb_suite.setup').joinpath('data/step_durations.yaml').read_text()
    return {key: str(value) for key, value in yaml.safe_load(text)['usual'].items()}


def seconds(value: float) -> str:
    """``42 s`` or ``3 min 05 s``."""
    minutes, secs = divmod(round(value), 60)
    return f'{minutes} min {secs:02d} s' if minutes else f'{secs} s'


class Progress:
    """Numbered steps printed as they start and end; ``times`` keeps (step, seconds)."""

    def __init__(self, prefix: str = 'omb-setup', clock: Callable[[], float] = time.monotonic,
                 out: Callable[[str], None] | None = None) -> None:
        self.prefix, self.clock = prefix, clock
        self.out = out or (lambda line: print(line, flush=True))
        self.usual = usual_durations()
        self.times: list[tuple[str, float]] = []

    def say(self, text: str) -> None:
        self.out(f'{self.prefix}: {text}')

    @contextmanager
    def step(self, key: str, what: str) -> Iterator[None]:
        """Announce ``what`` (with the usual duration of step ``key``), time it, report it."""
        number = len(self.times) + 1
        usual = f' (usually {self.usual[key]})' if key in self.usual else ''
        self.say(f'[{number}] {what}{usual} ...')
        start = self.clock()
        try:
            yield
        except BaseException:
            self.say(f'[{number}] {what}: FAILED after {seconds(self.clock() - start)}')
            raise
        took = self.clock() - start
        self.times.append((what, took))
        self.say(f'[{number}] {what}: done in {seconds(took)}')

    def summary(self) -> str:
        """One line per finished step, for the end of the run."""
        return '\n'.join(f'  {seconds(took):>12}  {what}' for what, took in self.times)
