#!/usr/bin/env bash
# Getting started in Rust (docs/src/getting-started/rust.md): a Cargo project beside a checkout
# of sitefile, depending on `sitefile-core` and `sitefile-site-dir` by path, that resolves the
# home page of my-site as a desktop and as a phone and runs its loader. Built offline: the
# workspace's lockfile pins the versions already fetched for it. Run by scripts/docs.sh in a
# scratch directory, with SITEFILE_REPO the repository.
set -euo pipefail
source "$SITEFILE_REPO/docs/examples/harness.bash"
here="$SITEFILE_REPO/docs/examples/getting-started"

# What the reader has: a checkout of sitefile beside the project, and the project's files.
ln -s "$SITEFILE_REPO" sitefile
mkdir -p my-host/src
cp "$here/rust/Cargo.toml" my-host/
cp "$here/rust/src/main.rs" my-host/src/
copy_my_site my-host/my-site
# No network: the versions the workspace locked (and fetched), and a target directory kept
# between runs so only the first one compiles the core.
cp "$SITEFILE_REPO/Cargo.lock" my-host/
export CARGO_NET_OFFLINE=true
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$SITEFILE_REPO/target/docs-getting-started-rust}"

run() {
# ANCHOR: run
cd my-host
cargo run --quiet
# ANCHOR_END: run
}
out=$(run)
expected='[{"title":"Hello, world"},{"title":"Best sellers","products":[{"name":"Product 1","price":10},{"name":"Product 2","price":20}]}]
[{"title":"Hello, phone"},{"title":"Best sellers","products":[{"name":"Product 1","price":10},{"name":"Product 2","price":20}]}]'
expect "what the program printed" "$out" "$expected"
echo "rust.sh: passed"
