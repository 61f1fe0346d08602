"""Parse the text output of OSU Micro-Benchmarks runs (OMB 4.0 to 8.0.x) into tables.

Every ReFrame check and tool reads OSU output through this package, so that a truncated,
garbled or failed run is caught in one place with one clear message: `parse_osu_output`
reads one benchmark's output; `split_outputs` cuts a file that holds several (a wrapper
script's concatenation) into single outputs. Launcher and wrapper lines before and after a
table (per-rank banners, binding reports, warnings, timings, scheduler trailers) are allowed;
a table that is cut short mid-row, garbled, interrupted by a failure or followed by a second
table is refused with the line that says so. Release differences: see `layout`. OSU 8.0's
launchers run many programs in one launch: their tables are split like any log, and
`launcher_summary` reads the tests their summary says were not run.

Table kinds (`OsuTable.kind`), told apart by the `# OSU MPI... Test` title line:

==============  ============================================================================
kind            benchmarks
==============  ============================================================================
latency         osu_latency, osu_latency_persistent
bandwidth       osu_bw, osu_bw_persistent, osu_bw_fan_in/_fan_out (their output is osu_bw's)
bibw            osu_bibw, osu_bibw_persistent
mbw_mr          osu_mbw_mr (bandwidth and message rate of all pairs)
multi_lat       osu_multi_lat
latency_mt      osu_latency_mt (threads: meta sender_threads, receiver_threads)
latency_mp      osu_latency_mp (forked processes: meta sender_processes, receiver_processes)
one_sided       osu_put_*, osu_get_*, osu_acc_latency, osu_get_acc_latency, osu_fop/cas_latency
collective      blocking, persistent and neighborhood collectives (osu_bcast, osu_barrier, ...)
nonblocking     osu_i* collectives (overall/compute/pure communication/overlap)
partitioned     osu_partitioned_latency (the non-blocking columns; meta partitions)
init            osu_init (columns nprocs, init_min, init_max, init_avg in ms)
hello           osu_hello (column nprocs)
==============  ============================================================================

Column names (`OsuTable.columns`) and units: size (bytes), latency, avg_latency, min_latency,
max_latency (us), iterations, bandwidth (MB/s), msg_rate (messages/s), overall, compute,
coll_init, mpi_test, mpi_wait, pure_comm, min_comm, max_comm (us), overlap (%), validation
('Pass'/'Fail'), p<N> tail percentiles from `-z` (us, or MB/s in bandwidth tables),
transmit_size (bytes, `-D`). OSU 7 prints "Avg Latency(us)" for point-to-point latency too:
it is `latency` in point-to-point and one-sided tables, `avg_latency` in collective ones.
Tables without a Size column (osu_barrier, osu_ibarrier, osu_init, osu_hello) hold one row,
found under size key 0 by `OsuTable.column` and by `OsuTable.value` with no size.
"""

from .layout import SUPPORTED_TEXT
from .reader import parse_osu_output
from .split import OsuOutput, split_outputs
from .summary import NotRun, launcher_summary
from .table import OsuParseError, OsuTable, Value, expected_sizes, parse_size_arg

__all__ = [
    "SUPPORTED_TEXT",
    "NotRun",
    "OsuOutput",
    "OsuParseError",
    "OsuTable",
    "Value",
    "expected_sizes",
    "launcher_summary",
    "parse_osu_output",
    "parse_size_arg",
    "split_outputs",
]
