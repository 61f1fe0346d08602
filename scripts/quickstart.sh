#!/usr/bin/env bash
# Set up this machine and run the suite on the `local` system.
#
#   bash scripts/quickstart.sh [extra reframe options, e.g. --mode quick]
#
# 1. installs Debian MPI packages and a Python venv (scripts/install-deps.sh);
# 2. `omb-setup` registers the MPI libraries and OSU builds it finds (Spack environments
#    when spack is on PATH, or $OSU_ROOT) as ReFrame programming environments, and says
#    clearly how to get OSU when there is none;
# 3. runs every check on `local`; perflogs land in perflogs/local/default/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
.venv/bin/omb-setup
exec .venv/bin/reframe -C reframe/config/settings.py -c reframe/checks --system local -r "$@"
