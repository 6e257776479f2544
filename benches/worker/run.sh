#!/usr/bin/env bash
# The Worker benchmark (not in CI), in one run: `resolveDecoPage` per corpus page through the
# native addon and the WebAssembly engine in Node (benches/node/resolve.bench.js), through the
# WebAssembly engine in workerd (bench.js), beside the reference framework's figures; the
# Worker's size and an isolate's cold start. It measures what the release rehearsal installed:
# run `bash scripts/release.sh` first.
#
#   bash benches/worker/run.sh [site ...]      (ROUNDS=20 by default)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
rehearsal=${SITEFILE_REHEARSAL_DIR:-${TMPDIR:-/tmp}/sitefile-release-rehearsal}
[ -d "$rehearsal/worker/node_modules" ] && [ -d "$rehearsal/teammate/node_modules/sitefile" ] || {
  echo "benches/worker/run.sh: no rehearsal at $rehearsal: run bash scripts/release.sh first" >&2
  exit 1
}
# shellcheck source=scripts/npm.sh
source scripts/npm.sh
node24=$(node_of 24.21.0)
out=$root/target/bench-worker
mkdir -p "$out"
export ROUNDS=${ROUNDS:-20} SITEFILE_CORPUS=${SITEFILE_CORPUS:-$root/../shared/corpus}
package=$rehearsal/teammate/node_modules/sitefile
SITEFILE_PACKAGE=$package "$node24" --expose-gc benches/node/resolve.bench.js --no-memory "$@" | tee "$out/native.txt"
NAPI_RS_FORCE_WASI=error SITEFILE_PACKAGE=$package "$node24" --expose-gc benches/node/resolve.bench.js --no-memory "$@" |
  tee "$out/wasi.txt"
SITEFILE_WORKER_APP=$rehearsal/worker SITEFILE_MINIFLARE=$root/target/release-runtimes/node_modules/miniflare \
  "$node24" benches/worker/bench.js "$@" | tee "$out/workerd.txt"
echo
"$node24" benches/worker/summary.js "$out/native.txt" "$out/wasi.txt" "$out/workerd.txt"
