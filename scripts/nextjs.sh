#!/usr/bin/env bash
# examples/nextjs end to end: install the package into the example as a real directory (its
# .npmrc sets install-links), `next build` (Next 16, Turbopack), `next start` on a loopback
# port, then tests/nextjs/*.test.js over HTTP. The server is stopped by the pid of
# next/dist/bin/next whatever happens; any failure fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export NEXT_TELEMETRY_DISABLED=1 NEXT_IGNORE_INCORRECT_LOCKFILE=1

# The package as a user installs it: compiled TypeScript and the addon (scripts/node.sh builds
# the same; both are quick when nothing changed).
if [ ! -d node_modules/@napi-rs/cli ]; then npm install --no-audit --no-fund --loglevel=error; fi
npx napi build --platform --manifest-path node/Cargo.toml --output-dir node --package-json-path package.json
npx tsc -p tsconfig.json

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
rm -rf .next
node node_modules/next/dist/bin/next build

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
token=$(node -e 'console.log(require("crypto").randomBytes(16).toString("hex"))')
log=$(mktemp)
PLATFORM_RELEASE_RELOAD_TOKEN=$token NODE_ENV=production \
  node node_modules/next/dist/bin/next start -H 127.0.0.1 -p "$port" >"$log" 2>&1 &
server=$!
stop() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  rm -f "$log"
}
trap stop EXIT

url="http://127.0.0.1:$port"
for _ in $(seq 1 150); do
  if curl -fsS -o /dev/null "$url/platform/_liveness" 2>/dev/null; then break; fi
  if ! kill -0 "$server" 2>/dev/null; then
    echo "next start exited:" >&2; cat "$log" >&2; exit 1
  fi
  sleep 0.2
done
curl -fsS -o /dev/null "$url/platform/_liveness" || { echo "next start did not answer on $url:" >&2; cat "$log" >&2; exit 1; }

cd "$root"
status=0
SITEFILE_NEXT_URL=$url PLATFORM_RELEASE_RELOAD_TOKEN=$token node --test tests/nextjs/ || status=$?
if [ "$status" -ne 0 ]; then echo "--- next start log" >&2; cat "$log" >&2; fi
exit "$status"
