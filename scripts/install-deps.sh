#!/usr/bin/env bash
# Install what the suite needs on a fresh Debian/Ubuntu machine, idempotently:
#   - Debian packages: Open MPI, MPICH, hwloc, what Spack needs to build OSU (its
#     documented prerequisites: git, compilers, patch, archivers), and with --cluster
#     Slurm + munge, with --browser Chromium for the report test
#   - a Python virtual environment in .venv with this package and its tools.
# Without root, the apt step is skipped with a note (install the packages yourself).
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(openmpi-bin libopenmpi-dev mpich libmpich-dev hwloc build-essential
      git gfortran patch file bzip2 xz-utils unzip zstd ca-certificates)
for arg in "$@"; do
  case "$arg" in
    --cluster) pkgs+=(slurm-wlm slurmctld slurmd slurm-client munge iproute2 util-linux) ;;
    --browser) pkgs+=(chromium) ;;
    *) echo "usage: $0 [--cluster] [--browser]" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" -eq 0 ]; then
    echo "== apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "NOTE: not root; please install: ${missing[*]}" >&2
  fi
fi

if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  python3 -m venv .venv || {
    [ "$(id -u)" -eq 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv .venv
  }
fi
if ! .venv/bin/python -c 'import omb_suite, reframe' 2>/dev/null \
   || [ pyproject.toml -nt .venv/.omb-installed ]; then
  echo "== pip install -e .[dev]"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e '.[dev]'
  touch .venv/.omb-installed
fi
