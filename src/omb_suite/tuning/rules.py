"""A tuning recommendation, as the library's own tuning file is written from it.

``omb-review tune`` (:mod:`omb_review.tuning.tune`) turns proven algorithm sweeps into :class:`Rule`
objects: per collective and communicator size, the algorithm to use from each message size up
(OSU's size, in bytes, as the sweep measured it), ``default`` where the library's own choice was
as fast. A family's record (``data/families/<family>.yaml``, part ``tuning``) says which file
format the library reads (``kind``, one writer module each: :mod:`omb_suite.tuning.files`), for
which versions, and the environment that loads it (``{file}``: the file's absolute path); a
family whose libraries read none says why (``why``).

A writer converts OSU's sizes to the library's own message-size rule, the algorithm names of
``data/algorithms/<table>.yaml`` to what the library takes, and leaves every communicator size
and message size beyond what was measured to the library's own choice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: An algorithm name meaning: the library's own choice (as in :mod:`omb_suite.mpi.algorithms`).
DEFAULT = 'default'


class TuningError(ValueError):
    """A recommendation or family that no tuning file can be written for (the reason)."""


class TuningProofError(TuningError):
    """A run's output does not show that the tuning file was read and applied."""


class TuningNotReached(TuningProofError):
    """Another component than the one that reads the file served the collective (Open MPI 5's
    han across nodes): the file's rule is not what runs there (han's own steps may still read
    it at their sub-communicators' sizes); ``served`` names that component."""

    def __init__(self, message: str, served: str) -> None:
        super().__init__(message)
        self.served = served


@dataclass(frozen=True)
class Step:
    """From ``start`` bytes (OSU's message size) up to the next step: ``algorithm``."""

    start: int
    algorithm: str


@dataclass(frozen=True)
class Rule:
    """One collective on communicators of ``ranks`` ranks (as measured on ``nodes`` nodes):
    its steps in ascending ``start``, the first from 0; measured up to ``last_size`` bytes
    (beyond it the library's own choice)."""

    collective: str  # the table's name: 'bcast', 'allreduce', 'alltoall', 'allgather'
    ranks: int
    nodes: int
    steps: tuple[Step, ...]
    last_size: int

    def algorithm_at(self, size: int) -> str:
        """The recommended algorithm for a message of ``size`` bytes (OSU's size)."""
        if size > self.last_size:
            return DEFAULT
        return [s for s in self.steps if s.start <= size][-1].algorithm


@dataclass(frozen=True)
class ProofRun:
    """One launch of the OSU program that proves the library read the file and applied it:
    the file it loads (``text``), extra environment, and what its output must show
    (``expect`` returns the evidence as a short string, or raises :class:`TuningProofError`).
    """

    name: str
    text: str
    env: dict[str, str]
    expect: Callable[[str], str]

    @property
    def file_name(self) -> str:
        """The name the proving check gives the file it loads (a library that names the file
        it read is held to it)."""
        return f'proof-{self.name}.txt'
