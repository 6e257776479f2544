#!/usr/bin/env bash
# The C ABI's checks beyond the workspace's `cargo test` (which already compiles and runs the C
# test programs, the install test and the examples): installs the system tools they need when
# missing (valgrind, pkg-config, make, a C compiler, cJSON for the conformance runner; Debian,
# as root or with passwordless sudo), then
#   1. runs the C programs under valgrind (`cargo test --workspace --test valgrind`), linked
#      against the release library a host ships (the test runs `cargo build --release -p
#      sitefile-ffi`, which step 3's install then finds built), plus the debug library for the
#      "possibly lost" check;
#   2. runs the threads program under ThreadSanitizer (`cargo test --workspace --test tsan`,
#      which installs Debian's rustc-web, cargo-web, rust-web-src and libclang-rt-19-dev);
#   3. installs a release build with scripts/install-ffi.sh to a prefix under target/ and builds
#      and runs examples/c-host against it with its Makefile and pkg-config, as a user would.
# Called from scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/need.sh
source scripts/need.sh

need valgrind valgrind
need pkg-config pkgconf
need make make
need cc gcc
need_lib libcjson libcjson-dev

echo "ffi.sh: the C programs under valgrind (the release library, and the debug one)"
# --workspace: the same features as the test run before, so its build is reused, not redone.
cargo test --workspace --locked --test valgrind

echo "ffi.sh: the threads program under ThreadSanitizer (std instrumented too)"
cargo test --workspace --locked --test tsan

echo "ffi.sh: a release install, and examples/c-host built against it with pkg-config"
prefix="$PWD/target/ffi-install"
rm -rf "$prefix"
bash scripts/install-ffi.sh "$prefix"
exe="$PWD/target/ffi-c-host"
rm -f "$exe"
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" make -s -C examples/c-host OUT="$exe"
page=$(cd examples/c-host && LD_LIBRARY_PATH="$prefix/lib" "$exe" 2>/dev/null)
case "$page" in
  '{"page":"pages-category",'*) echo "ffi.sh: c-host printed the pages-category page" ;;
  *) echo "ffi.sh: c-host did not print the pages-category page:" >&2; echo "$page" >&2; exit 1 ;;
esac
