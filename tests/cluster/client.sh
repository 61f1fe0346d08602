#!/bin/bash
# The Slurm client commands in bin/ are links to this script. slurmctld listens on node1's
# private address, which only exists inside the node namespaces, so from the host the real
# command runs in node1's network namespace (and only there: file system, working directory and
# environment stay the host's). Inside a node (a job script) it runs the real command directly.
set -euo pipefail
name=${0##*/}
real=/usr/bin/$name
export SLURM_CONF=${OMB_CLUSTER_DIR:-/tmp/omb-minicluster}/etc/slurm.conf
[[ -x $real ]] || { echo "minicluster: $real not found; run tests/cluster/up" >&2; exit 1; }
here=$(stat -L -c %i /proc/self/ns/net)
for ns in /run/netns/node1 /run/netns/node2; do
    [[ -e $ns && $(stat -L -c %i "$ns") == "$here" ]] && exec "$real" "$@"
done
if [[ ! -e /run/netns/node1 ]]; then
    echo "minicluster: not up (no network namespace node1); run tests/cluster/up" >&2
    exit 1
fi
[[ $(id -u) -eq 0 ]] || { echo "minicluster: $name needs root (it enters node1's network" \
    "namespace)" >&2; exit 1; }
exec nsenter --net=/run/netns/node1 -- "$real" "$@"
