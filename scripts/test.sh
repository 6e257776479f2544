#!/usr/bin/env bash
# The whole test suite: every crate's tests, conformance cases, the corpus test and the npm
# package's build and `node --test` suites (scripts/node.sh), the workspace API under the real MCP
# SDK client (scripts/workspace-clients.sh), the C ABI (scripts/ffi.sh) and the Next.js app
# (scripts/nextjs.sh).
# Starts whatever services the tests need (see scripts/services.sh) and stops them afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f scripts/services.sh ]; then
  # shellcheck source=/dev/null
  source scripts/services.sh
  services_start
  trap services_stop EXIT
fi
if command -v cargo-nextest >/dev/null 2>&1; then
  cargo nextest run --workspace --locked --no-fail-fast
  cargo test --workspace --locked --doc --exclude sitefile-node  # a napi cdylib has no doc tests
else
  cargo test --workspace --locked
fi
bash ./scripts/node.sh
bash ./scripts/workspace-clients.sh
bash ./scripts/ffi.sh
bash ./scripts/nextjs.sh
