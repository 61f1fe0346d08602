#!/usr/bin/env bash
# Prints where the results are (perflogs, reports, the upgrade's state), for
# scripts/cluster-ci.sh and scripts/upgrade.sh, or says why it cannot and exits 2:
# - with the site's own ReFrame configuration (OMB_RFM_CONFIG, ':'-separated files): the
#   directory its filelog perflog handler writes under (omb-review results-dir), or an
#   OMB_RESULTS_DIR holding it (the gate reads every perflog below; reports may sit beside);
#   one that does not hold it is refused, for the gate would read a history the runs never
#   write;
# - with ours (reframe/config/settings.py): OMB_RESULTS_DIR, else <checkout>/perflogs.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -z "${OMB_RFM_CONFIG:-}" ]; then
  echo "${OMB_RESULTS_DIR:-$PWD/perflogs}"
  exit 0
fi
review=omb-review; [ -x .venv/bin/omb-review ] && review=.venv/bin/omb-review
handler=$("$review" results-dir -C "$OMB_RFM_CONFIG") || {
  echo "results-dir.sh: cannot tell where $OMB_RFM_CONFIG writes its perflogs (above)" >&2
  exit 2
}
if [ -n "${OMB_RESULTS_DIR:-}" ]; then
  given=$(realpath -m "$OMB_RESULTS_DIR") writes=$(realpath -m "$handler")
  case "$writes/" in
    "$given"/*) echo "$OMB_RESULTS_DIR"; exit 0 ;;  # the handler's directory or one above it
  esac
  echo "results-dir.sh: OMB_RESULTS_DIR=$OMB_RESULTS_DIR, but the perflog handler of" \
       "$OMB_RFM_CONFIG writes to $handler, outside it: unset OMB_RESULTS_DIR (or point it" \
       "there or above)" >&2
  exit 2
fi
echo "$handler"
