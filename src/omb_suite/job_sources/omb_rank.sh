#!/bin/sh
# omb_rank.sh [--preload LIB] [--gpu KIND DEVICES] [--rank0-env VAR=VALUE]... PROGRAM [ARGS...]
#
# Per-rank wrapper of the OMB regression suite (omb_suite.machine.probe). The launcher starts this
# script as each rank; it reports where the rank runs and then execs the benchmark, so the
# placement checked is the one the benchmark runs with (the launcher's binding is inherited
# through exec) and one launch both measures and proves the placement.
#
#   PROBE rank=R size=N host=H cpus=LIST sockets=LIST numa=LIST      (stderr, one line)
#
# With --gpu cuda|rocm DEVICES (a comma-separated device list of the node) it also exports
# CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES=DEVICES and reports the device OSU will pick,
# devices[local_rank % count], with the local rank read as OSU 7.x reads it:
#
#   GPUBIND rank=R host=H visible=DEVICES device=D                    (stderr, one line)
#
# With --preload LIB it loads LIB into PROGRAM only (LD_PRELOAD exported just before exec, so
# this shell and its helpers never load it): our collective check, the MPI_T reader, linked
# with the MPI library. Several --preload load in the order given.
#
# With --rank0-env VAR=VALUE it exports VAR=VALUE in rank 0 only: a library's verbose output
# (OMPI_MCA_coll_base_verbose=9) proves the collective algorithm from one rank, so the output
# of a test does not grow with its rank count.
#
# POSIX sh, no helper programs besides sed: it runs on every rank of every job.
first() { for v in "$@"; do eval "x=\${$v:-}"; [ -n "$x" ] && { echo "$x"; return; }; done; }

rank=$(first OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK MV2_COMM_WORLD_RANK MPI_RANKID SLURM_PROCID)
size=$(first OMPI_COMM_WORLD_SIZE PMI_SIZE MV2_COMM_WORLD_SIZE MPI_NRANKS SLURM_NTASKS)
read -r host < /proc/sys/kernel/hostname 2>/dev/null || host=$(uname -n)
cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)

# sockets and NUMA nodes of the CPUs this rank may run on (sysfs, as the C probe reads them)
sockets='' numa=''
add() { eval "cur=\$$1"; case ",$cur," in *",$2,"*) ;; *) eval "$1=\${cur:+\$cur,}$2" ;; esac; }
old_ifs=$IFS; IFS=,
for range in $cpus; do
  lo=${range%-*} hi=${range#*-} c=$lo
  while [ "$c" -le "$hi" ]; do
    d=/sys/devices/system/cpu/cpu$c
    if read -r s < "$d/topology/physical_package_id" 2>/dev/null; then add sockets "$s"; fi
    for n in "$d"/node[0-9]*; do [ -e "$n" ] && add numa "${n##*node}"; done
    c=$((c + 1))
  done
done
IFS=$old_ifs
printf 'PROBE rank=%s size=%s host=%s cpus=%s sockets=%s numa=%s\n' "${rank:-?}" "${size:-?}" \
  "$host" "${cpus:-none}" "${sockets:-none}" "${numa:-none}" >&2

preload=''
while :; do
  case ${1:-} in
  --preload) preload=${preload:+$preload:}$2; shift 2 ;;
  --rank0-env)
    [ "${rank:-}" = 0 ] && export "$2"
    shift 2 ;;
  --gpu)
    kind=$2 devices=$3; shift 3
    local_rank=$(first MV2_COMM_WORLD_LOCAL_RANK MVP_COMM_WORLD_LOCAL_RANK \
                 OMPI_COMM_WORLD_LOCAL_RANK MPI_LOCALRANKID SLURM_PROCID LOCAL_RANK)
    if [ -z "$local_rank" ]; then
      echo "omb_rank.sh: no local-rank variable set by the launcher: OSU would put every rank" \
           "on the same GPU" >&2
      exit 3
    fi
    count=$(echo "$devices" | tr ',' '\n' | grep -c .)
    device=$(echo "$devices" | cut -d, -f$((local_rank % count + 1)))
    case $kind in
      cuda) export CUDA_VISIBLE_DEVICES="$devices" ;;
      rocm) export ROCR_VISIBLE_DEVICES="$devices" ;;
      *) echo "omb_rank.sh: --gpu takes cuda or rocm, not '$kind'" >&2; exit 2 ;;
    esac
    echo "GPUBIND rank=${rank:-?} host=$host visible=$devices device=$device" >&2
    ;;
  *) break ;;
  esac
done
[ -z "$preload" ] || export LD_PRELOAD="$preload${LD_PRELOAD:+:$LD_PRELOAD}"
exec "$@"
