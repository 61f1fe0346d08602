#!/usr/bin/env bash
# A system upgrade as one procedure (docs/upgrade-workflow.md):
#
#   scripts/upgrade.sh before SYSTEM[:PARTITION] [reframe options...]
#       ... upgrade MPI/OSU; register the new environments (omb-setup, or the site's
#       configuration) ...
#   scripts/upgrade.sh after
#
# before: $OMB_UPGRADE_SESSIONS sessions (default 3: the gate judges a series against at
#   least 3 sessions) of scripts/cluster-ci.sh, tag upgrade=pre, mode $OMB_UPGRADE_MODE (default
#   nightly) and the options given; series without a baseline yet are expected there
#   (--allow-new --allow-empty: the history is being built). Where the
#   system has no references file (reframe/references/SYSTEM.yaml, or $RFM_REFERENCE_PREFIX),
#   one is derived from these runs (omb-review baseline). SYSTEM, mode and options are kept in
#   $OMB_RESULTS_DIR/upgrade-before.args.
# after: two sessions with exactly those, tag upgrade=post, then the gate judges both together
#   against the runs before them (omb-review check --since the first): a regression is a
#   curve worse in each of the two sessions, so one session at an unlucky moment of the
#   machine neither fails the upgrade nor hides a regression; it names every regression with
#   what changed (environment, MPI and OSU versions). Exit non-zero on a regression, a failed
#   check, or a series of the session with no baseline (an environment renamed without a
#   series to continue). OMB_UPGRADE_CONFIRM=0: one session after, judged alone (--confirm 1).
#
#   scripts/upgrade.sh side-by-side SYSTEM[:PARTITION] OLD NEW [reframe options...]
#
# side-by-side: where the old and the new library are both installed (two modules, two
#   prefixes, two environments), both run side by side: ReFrame's serial policy launches
#   OLD and NEW of each case one after the other, $OMB_SIDE_BY_SIDE_PAIRS times (default 12,
#   --reruns), half of them in a second session with the environments' order reversed
#   (reframe/config/reversed_environs.py; OMB_SIDE_BY_SIDE_ORDER=configured: all in the
#   configuration's order), and omb-review compare judges NEW against OLD pair by pair: the
#   machine's moment is in both launches of a pair and cancels in their ratio, and the
#   advantage of coming second cancels between the two orders. Mode: $OMB_UPGRADE_MODE when
#   set, else OSU's default counts, the same for both (never counts from each one's
#   history). Where it passes but some curves were blind (ok, yet too noisy for their pairs
#   to have shown twice the threshold), their tests run again, as many pairs, both orders,
#   and compare judges all the pairs (OMB_SIDE_BY_SIDE_AGAIN=0: no second round). Exit
#   non-zero on a regression, a failed check or too few pairs. No history is needed (and
#   none is used).
#
# Everything else (OMB_RFM_CONFIG, OMB_NO_SETUP, OMB_ALLOC, OMB_REVIEW_ARGS...) is
# scripts/cluster-ci.sh's.
set -uo pipefail
case ${1:-} in
  -h|--help) sed -n '2,/^set -uo/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0 ;;
esac
cd "$(dirname "$0")/.."
step=${1:-}
results=$(bash scripts/results-dir.sh) || exit 2
export OMB_RESULTS_DIR=$results
saved=$results/upgrade-before.args
review() { if [ -x .venv/bin/omb-review ]; then .venv/bin/omb-review "$@"; else omb-review "$@"; fi; }

case $step in
  before)
    shift
    [ $# -ge 1 ] || { echo "usage: $0 before SYSTEM[:PARTITION] [reframe options...]" >&2; exit 2; }
    system=$1
    shift
    args=(--mode "${OMB_UPGRADE_MODE:-nightly}" "$@")
    mkdir -p "$results"
    printf '%s\n' "$system" "${args[@]}" > "$saved"
    sessions=${OMB_UPGRADE_SESSIONS:-3}
    for ((i = 1; i <= sessions; i++)); do
      echo "== before the upgrade: session $i of $sessions"
      OMB_REVIEW_ARGS="${OMB_REVIEW_ARGS:-} --allow-new --allow-empty" \
        scripts/cluster-ci.sh "$system" upgrade=pre "${args[@]}" || exit $?
    done
    refs=${RFM_REFERENCE_PREFIX:-$PWD/reframe/references}/${system%%:*}.yaml
    if [ -e "$refs" ]; then
      echo "== references: $refs is kept"
    else
      echo "== references: none for ${system%%:*}; derived from the runs before the upgrade"
      review baseline "$results" --system "${system%%:*}" -o "$refs" || exit $?
    fi
    echo "== now upgrade, register the new environments, then: $0 after"
    ;;
  after)
    [ -r "$saved" ] || { echo "$0 after: no $saved: run '$0 before SYSTEM' first" >&2; exit 2; }
    mapfile -t kept < "$saved"
    echo "== after the upgrade: ${kept[*]} (as before)"
    start=$(date -u +%FT%T)
    confirm=(); sessions=2
    [ "${OMB_UPGRADE_CONFIRM:-1}" = 0 ] && { confirm=(--confirm 1); sessions=1; }
    run_rc=0
    for ((i = 1; i <= sessions; i++)); do
      echo "== after the upgrade: session $i of $sessions"
      OMB_GATE=0 scripts/cluster-ci.sh "${kept[0]}" upgrade=post "${kept[@]:1}" || run_rc=$?
    done
    echo "== omb-review check (the $sessions session(s) after the upgrade, since $start)"
    # shellcheck disable=SC2086
    review check "$results" --since "$start" "${confirm[@]}" \
        --json "$results/gate-upgrade.json" ${OMB_REVIEW_ARGS:-}
    gate_rc=$?
    echo "after the upgrade: reframe exit $run_rc, gate exit $gate_rc"
    exit $(( run_rc != 0 || gate_rc != 0 ))
    ;;
  side-by-side)
    shift
    [ $# -ge 3 ] || { echo "usage: $0 side-by-side SYSTEM[:PARTITION] OLD NEW [reframe options...]" >&2; exit 2; }
    system=$1 old=$2 new=$3
    shift 3
    pairs=${OMB_SIDE_BY_SIDE_PAIRS:-12}
    mode=(); [ -n "${OMB_UPGRADE_MODE:-}" ] && mode=(--mode "$OMB_UPGRADE_MODE")
    start=$(date -u +%FT%T)
    # half the pairs in the configuration's order, half reversed: the launch that comes
    # second can be faster, and compare cancels that between the two halves
    first=$(( (pairs + 1) / 2 )) second=$(( pairs / 2 ))
    [ "${OMB_SIDE_BY_SIDE_ORDER:-both}" = configured ] && first=$pairs second=0
    echo "== side by side: $old and $new, each case launched $pairs times a side ($first in" \
         "the configuration's order, $second reversed)"
    # one session of $1 pairs; --max-retries 0: a retried launch is one more launch of
    # one side, and the pairs of its case after it would be a launch apart (compare pairs the
    # i-th launches); iterations_from_history=0: both sides run OSU with the same counts (from
    # history, each library would get its own, and the new one has none);
    # enforce_references=0: the pairs are the judge (a reference missed on one busy launch
    # failed a side-by-side of an unchanged library in a CI rehearsal); a failed run still fails
    half() {
      OMB_GATE=0 OMB_RERUNS=$(($1 - 1)) scripts/cluster-ci.sh "$system" upgrade=side-by-side \
          "${mode[@]}" -p "^($old|$new)\$" --exec-policy serial --max-retries 0 \
          -S iterations_from_history=0 -S enforce_references=0 "${@:2}"
    }
    # one round: the first half in the configured order, the second reversed
    both_orders() {
      half "$first" "$@" || run_rc=$?
      if [ "$second" -gt 0 ]; then
        echo "== side by side, the environments reversed (reframe/config/reversed_environs.py)"
        OMB_RFM_CONFIG="${OMB_RFM_CONFIG:-reframe/config/settings.py}:$PWD/reframe/config/reversed_environs.py" \
            half "$second" "$@" || run_rc=$?
      fi
    }
    run_rc=0
    both_orders "$@"
    compare() {
      echo "== omb-review compare ($new against $old, the launches since $start)"
      # shellcheck disable=SC2086
      review compare "$results" --before "$old" --after "$new" --since "$start" \
          --json "$results/compare-upgrade.json" --again "$results/compare-again.txt" \
          ${OMB_COMPARE_ARGS:-}
    }
    compare
    gate_rc=$?
    # a second round where the first passed but some curves were blind (too noisy for their
    # pairs to have shown twice the threshold): their tests only, as many pairs again, both
    # orders; the user's own -n selection is replaced by theirs (a subset of it)
    if [ "$gate_rc" = 0 ] && [ -s "$results/compare-again.txt" ] \
        && [ "${OMB_SIDE_BY_SIDE_AGAIN:-1}" != 0 ]; then
      names=() kept=() drop=0
      while read -r pattern; do names+=(-n "$pattern"); done < "$results/compare-again.txt"
      for arg in "$@"; do
        if [ "$drop" = 1 ]; then drop=0; continue; fi
        case $arg in
          -n|--name) drop=1 ;;
          -n*|--name=*) ;;
          *) kept+=("$arg") ;;
        esac
      done
      echo "== side by side again: $(( ${#names[@]} / 2 )) test(s) whose curves were ok but" \
           "blind (compare above), $pairs more launches a side"
      both_orders ${kept[@]+"${kept[@]}"} "${names[@]}"
      compare
      gate_rc=$?
    fi
    echo "side by side: reframe exit $run_rc, compare exit $gate_rc"
    exit $(( run_rc != 0 || gate_rc != 0 ))
    ;;
  *)
    echo "usage: $0 before SYSTEM[:PARTITION] [reframe options...] | $0 after | $0 side-by-side SYSTEM OLD NEW" >&2
    exit 2
    ;;
esac
