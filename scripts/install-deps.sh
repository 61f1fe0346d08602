#!/usr/bin/env bash
# Install what the suite needs, idempotently:
#   - system packages (scripts/system-packages.txt): an MPI, hwloc, what Spack needs to build
#     OSU (compilers, git, patch, archivers); with --cluster Slurm + munge, with --browser
#     Chromium for the report test, with --modules Lmod, with --flux what flux-core's build
#     needs (scripts/build-flux.sh builds it);
#   - a Python virtual environment in .venv with this package and its tools;
#   - with --pip-mpi, today's MPI releases from their PyPI wheels (Open MPI 5, MPICH 5, Intel
#     MPI 2021: versions pinned in src/omb_suite/setup/data/pip_mpis.yaml), each into a venv
#     of its own, .omb/mpi/<name> (one prefix would mix their mpicc and mpirun); omb-setup
#     then registers each and builds OSU for it (docs/systems.md, "Today's MPI releases").
# As root on Debian/Ubuntu, missing apt packages are installed. Anywhere else (not root: a
# login node whose MPI comes from a loaded module or PATH; another distribution) nothing is
# installed system-wide: what is missing is listed with its apt, dnf and zypper package
# names, and the script goes on with what is there. OMB_NO_SYSTEM_INSTALL=1 asks for that as
# root too (a shared machine whose packages someone else looks after).
set -euo pipefail
cd "$(dirname "$0")/.."

groups=(base)
pip_mpi=0
for arg in "$@"; do
  case "$arg" in
    --cluster) groups+=(cluster) ;;
    --browser) groups+=(browser) ;;
    --modules) groups+=(modules) ;;
    --flux) groups+=(flux) ;;
    --pip-mpi) pip_mpi=1 ;;
    *) echo "usage: $0 [--cluster] [--browser] [--modules] [--flux] [--pip-mpi]" >&2; exit 2 ;;
  esac
done

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; echo "${s%"${s##*[![:space:]]}"}"; }
present() {  # every command (or absolute path) of $1 is there
  local w
  for w in $1; do
    if [[ $w == /* ]]; then [ -x "$w" ] || return 1; else command -v "$w" >/dev/null || return 1; fi
  done
}

why_not() {
  if [ "$(id -u)" -ne 0 ]; then echo 'not root'
  elif [ -n "${OMB_NO_SYSTEM_INSTALL:-}" ]; then echo 'OMB_NO_SYSTEM_INSTALL is set'
  else echo 'no apt-get'; fi
}

apt_pkgs=() lacking=() apt_need=() dnf_need=() zypper_need=()
while IFS='|' read -r group what probe apt dnf zypper; do
  group=$(trim "$group")
  [[ -z $group || $group == \#* ]] && continue
  [[ " ${groups[*]} " == *" $group "* ]] || continue
  read -ra words <<< "$apt"; apt_pkgs+=("${words[@]}")
  if ! present "$(trim "$probe")"; then
    lacking+=("$(trim "$what")")
    apt_need+=("$(trim "$apt")") dnf_need+=("$(trim "$dnf")") zypper_need+=("$(trim "$zypper")")
  fi
done < scripts/system-packages.txt

if [ "$(id -u)" -eq 0 ] && [ -z "${OMB_NO_SYSTEM_INSTALL:-}" ] && command -v apt-get >/dev/null \
   && command -v dpkg-query >/dev/null; then
  missing=()
  for p in "${apt_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "== apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
elif ((${#lacking[@]})); then
  {
    echo "NOTE: installing nothing system-wide ($(why_not)). Not found here:"
    printf '  - %s\n' "${lacking[@]}"
    echo "Ask for these packages (or load the modules that provide them), then run again:"
    echo "  Debian/Ubuntu: apt-get install ${apt_need[*]}"
    echo "  RHEL-like:     dnf install ${dnf_need[*]}"
    echo "  SUSE:          zypper install ${zypper_need[*]}"
    echo "Going on with what is there."
  } >&2
else
  echo "== installing nothing system-wide ($(why_not)): everything needed is here"
fi

if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  if ! python3 -m venv .venv; then
    rm -rf .venv
    if [ "$(id -u)" -eq 0 ] && [ -z "${OMB_NO_SYSTEM_INSTALL:-}" ] \
       && command -v apt-get >/dev/null; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      python3 -m venv .venv
    else
      echo "ERROR: python3 cannot create a virtual environment here. Ask for" \
        "python3-venv (Debian/Ubuntu) or python3 (dnf, zypper), or load a Python module." >&2
      exit 1
    fi
  fi
fi
if ! .venv/bin/python -c 'import omb_suite, reframe' 2>/dev/null \
   || [ pyproject.toml -nt .venv/.omb-installed ]; then
  echo "== pip install -e .[dev]"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e '.[dev]'
  touch .venv/.omb-installed
fi
if [ "$pip_mpi" = 1 ]; then
  .venv/bin/python -m omb_suite.setup.pip_mpis --repo .
fi
