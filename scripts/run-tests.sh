#!/usr/bin/env bash
# Run the project's tests: ruff, then pytest (parsers, dry runs of every check, the
# placement probe end to end with Debian's Open MPI, OSU end to end when OSU is present).
#
#   bash scripts/run-tests.sh [pytest options]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --browser
echo "== ruff"
.venv/bin/ruff check src reframe tests benchmarks
echo "== pytest"
exec .venv/bin/python -m pytest "$@"
