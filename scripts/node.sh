#!/usr/bin/env bash
# The npm package `sitefile`: install its tools, build the addon (debug) with the generated
# loader and typings, fail when those differ from the committed ones, compile the TypeScript
# and run the `node --test` suites on the machine's Node (20) and on Node 24.
set -euo pipefail
cd "$(dirname "$0")/.."


# shellcheck source=scripts/npm.sh
source scripts/npm.sh
npm_install_locked .

npx napi build --platform --manifest-path node/Cargo.toml --output-dir node \
  --package-json-path package.json
git diff --exit-code -- node/index.js node/index.d.ts || {
  echo "node/index.js or node/index.d.ts is stale: commit what 'napi build' generated" >&2
  exit 1
}

npx tsc -p tsconfig.json

# tests/node/generate.test.js compares the generator's bundle with the Rust CLI's
# (`sitefile bundle`); quick when scripts/test.sh has built the workspace already.
cargo build -p sitefile-server --bin sitefile --locked

echo "node --test on $(node --version)"
node --test tests/node/*.test.js

node24=$(node_of "$NODE24_VERSION")
echo "node --test on $("$node24" --version)"
"$node24" --test tests/node/*.test.js
