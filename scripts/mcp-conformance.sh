#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# tests/workspace-clients/package.json) against the workspace's MCP endpoints: our reference
# server alone, the connection proxy in front of it, an agent's gateway and `self`, each at the
# 2025-11-25 and 2026-07-28 revisions, every cell checked against its committed
# expected-failures baseline (tests/workspace-clients/conformance/run.mjs says how).
# The suite needs Node 22 or later: it runs on Node 22 from the npm `node` package, installed
# into target/node22 when missing (as scripts/nextjs.sh installs Node 24).
# The workspace server is SITEFILE_WORKSPACE_BIN (default target/debug/sitefile-workspace, as
# scripts/workspace-clients.sh builds it); this script builds nothing.
# Arguments go to run.mjs: `--write-baselines` rewrites the baselines from this run,
# `--cell proxy` (or `--cell proxy-2026-07-28`, repeatable) runs only those cells.
# Output: one line per cell; the suite's logs, checks.json files and the servers' output in
# target/mcp-conformance/.
set -euo pipefail
bin=${SITEFILE_WORKSPACE_BIN:-}
if [ -n "$bin" ]; then bin=$(realpath -m -- "$bin"); fi
cd "$(dirname "$0")/.."
root=$PWD
NODE22_VERSION=22.23.3

# shellcheck source=scripts/npm.sh
source scripts/npm.sh
npm_install_locked tests/workspace-clients
node22=$(node_of "$NODE22_VERSION")

export SITEFILE_WORKSPACE_BIN="${bin:-$root/target/debug/sitefile-workspace}"
[ -x "$SITEFILE_WORKSPACE_BIN" ] || {
  echo "no workspace server at $SITEFILE_WORKSPACE_BIN: build it (cargo build --workspace --locked --bin sitefile-workspace) or set SITEFILE_WORKSPACE_BIN" >&2
  exit 1
}

cd tests/workspace-clients
echo "MCP conformance on $("$node22" --version), $SITEFILE_WORKSPACE_BIN"
exec "$node22" conformance/run.mjs "$@"
