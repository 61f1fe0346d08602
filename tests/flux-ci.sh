#!/usr/bin/env bash
# CI: the verdict set inside real Flux instances, with the flux-core scripts/build-flux.sh
# built (.ci/run builds it just before, as a phase of its own; here it is reused):
#   1. one instance on this machine, `flux start --test-size=1` (tests/flux/instance):
#      reframe --system flux-test:host (placements within a node);
#   2. one instance across the Slurm mini-cluster's two nodes, its brokers started by srun
#      (tests/flux/instance --minicluster): reframe --system flux-test:minicluster (inter-node
#      placement across the brokers); skipped, saying why, where the mini-cluster is not up
#      (a failure when .ci/run brought it up: OMB_CLUSTER_UP=1).
# One instance per form for the whole verdict set of the libraries README command 1 built
# (spack-openmpi: Open MPI 4.1, spack-mpich; nothing is built again): the MPI families under
# Flux; today's pip releases are proven by tests/pip-mpis-ci.sh (each added 1.5-2 min here;
# Open MPI 5 is skipped under flux-core, saying why). Each run must pass. ReFrame's stage and
# perflogs: the checkout's, as README command 1's.
set -euo pipefail
cd "$(dirname "$0")/.."

rfm=(.venv/bin/reframe -C reframe/config/settings.py -c reframe/checks -r --max-retries 1
     --exec-policy serial -p '^spack-(openmpi|mpich)$')

echo "== Flux on this machine: tests/flux/instance -- reframe --system flux-test:host"
# a failure only because the node was busy is said, not failed (tests/busy-only.sh)
judged() {  # LOG COMMAND...: run it, its output also in LOG
  local log=$1; shift
  "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  ((rc == 0)) || tests/busy-only.sh "$log"
}
mkdir -p .omb/flux-ci
judged .omb/flux-ci/host.log tests/flux/instance -- "${rfm[@]}" --system flux-test:host

if tests/cluster/status >/dev/null 2>&1; then
  echo "== Flux across the mini-cluster: tests/flux/instance --minicluster --" \
       "reframe --system flux-test:minicluster"
  judged .omb/flux-ci/minicluster.log \
    tests/flux/instance --minicluster -- "${rfm[@]}" --system flux-test:minicluster
elif [ "${OMB_CLUSTER_UP:-}" = 1 ]; then
  echo "ERROR: OMB_CLUSTER_UP=1 but the mini-cluster is not healthy (tests/cluster/status)" >&2
  exit 1
else
  echo "SKIP Flux across the mini-cluster: it is not up (tests/cluster/up, as root)"
fi
