#!/usr/bin/env bash
# Build flux-core once into .omb/flux (git-ignored) and reuse it: prints the prefix.
#   bash scripts/build-flux.sh            # from ../shared/mirror/flux-core-<version>.tar.gz
#   OMB_FLUX_SOURCE=/path/flux-core-0.88.0.tar.gz bash scripts/build-flux.sh
#   OMB_FLUX_PREFIX=/opt/flux bash scripts/build-flux.sh   # a site's own Flux: checked, not built
# The version and the tarball's sha256 are pinned below; a tarball of another content is
# refused. A prefix whose stamp names the same sha256 is reused as it is (no rebuild). The
# build dependencies are Debian packages: bash scripts/install-deps.sh --flux.
# The build runs under `nice -n 19` with OMB_FLUX_JOBS (default 2) make jobs; its log is
# .omb/flux/build.log. Needs Debian's /usr/bin/python3 (ply, cffi): a venv's python lacks them.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=0.88.0
PINNED_SHA256=5337c8b919a01100335f7769b806875e4536a08897f2f73354bbf3d78d5e17f8  # the mirror's tarball (git archive of tag v0.88.0)
root=$PWD/.omb/flux
prefix=$root/$VERSION
say() { echo "build-flux: $*" >&2; }
die() { echo "build-flux: ERROR: $*" >&2; exit 1; }

usable() {  # a prefix whose flux starts and whose Python bindings load
  [ -x "$1/bin/flux" ] && "$1/bin/flux" version >/dev/null 2>&1 \
    && "$1/bin/flux" python -c 'import flux.job' 2>/dev/null
}

if [ -n "${OMB_FLUX_PREFIX:-}" ]; then
  usable "$OMB_FLUX_PREFIX" \
    || die "OMB_FLUX_PREFIX=$OMB_FLUX_PREFIX has no working bin/flux with its Python bindings"
  echo "$OMB_FLUX_PREFIX"
  exit 0
fi

source=${OMB_FLUX_SOURCE:-$(cd .. && pwd)/shared/mirror/flux-core-$VERSION.tar.gz}
[ -r "$source" ] || die "no flux-core source at $source: set OMB_FLUX_SOURCE to the" \
  "flux-core-$VERSION tarball, or OMB_FLUX_PREFIX to an installed Flux"
sha=$(sha256sum "$source" | cut -d' ' -f1)
want=${OMB_FLUX_SHA256:-$PINNED_SHA256}
[ "$sha" = "$want" ] || die "$source has sha256 $sha, not the pinned $want" \
  "(flux-core $VERSION); set OMB_FLUX_SHA256 only for a tarball you have checked"

if [ "$(cat "$prefix/.omb-flux-sha256" 2>/dev/null)" = "$sha" ] && usable "$prefix"; then
  say "reusing $prefix (flux-core $VERSION, sha256 $sha)"
  echo "$prefix"
  exit 0
fi

for need in autoreconf pkg-config lua5.1 make cc; do
  command -v "$need" >/dev/null || die "$need not found: bash scripts/install-deps.sh --flux"
done
/usr/bin/python3 -c 'import cffi, ply, yaml' 2>/dev/null \
  || die "/usr/bin/python3 lacks cffi, ply or yaml: bash scripts/install-deps.sh --flux"

mkdir -p "$root"
src=$root/src-$VERSION
rm -rf "$src" "$prefix"
mkdir -p "$src"
# the mirror's archive stops inside t/ (its README): tar's complaint about the cut end is
# expected; what the build needs is checked instead
tar -xzf "$source" -C "$src" --strip-components=1 2>/dev/null || true
for need in autogen.sh configure.ac src/broker src/bindings/python etc; do
  [ -e "$src/$need" ] || die "$source lacks $need: not a flux-core source tree"
done
log=$root/build.log
say "building flux-core $VERSION into $prefix (log: $log)"
start=$SECONDS
(
  cd "$src"
  # a git archive has no configure and no .git for the version: name it
  FLUX_VERSION=$VERSION nice -n 19 ./autogen.sh
  # Lua 5.1 by name: Lmod (install-deps.sh --modules) makes /usr/bin/lua a Lua 5.3 whose
  # headers are not installed, and configure would look for those
  PYTHON=/usr/bin/python3 LUA=$(command -v lua5.1) nice -n 19 ./configure --prefix="$prefix" \
    --disable-docs
  nice -n 19 make -j"${OMB_FLUX_JOBS:-2}"
  nice -n 19 make install
) >"$log" 2>&1 || die "build failed; the end of $log:$(echo; tail -20 "$log")"
rm -rf "$src"
usable "$prefix" || die "built, but $prefix/bin/flux does not run; see $log"
echo "$sha" >"$prefix/.omb-flux-sha256"
say "built in $((SECONDS - start)) s"
echo "$prefix"
