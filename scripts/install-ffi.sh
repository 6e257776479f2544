#!/usr/bin/env bash
# Installs the C library of sitefile under a prefix, for `cc app.c $(pkg-config --cflags --libs
# sitefile)`:
#   PREFIX/include/sitefile.h
#   PREFIX/lib/libsitefile.so, PREFIX/lib/libsitefile.a
#   PREFIX/lib/pkgconfig/sitefile.pc   (from ffi/sitefile.pc.in)
#
# Usage: scripts/install-ffi.sh [--from DIR] PREFIX
#   without --from: builds the library in release (`cargo build -p sitefile-ffi --release`) and
#                   installs target/release's;
#   --from DIR:     installs the libsitefile.so and libsitefile.a already built in DIR (no cargo).
# Then: PKG_CONFIG_PATH=PREFIX/lib/pkgconfig, and at run time the loader must find
# PREFIX/lib (a system prefix, LD_LIBRARY_PATH, or -Wl,-rpath,PREFIX/lib).
set -euo pipefail

usage() {
  echo "usage: $0 [--from DIR] PREFIX" >&2
  exit 2
}

from=""
if [ "${1:-}" = "--from" ]; then
  [ $# -ge 2 ] || usage
  from=$2
  shift 2
fi
[ $# -eq 1 ] || usage
prefix=$1

root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "$from" ]; then
  (cd "$root" && cargo build -p sitefile-ffi --release --locked)
  from=$(cd "$root" && cargo metadata --format-version 1 --no-deps --locked |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release
fi
for lib in libsitefile.so libsitefile.a; do
  [ -f "$from/$lib" ] || {
    echo "install-ffi.sh: $from/$lib not found (build it with cargo build -p sitefile-ffi)" >&2
    exit 1
  }
done

# The version is the header's (checked against the crate's version by the crate's tests).
header="$root/include/sitefile.h"
version_part() {
  sed -n "s/^#define SITEFILE_VERSION_$1 \([0-9][0-9]*\)$/\1/p" "$header"
}
version="$(version_part MAJOR).$(version_part MINOR).$(version_part PATCH)"
case "$version" in
  [0-9]*.[0-9]*.[0-9]*) ;;
  *) echo "install-ffi.sh: no SITEFILE_VERSION_* macros in $header" >&2; exit 1 ;;
esac

mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
install -d "$prefix/include" "$prefix/lib/pkgconfig"
install -m 0644 "$header" "$prefix/include/sitefile.h"
install -m 0755 "$from/libsitefile.so" "$prefix/lib/libsitefile.so"
install -m 0644 "$from/libsitefile.a" "$prefix/lib/libsitefile.a"
sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" "$root/ffi/sitefile.pc.in" \
  >"$prefix/lib/pkgconfig/sitefile.pc"
chmod 0644 "$prefix/lib/pkgconfig/sitefile.pc"
echo "installed sitefile $version under $prefix"
