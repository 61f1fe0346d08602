#!/usr/bin/env bash
# Set up this machine, build OSU with our Spack recipe, and run the suite on `local`.
#
#   bash scripts/quickstart.sh [--no-build] [--module=FAMILY=MODULE[,MODULE...]]
#        [--discover-modules] [--spack-modules] [extra reframe options, e.g. --mode quick]
#
# 1. installs what is missing and a Python venv (scripts/install-deps.sh): as root on
#    Debian/Ubuntu the MPI packages; otherwise (no root, a login node) nothing system-wide:
#    what is missing is named (apt, dnf, zypper) and the run goes on with what is there;
# 2. `omb-setup` registers the MPI libraries as ReFrame programming environments: those on
#    PATH, and, when modules are loaded in this shell ($LOADEDMODULES, e.g. `module load
#    openmpi/4.1.5 osu-micro-benchmarks/7.3`), one environment that loads them in every job
#    (plus the --module/--discover-modules/--spack-modules ones: docs/systems.md); for
#    each one without OSU, builds OSU with our Spack recipe: with the spack on PATH, or the
#    Spack pinned in spack/pins.yaml, fetched into .omb/spack on first use (about 5 minutes
#    the first time; a second run reuses everything). Without network, set OMB_SPACK_GIT,
#    OMB_SPACK_PACKAGES_GIT and OMB_SPACK_MIRROR (docs/spack.md). --no-build (or
#    OMB_NO_BUILD=1) builds nothing: without OSU only the placement probe runs;
# 3. runs the verdict set on `local` (a failed test is re-measured once: a spike on a shared
#    box is not a regression; both attempts are in the perflog); perflogs land in
#    perflogs/local/default/. --mode explore adds every algorithm, scale and mapping.
#    One test at a time with ReFrame's serial policy: its default (async) one visits every
#    pending test on every poll and took half a core of this 2-core box over the
#    exploration, preempting the benchmark's ranks (docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
setup_args=()
reframe_args=()
for arg in "$@"; do
  case "$arg" in
    --no-build|--discover-modules|--spack-modules) setup_args+=("$arg") ;;
    --module=*) setup_args+=(--module "${arg#--module=}") ;;
    *) reframe_args+=("$arg") ;;
  esac
done
bash scripts/install-deps.sh
if [ -n "${LOADEDMODULES:-}" ]; then
  echo "== quickstart: modules loaded here (${LOADEDMODULES//:/ }): every job loads them too"
  setup_args+=(--loaded-modules)
fi
.venv/bin/omb-setup "${setup_args[@]}"
echo "== quickstart: set up in $((SECONDS - start)) s; running the suite"
read -r load _ < /proc/loadavg
cpus=$(getconf _NPROCESSORS_ONLN)
if awk -v l="$load" -v c="$cpus" 'BEGIN { exit !(l >= c / 2) }'; then
  echo "== quickstart: this machine is busy now (load $load on $cpus CPUs): the benchmarks share"
  echo "   its cores, and a check that misses its reference then says 'the node was busy'"
fi
exec .venv/bin/reframe -C reframe/config/settings.py -c reframe/checks --system local -r \
  --max-retries 1 --exec-policy serial \
  "${reframe_args[@]}"
