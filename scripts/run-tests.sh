#!/usr/bin/env bash
# Run the project's tests: ruff, then pytest (parsers, dry runs of every check, the
# placement probe end to end with Debian's Open MPI, OSU end to end when OSU is present, the
# recipe through Spack when a Spack is present).
#
#   bash scripts/run-tests.sh [pytest options]
#
# Two pytest runs: first the tests marked `spack` (the recipe and environments through a
# real Spack, the real bootstrap), two at a time with pytest-xdist because Spack's
# concretizer is single-threaded and they time nothing; then everything else, one at a time,
# so that nothing competes with the OSU runs whose results are checked against references.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --browser
echo "== ruff"
.venv/bin/ruff check src reframe tests benchmarks
# pytest's exit 5 means it selected no test (no Spack here, or options that select none of
# a group): a failure only if neither run selected any.
echo "== pytest: the Spack tests, two at a time"
spack_rc=0
.venv/bin/python -m pytest -m spack -n 2 --dist loadgroup "$@" || spack_rc=$?
echo "== pytest: everything else"
rest_rc=0
.venv/bin/python -m pytest -m 'not spack' "$@" || rest_rc=$?
if [ "$spack_rc" -eq 5 ] && [ "$rest_rc" -eq 5 ]; then exit 5; fi
[ "$spack_rc" -eq 5 ] && spack_rc=0
[ "$rest_rc" -eq 5 ] && rest_rc=0
exit $(( spack_rc != 0 ? spack_rc : rest_rc ))
