#!/usr/bin/env bash
# examples/nextjs end to end: install the package into the example as a real directory (its
# .npmrc sets install-links), `npx sitefile generate` there, `next build` (Next 16 with
# Turbopack and with webpack, then Next 15), `next start` on a loopback port, then
# tests/nextjs/http.test.js over HTTP and tests/nextjs/browser.test.js in
# Debian's Chromium driven by playwright-core (installed when missing; screenshots in
# target/nextjs/<bundler>/).
# The server is stopped by the pid of next/dist/bin/next whatever happens; any failure fails
# the script, nothing is skipped. SITEFILE_NEXT_BUILDS (space-separated: turbopack, webpack,
# next15; default all three) picks the builds while iterating.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export NEXT_TELEMETRY_DISABLED=1 NEXT_IGNORE_INCORRECT_LOCKFILE=1
PLAYWRIGHT_VERSION=1.65.1
PLAYWRIGHT_DIR=target/playwright
# The spec's Next.js runtime requirement is Node 24 or later: the app is built and served on
# Node 24 from the npm `node` package (as scripts/node.sh installs it); tests run on the
# machine's Node.
NEXT15_VERSION=15.5.29
SITEFILE_NEXT_BUILDS=${SITEFILE_NEXT_BUILDS:-turbopack webpack next15}
for build in $SITEFILE_NEXT_BUILDS; do
  case $build in
    turbopack | webpack | next15) ;;
    *) echo "SITEFILE_NEXT_BUILDS: unknown build $build (turbopack, webpack, next15)" >&2; exit 2 ;;
  esac
done
selected() { [[ " $SITEFILE_NEXT_BUILDS " == *" $1 "* ]]; }

# shellcheck source=scripts/need.sh
source scripts/need.sh
need chromium chromium
need curl curl
playwright="$root/$PLAYWRIGHT_DIR/node_modules/playwright-core"
if [ "$(node -p "try{require('$playwright/package.json').version}catch{''}")" != "$PLAYWRIGHT_VERSION" ]; then
  npm install --prefix "$PLAYWRIGHT_DIR" --no-save --no-audit --no-fund --loglevel=error \
    "playwright-core@$PLAYWRIGHT_VERSION"
fi

# The package as a user installs it: compiled TypeScript and the addon (scripts/node.sh builds
# the same; both are quick when nothing changed).
if [ ! -d node_modules/@napi-rs/cli ]; then npm install --no-audit --no-fund --loglevel=error; fi
npx napi build --platform --manifest-path node/Cargo.toml --output-dir node --package-json-path package.json
npx tsc -p tsconfig.json

# shellcheck source=scripts/npm.sh
source scripts/npm.sh
node24=$(node_of "$NODE24_VERSION")

cd examples/nextjs
# `npm ci` refuses lockfiles written here (toolchain notes); `npm install` keeps this one as is.
# The package is reinstalled every run: install-links copies it, so a rebuilt one is not seen.
rm -rf node_modules/sitefile
npm install --no-audit --no-fund --loglevel=error
git -C "$root" diff --exit-code -- examples/nextjs/package-lock.json || {
  echo "npm install changed examples/nextjs/package-lock.json: commit it" >&2
  exit 1
}
[ -d node_modules/sitefile ] && [ ! -L node_modules/sitefile ] || {
  echo "node_modules/sitefile must be a real directory for Next to load the addon" >&2
  exit 1
}
# The generator, as a user runs it before building: the schema, the section registry and the
# content bundle. The committed schema and registry must be what it writes.
npx sitefile generate
git -C "$root" diff --exit-code -- examples/nextjs/.platform/meta.gen.json examples/nextjs/sections.gen.ts || {
  echo "npx sitefile generate changed the example's generated files: commit them" >&2
  exit 1
}
server=""
log=""
stop() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    server=""
  fi
  if [ -n "$log" ]; then rm -f "$log"; fi
}
trap stop EXIT

# build_and_test BUNDLER DEPLOY [BUILD-ARGS...]: a clean `next build` (DEPLOY `seeded`: with
# PLATFORM_SEEDED_DEPLOY set, so `fastDeploy: "auto"` keeps the content out of the server
# output; `bundled`: without it), `next start` on a free loopback port, a page as the first
# request, the HTTP and browser tests against it, then the server stopped.
build_and_test() {
  local bundler=$1 deploy=$2
  shift 2
  echo "=== examples/nextjs with $bundler ($deploy content)"
  rm -rf .next
  if [ "$deploy" = seeded ]; then
    PLATFORM_SEEDED_DEPLOY=1 "$node24" node_modules/next/dist/bin/next build "$@"
  else
    env -u PLATFORM_SEEDED_DEPLOY "$node24" node_modules/next/dist/bin/next build "$@"
  fi
  SITEFILE_NEXT_APP=$PWD SITEFILE_NEXT_DEPLOY=$deploy node --test "$root/tests/nextjs/output.test.js"
  local port token url status=0
  port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  token=$(node -e 'console.log(require("crypto").randomBytes(16).toString("hex"))')
  log=$(mktemp)
  url="http://127.0.0.1:$port"
  # Analytics on, loading from the app's own origin (the tests check the tag; the script is a
  # 404); drafts allowed on the address the tests use, fetched from loopback (the HTTP test
  # serves one).
  PLATFORM_RELEASE_RELOAD_TOKEN=$token NODE_ENV=production PLATFORM_ANALYTICS_ENABLED=true \
    PLATFORM_ALLOWED_PREVIEW_HOSTS=127.0.0.1:$port PLATFORM_PREVIEW_API_DOMAINS=127.0.0.1 \
    PLATFORM_ANALYTICS_ORIGIN=$url PLATFORM_ANALYTICS_SITE_KEY=example-key \
    "$node24" node_modules/next/dist/bin/next start -H 127.0.0.1 -p "$port" >"$log" 2>&1 &
  server=$!
  # Wait for the port without an HTTP request: the first request must be a visitor's.
  for _ in $(seq 1 150); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    if ! kill -0 "$server" 2>/dev/null; then
      echo "next start ($bundler) exited:" >&2; cat "$log" >&2; exit 1
    fi
    sleep 0.2
  done
  # The first request after start is a page, through the draft middleware, as on a fresh
  # server in production: the middleware's bundle sets the site up first, and the page must
  # still render its own (client) components. The tests below check the page and hydrate it.
  first=$(curl -sS -o /dev/null -w '%{http_code}' "$url/") || {
    echo "next start ($bundler) did not answer on $url:" >&2; cat "$log" >&2; exit 1
  }
  [ "$first" = 200 ] || {
    echo "the first request after start (GET /, through the middleware) answered $first:" >&2; cat "$log" >&2; exit 1
  }
  SITEFILE_NEXT_URL=$url PLATFORM_RELEASE_RELOAD_TOKEN=$token \
    node --test "$root/tests/nextjs/http.test.js" || status=$?
  if [ "$status" -eq 0 ]; then
    SITEFILE_NEXT_URL=$url SITEFILE_PLAYWRIGHT=$playwright CHROMIUM=$(command -v chromium) \
      SITEFILE_SHOTS="$root/target/nextjs/$bundler" \
      node --test "$root/tests/nextjs/browser.test.js" || status=$?
  fi
  if [ "$status" -ne 0 ]; then
    echo "--- next start log ($bundler)" >&2; cat "$log" >&2
    exit "$status"
  fi
  stop
}

# Next 16 builds with Turbopack by default; `--webpack` checks the wrapper's webpack side, as
# a seeded deployment's build (the server still reads .platform/blocks from the app's
# directory at run time, so every check below holds).
if selected turbopack; then build_and_test turbopack bundled; fi
if selected webpack; then build_and_test webpack seeded --webpack; fi
rm -rf .next
selected next15 || exit 0

# Next 15 (webpack, its default): the same app in a copy under target/, with next@15 installed
# over the committed lockfile's other packages (not saved anywhere).
next15="$root/target/nextjs-next15"
mkdir -p "$next15"
find "$next15" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
tar --exclude=./node_modules --exclude=./.next -cf - . | tar -xf - -C "$next15"
cd "$next15"
sed -i "s#\"file:../..\"#\"file:$root\"#" package.json
rm -rf node_modules/sitefile
npm install --no-save --no-audit --no-fund --loglevel=error "next@$NEXT15_VERSION"
[ "$(node -p 'require("next/package.json").version')" = "$NEXT15_VERSION" ] || {
  echo "next@$NEXT15_VERSION was not installed in $next15" >&2
  exit 1
}
build_and_test next15 bundled
