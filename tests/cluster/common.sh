# Shared settings and helpers of the mini-cluster scripts (sourced, not run).
# The "nodes" are network namespaces: two are joined by one veth pair named rig0 on both
# ends; more (OMB_CLUSTER_NODES=N at `up`, up to 16) each have a veth rig0 whose other end is
# a port of one bridge in the namespace omb-switch. Each node also has its own mount and UTS
# namespace (host name, /tmp, /etc/hosts, sysfs), kept alive by bind-mounting the namespace
# files under $OMB_CLUSTER_DIR/ns.

# shellcheck disable=SC2034  # the settings are used by the scripts that source this file
CLUSTER_DIR=${OMB_CLUSTER_DIR:-/tmp/omb-minicluster}
# This checkout (kept visible on the nodes when it lives in /tmp, as a CI clone may)
CHECKOUT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CTLD_NODE=node1
LINK=rig0
# the bridge's namespace, and its port of a node (more than two nodes)
SWITCH_NS=omb-switch
BRIDGE=rigbr
port_of() { echo "p-$1"; }
NS_DIR=$CLUSTER_DIR/ns
CONF=$CLUSTER_DIR/etc/slurm.conf
PACKAGES=(slurm-wlm slurmctld slurmd slurm-client munge)
# The node names are global (/run/netns), so one cluster at a time; this file names its dir.
OWNER_FILE=/run/omb-minicluster.dir
# up empties the cluster directory; this file inside says it is one up made.
DIR_MARK=.omb-minicluster

say() { printf 'minicluster: %s\n' "$*"; }
die() { printf 'minicluster: ERROR: %s\n' "$*" >&2; exit 1; }

# set_nodes N: the nodes node1..nodeN at 10.99.0.1..N
declare -A NODE_ADDR
set_nodes() {
    local i
    [[ $1 =~ ^[0-9]+$ ]] && (($1 >= 2 && $1 <= 16)) \
        || die "OMB_CLUSTER_NODES=$1: give a number of nodes from 2 to 16"
    NODES=()
    NODE_ADDR=()
    for ((i = 1; i <= $1; i++)); do
        NODES+=("node$i")
        NODE_ADDR[node$i]=10.99.0.$i
    done
}
# up records how many nodes it started: the scripts that follow act on those
COUNT_FILE=$CLUSTER_DIR/node-count
if [[ -r $OWNER_FILE && -r $COUNT_FILE ]]; then
    set_nodes "$(<"$COUNT_FILE")"
else
    set_nodes "${OMB_CLUSTER_NODES:-2}"
fi

# A command that fails outside a test stops the script, and says which one.
set -E
trap 'die "failed (line $LINENO of ${BASH_SOURCE[0]##*/}): $BASH_COMMAND"' ERR

# Every script starts here: root, and the cluster that is up (if any) is the one we mean.
preflight() {
    local owner
    [[ $(id -u) -eq 0 ]] || die "must run as root (network namespaces and mounts); try: sudo $0"
    [[ -r $OWNER_FILE ]] || return 0
    owner=$(<"$OWNER_FILE")
    [[ $owner == "$CLUSTER_DIR" ]] \
        || die "the mini-cluster that is up keeps its state in $owner, not $CLUSTER_DIR;" \
            "run this with OMB_CLUSTER_DIR=$owner"
}

check_node() {
    [[ -n ${NODE_ADDR[$1]:-} ]] || die "unknown node '$1'; the nodes are: ${NODES[*]}"
}

# True if the path is a mount point in this (the host's) mount namespace.
is_mounted() { findmnt -rn --mountpoint "$1" >/dev/null 2>&1; }

# Run a command on a node: inside its network, mount and UTS namespaces, in $NODE_WD or /.
on_node() {
    local node=$1
    shift
    nsenter --net="/run/netns/$node" --mount="$NS_DIR/$node.mnt" --uts="$NS_DIR/$node.uts" \
        --wd="${NODE_WD:-/}" -- "$@"
}

# Pids of the processes in the namespace of type $1 (mnt, net) that the file $2 pins.
ns_pids() {
    local ns pid
    [[ $1 == net ]] || is_mounted "$2" || return 0
    [[ -e $2 ]] || return 0
    ns="$1:[$(stat -L -c %i "$2")]"
    for pid in /proc/[0-9]*; do
        [[ $(readlink "$pid/ns/$1" 2>/dev/null) == "$ns" ]] && echo "${pid#/proc/}"
    done
    return 0
}

# Pids of a node's daemons and job steps (its mount namespace).
node_pids() { ns_pids mnt "$NS_DIR/$1.mnt"; }

# Pid from a pid file if that process is alive, else nothing.
live_pid() {
    local pid
    [[ -r $1 ]] || return 0
    pid=$(<"$1")
    [[ -n $pid ]] && ! all_gone "$pid" && echo "$pid"
    return 0
}

# True if slurmctld and every slurmd are running (slurmctld notices a dead slurmd only later).
daemons_alive() {
    local node
    [[ -n $(live_pid "$CLUSTER_DIR/run/slurmctld.pid") ]] || return 1
    for node in "${NODES[@]}"; do
        [[ -n $(live_pid "$CLUSTER_DIR/run/slurmd-$node.pid") ]] || return 1
    done
}

# True when none of the given pids is alive. Zombies count as gone: this machine's init may
# take seconds to reap them.
all_gone() {
    local pid state
    for pid; do
        state=$(ps -o stat= -p "$pid" 2>/dev/null) || continue
        [[ $state == Z* ]] || return 1
    done
    return 0
}

# Wait up to $1 seconds for a command to succeed.
wait_for() {
    local secs=$1 i
    shift
    for ((i = 0; i < secs * 5; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    return 1
}

# Start a node's slurmd (inside the node); the spool, pid and log paths use %n.
start_slurmd() {
    on_node "$1" env SLURM_CONF="$CONF" /usr/sbin/slurmd -N "$1" \
        || die "slurmd on $1 did not start; see $CLUSTER_DIR/log/slurmd-$1.log"
}
