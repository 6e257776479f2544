#!/usr/bin/env bash
# The npm package `sitefile`: install its tools, build the addon (debug) with the generated
# loader and typings, fail when those differ from the committed ones, compile the TypeScript
# and run the `node --test` suites on the machine's Node (20) and on Node 24.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE24_VERSION=24.21.0
NODE24_DIR=target/node24

# `npm ci` refuses the lockfile here (it lacks non-Linux optional packages the registry does not
# serve); `npm install` respects it and leaves it unchanged.
npm install --no-audit --no-fund --loglevel=error
git diff --exit-code -- package-lock.json || {
  echo "npm install changed package-lock.json: commit it" >&2
  exit 1
}

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

node24="$NODE24_DIR/node_modules/node/bin/node"
if [ ! -x "$node24" ] || [ "$("$node24" --version)" != "v$NODE24_VERSION" ]; then
  npm install --prefix "$NODE24_DIR" --no-save --no-audit --no-fund --loglevel=error \
    "node@$NODE24_VERSION"
fi
echo "node --test on $("$node24" --version)"
"$node24" --test tests/node/*.test.js
