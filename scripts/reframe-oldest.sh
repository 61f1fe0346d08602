#!/usr/bin/env bash
# The oldest ReFrame the suite supports, proven as a site installs it: `pip install` of this
# checkout into a venv of its own with the oldest release pyproject.toml allows, then the
# verdict set listed and dry-run with it on `local` (0 failures, at least one OSU test).
#
#   bash scripts/reframe-oldest.sh          # venv in .omb/reframe-oldest (kept, reused)
#
# The oldest release is the lower bound of pyproject's `reframe-hpc>=X.Y` (its newest patch).
set -euo pipefail
cd "$(dirname "$0")/.."

oldest=$(sed -n 's/^ *"reframe-hpc>=\([0-9][0-9.]*\),.*/\1/p' pyproject.toml)
if [ -z "$oldest" ]; then
  echo "reframe-oldest: pyproject.toml names no 'reframe-hpc>=X.Y,...' dependency" >&2
  exit 2
fi
venv=.omb/reframe-oldest
if [ ! -x "$venv/bin/reframe" ] || ! "$venv/bin/reframe" -V | grep -q "^$oldest\."; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "reframe-hpc~=$oldest.0" -e .
fi
version=$("$venv/bin/reframe" -V)
echo "== ReFrame $version (the oldest supported: reframe-hpc>=$oldest in pyproject.toml)"

run() {  # the verdict set on `local`; the output is kept for the checks below
  "$venv/bin/reframe" -C reframe/config/settings.py -c reframe/checks --system local "$@" 2>&1
}
listing=$(run -l)
found=$(sed -n 's/^Found \([0-9]*\) check(s)$/\1/p' <<< "$listing")
echo "$listing" | grep -E '^Found|^- ' | head -40
if [ -z "$found" ] || [ "$found" -eq 0 ]; then
  echo "reframe-oldest: ReFrame $version listed no check of the verdict set" >&2
  exit 1
fi
dry=$(run --dry-run) || { echo "$dry" | tail -40; exit 1; }
summary=$(grep -E 'Ran [0-9]+/[0-9]+ test case' <<< "$dry" | tail -1)
echo "$summary"
if ! grep -q '(0 failure(s)' <<< "$summary" || grep -q 'Ran 0/' <<< "$summary"; then
  echo "$dry" | grep -A12 'FAILURE INFO' | head -60
  echo "reframe-oldest: the verdict set's dry run failed under ReFrame $version" >&2
  exit 1
fi
echo "reframe-oldest: ReFrame $version lists $found checks and dry-runs the verdict set"
