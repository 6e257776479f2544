#!/usr/bin/env bash
# Getting started on Cloudflare Workers (docs/src/getting-started/worker.md): a fresh Worker
# project that installs `sitefile` from the npm registry, gets the page's files (wrangler.toml,
# the Worker entry, its Hono app, two sections, a loader and a page of content), bundles it as
# `wrangler deploy` would, then runs it locally with `npm run dev` (`wrangler dev`) and asks for the home page
# as a desktop (twice: a MISS, then a HIT from the Cache API) and as a phone. No Cloudflare
# account is needed. It needs a registry that serves this checkout's `sitefile` (the release
# rehearsal's); against any other it stops at the first check below.
# Run by scripts/release.sh against its registry.
set -euo pipefail
set -m # `wrangler dev` runs in a process group of its own, stopped as one on exit
export WRANGLER_SEND_METRICS=false npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
example="$SITEFILE_REPO/examples/worker"
here="$SITEFILE_REPO/docs/examples/getting-started"
source "$SITEFILE_REPO/docs/examples/harness.bash"

expect_registry_release
expect_nothing_at http://localhost:8787/

# ANCHOR: install
mkdir my-worker && cd my-worker
npm init -y
npm pkg set type=module scripts.dev="sitefile generate && wrangler dev" \
  scripts.deploy="sitefile generate && wrangler deploy"
npm i sitefile hono react react-dom
npm i -D wrangler typescript @types/react @types/react-dom
# ANCHOR_END: install

# The files the page shows, where it says to put them.
mkdir -p src sections loaders .platform/blocks
cp "$example/wrangler.toml" "$example/tsconfig.json" .
cp "$example/src/worker.ts" "$example/src/app.tsx" src/
cp "$example/sections/Hero.tsx" "$example/sections/ProductShelf.tsx" sections/
cp "$example/loaders/products.ts" loaders/
cp "$here/my-site/.platform/blocks/pages-home.json" .platform/blocks/

# ANCHOR: build
npx sitefile generate
npx wrangler deploy --dry-run --outdir dist
# ANCHOR_END: build
ls dist/*.wasm >/dev/null || fail "the bundle holds no WebAssembly engine"
if ls dist/*.node >/dev/null 2>&1; then fail "the bundle holds a native addon"; fi

dev() {
# ANCHOR: dev
npm run dev
# ANCHOR_END: dev
}
dev >dev.log 2>&1 &
started+=($!)
wait_for http://localhost:8787/api/health 60 dev.log

ask() {
# ANCHOR: ask
curl -s http://localhost:8787/ | grep -o '<h1>[^<]*</h1>'
curl -s -A 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)' http://localhost:8787/ |
  grep -o '<h1>[^<]*</h1>'
# ANCHOR_END: ask
}
out=$(ask)
expect "the home page" "$out" $'<h1>Hello, world</h1>\n<h1>Hello, phone</h1>' dev.log

cache_state() {
# ANCHOR: cache
curl -s -o /dev/null -D - http://localhost:8787/ | grep -i '^x-cache:'
# ANCHOR_END: cache
}
# The desktop copy the first request stored answers the next ones. It is stored under
# waitUntil, so a request may still miss while it is written: ask a few times.
state=""
for _ in $(seq 1 20); do
  state=$(cache_state | tr -d '\r' | tr '[:upper:]' '[:lower:]' || true)
  [ "$state" = "x-cache: hit" ] && break
  sleep 0.2
done
expect "the Cache API's copy" "$state" "x-cache: hit" dev.log
echo "worker.sh: passed"
