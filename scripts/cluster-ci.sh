#!/usr/bin/env bash
# The "after an upgrade" job of a cluster CI runner (used by .gitlab-ci.yml and
# scripts/upgrade.sh, and tested on the mini-cluster with exactly these commands):
#   1. install the venv, register MPI/OSU builds (omb-setup $OMB_SETUP_ARGS); nothing is
#      installed or registered where the site has set itself up: OMB_NO_SETUP=1, or its own
#      ReFrame configuration in OMB_RFM_CONFIG (':'-separated files, each passed as -C, e.g.
#      OMB_RFM_CONFIG=/site/reframe.py:$PWD/reframe/config/modes.py); then reframe and
#      omb-review are the checkout's .venv/bin ones if there are, else those on PATH;
#   2. run the suite on SYSTEM, tagging the session (ReFrame --session-extras and the
#      perflog column session_tag) and writing JUnit next to the results; every test runs
#      $OMB_RERUNS + 1 times (default 2 + 1, ReFrame --reruns: interleaved, so one session
#      gives the gate each test's best of three launches, docs/gate-statistics.md); a failure
#      is re-measured once before it counts (--max-retries 1; both runs stay in the perflog);
#      with OMB_ALLOC set, the whole run is ONE Slurm job: ReFrame runs inside that
#      allocation and every test is a step of it (SYSTEM's partition must use the local
#      scheduler and the srunalloc launcher, like minicluster:alloc; docs/systems.md), e.g.
#        OMB_ALLOC="salloc -N 4 --exclusive -p batch -t 60" scripts/cluster-ci.sh mycluster:alloc
#   3. gate: omb-review check on the results, judging only the runs of this job
#      against the history before it; non-zero exit on a regression ($OMB_REVIEW_ARGS adds
#      gate options, e.g. "--fdr --override '*latency_4194304*=0.2'"; OMB_GATE=0 skips it,
#      for a caller that judges several sessions together, as scripts/upgrade.sh does).
#
#   scripts/cluster-ci.sh SYSTEM[:PARTITION] [TAG] [extra reframe options...]
#   e.g. scripts/cluster-ci.sh mycluster upgrade=post --mode nightly
#
# Results go to $OMB_RESULTS_DIR (default perflogs/): keep that directory between
# pipelines (a shared file system path), it is the history the gate compares with.
#
# With --dry-run among the reframe options the session writes its job scripts and runs
# nothing (no -r); the gate is skipped: a dry run measures nothing.
set -uo pipefail
case ${1:-} in
  -h|--help) sed -n '2,/^set -uo/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0 ;;
  -*|'') echo "usage: $0 SYSTEM[:PARTITION] [TAG] [reframe options...] (--help: what it does)" >&2
         exit 2 ;;
esac
cd "$(dirname "$0")/.."
system=$1
tag=${2:-ci}
shift $(( $# >= 2 ? 2 : 1 ))
results=$(bash scripts/results-dir.sh) || exit 2
export OMB_RESULTS_DIR=$results
junit=${OMB_JUNIT_DIR:-$results/junit}
mkdir -p "$junit"

configs=()
IFS=: read -ra files <<< "${OMB_RFM_CONFIG:-reframe/config/settings.py}"
for f in "${files[@]}"; do configs+=(-C "$f"); done
if [ -n "${OMB_RFM_CONFIG:-}" ] || [ "${OMB_NO_SETUP:-0}" != 0 ]; then
  echo "== the site's own set-up (${OMB_RFM_CONFIG:+configuration $OMB_RFM_CONFIG, }no install, no omb-setup)"
else
  bash scripts/install-deps.sh || exit 1
  # shellcheck disable=SC2086
  .venv/bin/omb-setup ${OMB_SETUP_ARGS:-} || exit 1
fi
tool() { if [ -x ".venv/bin/$1" ]; then echo "$PWD/.venv/bin/$1"; else command -v "$1"; fi; }
reframe=$(tool reframe) && review=$(tool omb-review) \
  || { echo "reframe and omb-review: neither in .venv/bin nor on PATH" >&2; exit 1; }

# A new site's first run has no history: nothing to judge is then expected, not a failure
first_run=$(find "$results" -name '*.log*' -print -quit 2>/dev/null | grep -q . || echo --allow-empty)
since=$(date -u +%FT%T)
stamp=$(date -u +%Y%m%dT%H%M%S)
echo "== reframe on $system, session tag '$tag'${OMB_ALLOC:+, in one allocation: $OMB_ALLOC}"
# In one allocation the steps run one at a time: ReFrame's serial policy then costs a quarter
# of the CPU of its asynchronous one, which visits every pending test on every poll (measured,
# docs/benchmarks.md "The harness's own CPU"); a queue-based partition keeps async.
policy=()
[ -n "${OMB_ALLOC:-}" ] && policy=(--exec-policy serial)
action=(-r)
for arg in "$@"; do [ "$arg" = --dry-run ] && action=() && OMB_GATE=0; done
# shellcheck disable=SC2086
${OMB_ALLOC:-} "$reframe" "${configs[@]}" -c reframe/checks \
    --system "$system" --session-extras "tag=$tag" -S "session_tag=$tag" --max-retries 1 \
    --reruns "${OMB_RERUNS:-2}" "${policy[@]}" --report-junit "$junit/$stamp.xml" "${action[@]}" "$@"
run_rc=$?

gate_rc=0
if [ ${#action[@]} = 0 ]; then
  echo "== omb-review check skipped (--dry-run: nothing was measured)"
elif [ "${OMB_GATE:-1}" = 0 ]; then
  echo "== omb-review check skipped (OMB_GATE=0: the caller judges these runs)"
else
  echo "== omb-review check (runs since $since against the history before)"
  # shellcheck disable=SC2086
  "$review" check "$results" --since "$since" --json "$results/gate-$stamp.json" \
      ${first_run} ${OMB_REVIEW_ARGS:-}
  gate_rc=$?
fi

echo "reframe exit $run_rc, gate exit $gate_rc"
exit $(( run_rc != 0 || gate_rc != 0 ))
