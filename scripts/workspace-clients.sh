#!/usr/bin/env bash
# The workspace API driven by real third-party clients over HTTP (tests/workspace-clients):
# install the clients' npm project (failing when its lockfile would change), build the
# `sitefile-workspace` binary, and run its `node --test` suites, which start
# @modelcontextprotocol/server-everything as the upstream and the workspace server on a
# fresh SQLite database (tests/workspace-clients/harness.js).
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/npm.sh
source scripts/npm.sh
npm_install_locked tests/workspace-clients

# --workspace: the features of the test build, so its artifacts are reused.
cargo build --workspace --locked --bin sitefile-workspace
export SITEFILE_WORKSPACE_BIN="$PWD/target/debug/sitefile-workspace"

cd tests/workspace-clients
echo "node --test on $(node --version)"
node --test
