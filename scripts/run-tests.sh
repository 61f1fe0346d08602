#!/usr/bin/env bash
# Run the project's tests: ruff, then pytest (parsers, dry runs of every check, the
# placement probe end to end with Debian's Open MPI, OSU end to end when OSU is present, the
# recipe through Spack when a Spack is present).
#
#   bash scripts/run-tests.sh [pytest options]
#
# OSU end to end: the OSU_ROOT (built with Open MPI) and OSU_ROOT_MPICH the caller exported,
# else the OSU that `bash scripts/quickstart.sh` built and registered in
# .omb/environments.json (tests/registered_osu.py); the summary says which, or that those
# runs were skipped and how to enable them.
#
# Three pytest runs: first the tests marked `spack` (the recipe and environments through a
# real Spack, the real bootstrap), two at a time with pytest-xdist because Spack's
# concretizer is single-threaded and they time nothing; then the tests that start no MPI,
# OSU, Slurm or Flux (parsers, dry runs, listings, the review), two at a time; then those
# marked `launches` (with the e2e and cluster ones), one at a time, so that nothing competes
# with the OSU runs whose results are checked against references.
# Then the module tests once more with every OMB_*/OSU_* variable the docs name exported
# (tests/caller_env.py): no test may see what the caller's shell holds (tests/conftest.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --browser
eval "$(.venv/bin/python tests/registered_osu.py)"
echo "== $osu_note"
echo "== ruff"
.venv/bin/ruff check src reframe tests benchmarks
# pytest's exit 5 means it selected no test (no Spack here, or options that select none of
# a group): a failure only if no run selected any.
echo "== pytest: the Spack tests, two at a time"
spack_rc=0
.venv/bin/python -m pytest -m spack -n 2 --dist loadgroup "$@" || spack_rc=$?
# --durations: the slowest tests, where CI's time goes when it grows
echo "== pytest: the tests that start no MPI, OSU, Slurm or Flux, two at a time"
quiet_rc=0
.venv/bin/python -m pytest -m 'not spack and not launches' -n 2 --durations=15 "$@" \
  || quiet_rc=$?
echo "== pytest: the tests that start MPI, OSU, Slurm or Flux, one at a time"
rest_rc=0
.venv/bin/python -m pytest -m 'not spack and launches' --durations=25 "$@" || rest_rc=$?
echo "== pytest: the module tests with every documented OMB_*/OSU_* variable exported"
caller_rc=0
( eval "$(.venv/bin/python tests/caller_env.py)"
  .venv/bin/python -m pytest -q -p no:cacheprovider tests/test_modules_rfm.py \
    tests/test_caller_environment.py::test_no_variable_of_the_caller_reaches_a_test \
) || caller_rc=$?
echo "== $osu_note"
if [ "$spack_rc" -eq 5 ] && [ "$quiet_rc" -eq 5 ] && [ "$rest_rc" -eq 5 ]; then exit 5; fi
[ "$spack_rc" -eq 5 ] && spack_rc=0
[ "$quiet_rc" -eq 5 ] && quiet_rc=0
[ "$rest_rc" -eq 5 ] && rest_rc=0
for rc in "$spack_rc" "$quiet_rc" "$rest_rc" "$caller_rc"; do
  if [ "$rc" -ne 0 ]; then exit "$rc"; fi
done
