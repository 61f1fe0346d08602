"""OSU's ``-x``/``-i`` for one launch: one count for every size, or, where the OSU has
iteration buckets (7.5.1 and later), one for the sizes up to its ``LARGE_MESSAGE_SIZE`` and one
above, written as that OSU reads them (:func:`options`).

Read in OSU 8.0b2's ``process_iterations``/``get_iterations`` (``c/util/osu_util.c``) and
checked on it by counting the MPI calls per size of real runs (docs/dev/iterations.md):
``-i 8192:A:B`` runs B iterations up to 8192 B and A above (its help text says the reverse);
a lone ``-x N`` does not reach the per-size warm-up (the small default stays, at every size)
and, after ``-i``, overwrites the iteration count. So on such an OSU both are always written
in the bucket form, which sets both ranges.
"""

from __future__ import annotations

from dataclasses import dataclass

from omb_suite.osu import limits as osu_limits


@dataclass(frozen=True)
class Counts:
    """``-x``/``-i`` of one launch (``None``: OSU's default). ``warmup``/``iterations`` hold
    for every size, or, where ``warmup_large``/``iterations_large`` are set (OSU's buckets),
    for the sizes up to OSU's ``LARGE_MESSAGE_SIZE`` only."""

    warmup: int | None = None
    iterations: int | None = None
    warmup_large: int | None = None
    iterations_large: int | None = None

    @property
    def bucketed(self) -> bool:
        return self.warmup_large is not None or self.iterations_large is not None

    def at(self, benchmark: str, size: int,
           osu_version: str | None = None) -> tuple[int, int]:
        """(warm-up, timed iterations) OSU ``osu_version`` runs at ``size``."""
        large = osu_limits.is_large(size, benchmark, osu_version)
        x, i = (self.warmup_large, self.iterations_large) \
            if self.bucketed and large else (self.warmup, self.iterations)
        return osu_limits.loop(benchmark, [size], x, i, osu_version)[0][1:]


def bucket_edge() -> int:
    """The size written into OSU's iteration buckets: its ``LARGE_MESSAGE_SIZE``
    (:func:`osu_limits.large_message_size`)."""
    return osu_limits.large_message_size()


def options(benchmark: str, counts: Counts, buckets: bool) -> list[str]:
    """OSU's ``-x``/``-i`` for ``counts``. ``buckets``: the OSU has iteration buckets; then
    always their form ``EDGE:ABOVE:UPTO`` (read from OSU 8.0b2's ``process_iterations`` and
    checked by counting its MPI calls: its help text has the two counts the other way round;
    one ``-x N`` does not reach its per-size warm-up, and after ``-i`` it overwrites the
    iteration count). Without buckets, one count each as always; asking such an OSU for two
    is an error."""
    if counts.bucketed and not buckets:
        raise ValueError(f'{benchmark}: counts per size range need OSU\'s iteration buckets '
                         '(OSU 7.5.1 or later)')
    out: list[str] = []
    for flag, col, small, large in (('-x', 1, counts.warmup, counts.warmup_large),
                                    ('-i', 2, counts.iterations, counts.iterations_large)):
        if small is None and large is None:
            continue
        if not buckets:
            out += [flag, str(small)]
            continue
        if not counts.bucketed:
            large = small
        defaults = [osu_limits.loop(benchmark, [s])[0][col] for s in (1, 2**30)]
        below = defaults[0] if small is None else small
        above = defaults[1] if large is None else large
        out += [flag, f'{bucket_edge()}:{above}:{below}']
    return out
