"""Would OSU 8.0's launchers make the verdict set faster? The verdict set's OSU commands, bare
(no ReFrame, no wrapper, no correctness library), timed two ways: each program in its own
launch, as the suite runs them, and OSU 8.0's ``omb_pt2pt`` / ``omb_coll`` running the same
programs in one launch each.

    python benchmarks/osu_launchers.py [--osu-root PREFIX] [--mpi openmpi|mpich]
        [--repeat 3] [--smoke]

Point-to-point: osu_latency, osu_bw, osu_bibw at 2 ranks, ``-m :4194304``; collectives: the
verdict's osu_allreduce, osu_bcast, osu_alltoall, osu_allgather, osu_reduce, osu_barrier and
osu_iallreduce at 2 ranks, ``-f -m :1048576`` (barriers take no ``-m``; OSU 8.0's reductions
use MPI_INT without ``-T``, as the suite's ``-T mpi_int``). The launchers pass one command line
to every program: ``omb_coll -f -m :1048576 -- ...``, so its barriers run once per size.
Rounds interleave the two ways; medians of ``--repeat`` rounds and their ratio are printed.
``--osu-root`` defaults to ``$OSU_ROOT``; an OSU without launchers (before 8.0) says so and
exits 0. ``--smoke``: ``-m :8 -i 10``, one round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'src'))

from omb_suite.osu import binaries
from omb_suite.osu import versions as osu_versions

PT2PT = ['osu_latency', 'osu_bw', 'osu_bibw']
COLLECTIVES = ['osu_allreduce', 'osu_bcast', 'osu_alltoall', 'osu_allgather', 'osu_reduce',
               'osu_barrier', 'osu_iallreduce']
LAUNCH = {'openmpi': ['mpirun.openmpi', '-np', '2'], 'mpich': ['mpiexec.mpich', '-np', '2']}
ROOT_OK = {'OMPI_ALLOW_RUN_AS_ROOT': '1', 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1',
           'NO_COLOR': '1'}


def timed(cmd: list[str]) -> float:
    """Seconds one launch took; a failed launch stops the measurement, saying which."""
    start = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **ROOT_OK},
                         timeout=900)
    if out.returncode != 0:
        raise SystemExit(f'{" ".join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}')
    return time.monotonic() - start


def commands(root: Path, mpi: str, smoke: bool) -> dict[str, list[list[str]]]:
    """The commands of each way: 'separate' (one launch a program), 'launchers'."""
    extra = ['-i', '10', '-x', '2'] if smoke else []
    p2p_m, coll_m = (':8', ':8') if smoke else (':4194304', ':1048576')
    run = LAUNCH[mpi]

    def program(name: str) -> str:
        return str(binaries.find_osu_binary(name, [root]))
    separate = [[*run, program(b), '-m', p2p_m, *extra] for b in PT2PT]
    separate += [[*run, program(b), '-f', *([] if b == 'osu_barrier' else ['-m', coll_m]),
                  *extra] for b in COLLECTIVES]
    launchers = [[*run, str(root / 'bin' / 'omb_pt2pt'), '-m', p2p_m, *extra, '--', *PT2PT],
                 [*run, str(root / 'bin' / 'omb_coll'), '-f', '-m', coll_m, *extra, '--',
                  *COLLECTIVES]]
    return {'separate': separate, 'launchers': launchers}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--osu-root', default=os.environ.get('OSU_ROOT'))
    p.add_argument('--mpi', choices=sorted(LAUNCH), default='openmpi')
    p.add_argument('--repeat', type=int, default=3)
    p.add_argument('--smoke', action='store_true')
    args = p.parse_args()
    if not args.osu_root:
        raise SystemExit('give --osu-root PREFIX (or export OSU_ROOT)')
    root = Path(args.osu_root)
    latency = binaries.find_osu_binary('osu_latency', [root])
    version = osu_versions.banner_version(latency)
    if not osu_versions.supports(version, 'launchers'):
        print(f'OSU {version} at {root} has no launchers (omb_pt2pt, omb_coll: from OSU 8.0): '
              'nothing to compare')
        return 0
    ways = commands(root, args.mpi, args.smoke)
    walls: dict[str, list[float]] = {way: [] for way in ways}
    for _ in range(1 if args.smoke else args.repeat):
        for way, cmds in ways.items():
            walls[way].append(sum(timed(cmd) for cmd in cmds))
    load = os.getloadavg()[0]
    print(f'OSU {version} ({root}), {args.mpi}, 2 ranks, load {load:.1f}; the verdict set\'s '
          f'OSU commands, medians of {len(walls["separate"])} round(s):')
    for way, cmds in ways.items():
        print(f'  {way:10s} {len(cmds):2d} launch(es)  {statistics.median(walls[way]):7.1f} s  '
              f'(rounds: {", ".join(f"{w:.1f}" for w in walls[way])})')
    ratio = statistics.median(walls['launchers']) / statistics.median(walls['separate'])
    print(f'launchers / separate launches: {ratio:.2f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
