#!/usr/bin/env bash
# The whole test suite: every crate's tests, conformance cases, the corpus test and the npm
# package's build and `node --test` suites (scripts/node.sh), the workspace API under the real MCP
# SDK clients (scripts/workspace-clients.sh) and the official MCP conformance suite
# (scripts/mcp-conformance.sh), the C ABI (scripts/ffi.sh), the book (scripts/docs.sh) and the
# Next.js app (scripts/nextjs.sh), then the npm release built and rehearsed on a throwaway registry
# (scripts/release.sh).
# Starts whatever services the tests need (see scripts/services.sh) and stops them afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f scripts/services.sh ]; then
  # shellcheck source=/dev/null
  source scripts/services.sh
  services_start
  trap services_stop EXIT
fi
started=$(date +%s)
ran=()
# step NAME COMMAND...: runs one part of the suite (any failure stops the run) and notes its time.
step() {
  local name=$1 start
  shift
  start=$(date +%s)
  "$@"
  ran+=("$name $(($(date +%s) - start)) s")
}
if command -v cargo-nextest >/dev/null 2>&1; then
  step "rust" cargo nextest run --workspace --locked --no-fail-fast
  step "doctests" cargo test --workspace --locked --doc --exclude sitefile-node  # a napi cdylib has no doc tests
else
  step "rust" cargo test --workspace --locked
fi
step "node" bash ./scripts/node.sh
step "workspace-clients" bash ./scripts/workspace-clients.sh
step "mcp-conformance" bash ./scripts/mcp-conformance.sh
step "c" bash ./scripts/ffi.sh
step "docs" bash ./scripts/docs.sh
step "nextjs" bash ./scripts/nextjs.sh
step "release" bash ./scripts/release.sh
summary=$(printf ', %s' "${ran[@]}")
echo "scripts/test.sh: every part passed in $(($(date +%s) - started)) s (${summary:2})"
