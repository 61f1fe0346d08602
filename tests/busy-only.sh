#!/usr/bin/env bash
# tests/busy-only.sh LOG: exit 0 when every failure in a ReFrame session's output (LOG) is a
# check that failed only because the node was busy (omb_suite.machine: other work took the
# CPU the ranks needed: the run did not measure the MPI), saying so; exit 1 otherwise (a real
# failure, or no failure summary at all). The CI phases on this shared machine run the
# verdict set to prove the libraries and launches work end to end; a busy moment of the
# machine is said, not passed off as a regression of the MPI, nor as a pass.
set -uo pipefail
log=${1:?usage: tests/busy-only.sh LOG}
reasons=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | sed -n '/SUMMARY OF FAILURES/,$p' | grep -E '^\s*\* Reason:')
[ -n "$reasons" ] || exit 1
total=$(grep -c . <<< "$reasons")
busy=$(grep -c 'the node was busy' <<< "$reasons")
if [ "$busy" -eq "$total" ]; then
  echo "NOT JUDGED: $busy failure(s) in $log only because the node was busy (the machine's" \
       "other work, not the MPI): run it again on a quiet machine"
  exit 0
fi
exit 1
