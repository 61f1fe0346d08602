#!/bin/bash
# A fleet run inside one allocation (src/omb_suite/fleet/, rfm/fleet_job.py): every node's
# intra-node figure (all nodes at once), then the rounds of disjoint node pairs (the circle
# method of fleet/schedule.py: every pair in N-1 rounds, or the first OMB_FLEET_ROUNDS), each
# round's pairs at once. Every launch's output in its own file:
#   intra+<node>+<1 or 2>.out (each node twice), pair+<a>+<b>.out, and rounds.txt (one line
#   per round: a:b c:d ...)
#
#   OMB_FLEET_NODES   the nodes, space separated (default: the Slurm allocation's)
#   OMB_FLEET_ROUNDS  how many rounds (0 or unset: all)
#   OMB_FLEET_PAIR    the launch of one pair, {nodes} the two names joined by a comma
#   OMB_FLEET_INTRA   the launch within one node, {nodes} its name
#   OMB_FLEET_AT_ONCE launches at the same time at most (0 or unset: a whole round; 1 where
#                     the nodes share one machine's cores, as the mini-cluster's do)
#   then the program and its options as arguments.
set -u
if [ -z "${OMB_FLEET_NODES:-}" ]; then
  OMB_FLEET_NODES=$(scontrol show hostnames "${SLURM_JOB_NODELIST:?no OMB_FLEET_NODES and no Slurm allocation}" | tr '\n' ' ')
fi
read -ra nodes <<< "$OMB_FLEET_NODES"
max=${OMB_FLEET_ROUNDS:-0}
at_once=${OMB_FLEET_AT_ONCE:-0}
echo "fleet: ${#nodes[@]} node(s): ${nodes[*]}"

# one line per round: "a:b c:d ..." (the circle method: the first node stays, the others turn)
rounds() {
  local -a ring=("$@")
  local n=${#ring[@]} r i line last
  if (( n % 2 )); then ring+=(""); n=$((n + 1)); fi
  for ((r = 0; r < n - 1; r++)); do
    if (( max > 0 && r >= max )); then break; fi
    line=''
    for ((i = 0; i < n / 2; i++)); do
      if [ -n "${ring[i]}" ] && [ -n "${ring[n - 1 - i]}" ]; then
        line+="${ring[i]}:${ring[n - 1 - i]} "
      fi
    done
    echo "${line% }"
    last=${ring[n - 1]}
    ring=("${ring[0]}" "$last" "${ring[@]:1:n-2}")
  done
}

throttle() {  # wait while OMB_FLEET_AT_ONCE launches run
  if (( at_once > 0 )); then
    while (( $(jobs -rp | wc -l) >= at_once )); do wait -n; done
  fi
}

launch() {  # TEMPLATE NODES OUT PROGRAM...
  local template=$1 where=$2 out=$3
  shift 3
  read -ra cmd <<< "${template//\{nodes\}/$where}"
  "${cmd[@]}" "$@" < /dev/null > "$out" 2>&1   # srun reads stdin: not the rounds' file
  echo "exit $?" >> "$out"
}

if (( ${#nodes[@]} < 2 )); then
  echo "fleet: needs 2 nodes or more to pair them; the allocation has ${#nodes[@]}" >&2
  exit 2
fi
start=$SECONDS
# twice each: one launch's figure within a node moves with the machine's other work
for rep in 1 2; do   # one after the other: a node's two launches never share it
  for node in "${nodes[@]}"; do
    throttle
    launch "$OMB_FLEET_INTRA" "$node" "intra+${node}+${rep}.out" "$@" &
  done
  wait
done
echo "fleet: intra-node runs done in $((SECONDS - start)) s"
rounds "${nodes[@]}" > rounds.txt
r=0
while read -r line; do
  r=$((r + 1))
  for pair in $line; do
    a=${pair%%:*} b=${pair##*:}
    throttle
    launch "$OMB_FLEET_PAIR" "$a,$b" "pair+${a}+${b}.out" "$@" &
  done
  wait
  echo "fleet: round $r ($line) done at $((SECONDS - start)) s"
done < rounds.txt
echo "fleet: $r round(s) in $((SECONDS - start)) s"
