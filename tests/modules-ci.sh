#!/usr/bin/env bash
# Environments from environment modules, for real (CI, as root, after the OSU build):
#   0. Debian's Lmod (scripts/install-deps.sh --modules); modulefiles for Debian's Open MPI and
#      MPICH and for the OSU our Spack recipe built for each (spack/environments/<mpi> views),
#      in a site-like hierarchy (tests/lmod_tree.py);
#   1. `local`, as a non-root user ($OMB_CI_USER, created here) with its own clone of this
#      checkout: in a login shell, `module load` of Open MPI and its OSU, then README's first
#      command, `bash scripts/quickstart.sh --no-build --module=mpich=... --mode quick`: it
#      installs nothing system-wide (its venv: pip, as that user), registers the loaded
#      modules (and MPICH's) and runs the verdict set, whose job scripts `module load` and
#      whose perflogs name the modules;
#   2. the mini-cluster, in one allocation (minicluster:alloc), as root (its Slurm commands
#      enter node1's network namespace): the verdict set of the Open MPI module environment.
#      The cluster is shared: everything runs under `flock -o /tmp/omb-minicluster.lock`; one this
#      script brings up it takes down. Skipped, with the reason, where it cannot run.
# Without an OSU build (no views) the verdict set is the placement probe alone;
# OMB_MODULES_CI_OSU_FROM=CHECKOUT takes the views of another checkout (read only).
#
#   bash tests/modules-ci.sh        (exit 0: every step passed or was skipped with a reason)
#   OMB_MODULES_CI_STEPS=cluster bash tests/modules-ci.sh      (one step: local or cluster)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
USER_NAME=${OMB_CI_USER:-omb-ci}
WORK=${OMB_MODULES_CI_DIR:-/tmp/omb-modules-ci}
LOCK=/tmp/omb-minicluster.lock
say() { echo "== modules-ci: $*"; }
fail() { echo "FAIL modules-ci: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP modules-ci: needs root (creates a user)"; exit 0; }

bash scripts/install-deps.sh --modules
PY=$REPO/.venv/bin/python
osu_args=()
for family in openmpi mpich; do
  view=${OMB_MODULES_CI_OSU_FROM:-$REPO}/spack/environments/$family/.spack-env/view
  [ -x "$view/libexec/osu-micro-benchmarks/mpi/pt2pt/osu_latency" ] \
    && osu_args+=(--osu "$family=$view")
done
((${#osu_args[@]})) || say "no OSU built (spack/environments/*/.spack-env/view): probe only"

# tree ROOT: modulefiles under ROOT; prints FAMILY=MODULE,... per Debian MPI
tree() { "$PY" tests/lmod_tree.py "$1" "${osu_args[@]}"; }
loads_of() { sed -n "s/^$1=//p" <<< "$2"; }
# check RESULTS PREFIX MODULES...: job scripts load each list, perflog rows name them
check() {
  local results=$1 prefix=$2 mods
  shift 2
  for mods in "$@"; do
    grep -rqx "module load ${mods%%,*}" "$prefix" --include=rfm_job.sh \
      || fail "no job script under $prefix loads ${mods%%,*}"
    grep -rq "|$mods|" "$results" --include='*.log' \
      || fail "no perflog record under $results has environ_modules $mods"
    # with OSU built, the modules' OSU must have run (not the placement probe alone)
    if ((${#osu_args[@]})) && [[ $mods == *osu-micro-benchmarks* ]]; then
      grep -rq "|$mods|" "$results" --include='OsuPt2Pt.log' \
        || fail "OSU is built but no OsuPt2Pt record under $results has environ_modules $mods"
    fi
  done
  say "job scripts load, perflog records name: $*"
}

steps=" ${OMB_MODULES_CI_STEPS:-local cluster} "

# --- 1. local, as a user without root -------------------------------------------------
local_step() {
id "$USER_NAME" >/dev/null 2>&1 || useradd -m -s /bin/bash "$USER_NAME"
rm -rf "$WORK" && mkdir -p "$WORK"
loads=$(tree "$WORK/modules")
ompi=$(loads_of openmpi "$loads") mpich=$(loads_of mpich "$loads")
[ -n "$ompi" ] && [ -n "$mpich" ] || fail "Debian's Open MPI and MPICH are needed: $loads"
git clone -q "$REPO" "$WORK/suite"
chown -R "$USER_NAME:" "$WORK"
chmod -R a+rX "$WORK"
if ((${#osu_args[@]})); then
  runuser -u "$USER_NAME" -- test -r "${osu_args[1]#*=}/libexec" \
    || fail "user $USER_NAME cannot read the OSU builds under $REPO: make the checkout readable"
fi
say "local as $USER_NAME: module load ${ompi//,/ }; quickstart.sh --module=mpich=$mpich"
start=$SECONDS
runuser -u "$USER_NAME" -- bash -lc "cd '$WORK/suite' && module use '$WORK/modules/Core' \
  && module load ${ompi//,/ } && OMB_RESULTS_DIR='$WORK/results' bash scripts/quickstart.sh \
  --no-build --module=mpich=$mpich --mode quick --prefix '$WORK/rfm'" \
  || fail "quickstart as $USER_NAME (see above)"
say "local: verdict set through module load in $((SECONDS - start)) s"
check "$WORK/results" "$WORK/rfm" "$ompi" "$mpich"
}
[[ $steps == *" local "* ]] && local_step

# --- 2. the mini-cluster, one allocation ----------------------------------------------
cluster() {
  local cdir=${OMB_CLUSTER_DIR:-/tmp/omb-minicluster} rc=0
  if ! tests/cluster/status >/dev/null 2>&1; then
    ip netns add omb-modules-probe 2>/dev/null && ip netns del omb-modules-probe \
      || { echo "SKIP modules-ci cluster: no network namespaces here"; return 0; }
    trap 'tests/cluster/down >/dev/null 2>&1' EXIT     # ours: down however this ends
    tests/cluster/up >/dev/null || fail "tests/cluster/up"
  fi
  local dir=$cdir/modules-ci
  rm -rf "$dir" && mkdir -p "$dir"
  if ((${#osu_args[@]})) && ! tests/cluster/on node1 test -r "${osu_args[1]#*=}/libexec"; then
    say "the nodes do not see $REPO (each node has its own /tmp): probe only"
    osu_args=()
  fi
  local loads ompi
  loads=$(tree "$dir/modules")
  ompi=$(loads_of openmpi "$loads")
  say "mini-cluster, one allocation: ${ompi//,/ }"
  # the registry holds the module environment only (not the Debian MPICH also on PATH)
  bash -lc "module use '$dir/modules/Core' && cd '$REPO' && .venv/bin/omb-setup --no-build \
    --registry '$dir/all.json' --module openmpi=$ompi >/dev/null" || fail "omb-setup --module"
  "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1]))
d["environments"] = [e for e in d["environments"] if e.get("modules")]
json.dump(d, open(sys.argv[2], "w"))' "$dir/all.json" "$dir/environments.json"
  bash -lc "module use '$dir/modules/Core' && cd '$REPO' && source tests/cluster/env.sh \
    && OMB_ENVIRONMENTS_FILE='$dir/environments.json' OMB_RESULTS_DIR='$dir/results' \
       salloc -N 2 --exclusive -p compute .venv/bin/reframe -C reframe/config/settings.py \
       -c reframe/checks --system minicluster:alloc --mode quick --exec-policy serial \
       --max-retries 1 --prefix '$dir/rfm' -r" || rc=$?
  ((rc == 0)) || fail "verdict set on minicluster:alloc (exit $rc); stage: $dir/rfm/stage"
  check "$dir/results" "$dir/rfm" "$ompi"
}
if [[ $steps == *" cluster "* ]]; then
  export -f cluster check fail say tree loads_of
  export REPO PY OSU_ARGS="${osu_args[*]}"
  flock -o "$LOCK" bash -c 'osu_args=($OSU_ARGS); cluster'
fi
say "passed"
