# Source this file to use the mini-cluster from the host: `source tests/cluster/env.sh`.
# Puts the Slurm client wrappers first on PATH and points SLURM_CONF at the cluster's config.
_omb_cluster_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export OMB_CLUSTER_DIR=${OMB_CLUSTER_DIR:-/tmp/omb-minicluster}
export SLURM_CONF=$OMB_CLUSTER_DIR/etc/slurm.conf
case ":$PATH:" in
    *":$_omb_cluster_here/bin:"*) ;;
    *) export PATH=$_omb_cluster_here/bin:$PATH ;;
esac
unset _omb_cluster_here
