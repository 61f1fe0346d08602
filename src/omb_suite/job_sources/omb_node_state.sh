#!/bin/sh
# omb_node_state.sh: one line of what this node is doing, before and after the launch
# (omb_suite.machine.node_state reads the pair and says whether the node was busy):
#
#   NODESTATE t=SECONDS cpus=N hz=TICKS load=1MIN runq=RUNNING psi_some_us=TOTAL cpu=USER,...
#
# t: the clock (date +%s.%N); cpus: CPUs online; hz: clock ticks per second (/proc/stat's
# unit); load and runq: /proc/loadavg's 1-minute load and runnable tasks; psi_some_us:
# /proc/pressure/cpu's "some" total, microseconds during which at least one runnable task
# waited for a CPU (empty without PSI); cpu: the first line of /proc/stat (jiffies, steal 8th).
# The job script prints its shell's `times` just before each line: the CPU time of its
# children so far (the launcher and, where they are its children, the ranks), so that the CPU
# the node spent on anything else during the launch can be told apart.
# POSIX sh and sed only: it runs in every job, before and after the benchmark.
t=$(date +%s.%N 2>/dev/null)
read -r load _ _ runq _ < /proc/loadavg 2>/dev/null
psi=$(sed -n 's/^some .*total=\([0-9]*\).*/\1/p' /proc/pressure/cpu 2>/dev/null)
cpu=$(sed -n 's/^cpu  *//p' /proc/stat 2>/dev/null | sed 's/  */,/g')
cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc 2>/dev/null)
hz=$(getconf CLK_TCK 2>/dev/null)
printf 'NODESTATE t=%s cpus=%s hz=%s load=%s runq=%s psi_some_us=%s cpu=%s\n' "${t:-}" \
  "${cpus:-}" "${hz:-}" "${load:-}" "${runq:-}" "${psi:-}" "${cpu:-}"
