#!/usr/bin/env bash
# The npm release, built and rehearsed. Builds the packages of a release (release profile,
# stripped): the main package `sitefile`, this machine's platform package
# (`sitefile-linux-x64-gnu`: the addon and the `sitefile` program) and the WebAssembly fallback
# (`sitefile-wasm32-wasi`); packs each twice (reproducible, within its size budget); runs the
# Node suites on the WebAssembly engine; then rehearses a release:
#   - a throwaway registry (verdaccio, pinned in scripts/release/registry/) on loopback, every
#     package published to it;
#   - in a fresh directory, with no cargo, rustc or ~/.cargo on the PATH: a Next 16 App Router
#     app installs `sitefile next react react-dom` from it, wired with the files the book's
#     Next.js page has a reader write (docs/examples/getting-started/nextjs/), `npx sitefile
#     generate`, `next build`,
#     `next start`, checked over HTTP and in Chromium (tests/release/app.test.js);
#   - the teammate: a copy of the app without node_modules, a plain `npm install`, built and
#     checked again;
#   - the WebAssembly fallback: the same app built and served with the native addon out of
#     reach (NAPI_RS_FORCE_WASI=error), checked again; its resolveDecoPage speed beside the
#     native one on the corpus (benches/node/resolve.bench.js, a report, not a test);
#   - `npx sitefile serve` of the example site from the installed package, its first screen
#     checked in Chromium (tests/release/serve.test.js).
# With --all it also cross-builds linux-x64-musl, linux-arm64-gnu and linux-arm64-musl,
# publishes them too and loads the arm64 addon in an arm64 Node under qemu-user-static
# (scripts/release/cross.sh). Packages under target/release-npm/, the rehearsal's app under
# $TMPDIR/sitefile-release-rehearsal (or SITEFILE_REHEARSAL_DIR); a summary at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export NEXT_TELEMETRY_DISABLED=1 NEXT_IGNORE_INCORRECT_LOCKFILE=1 npm_config_update_notifier=false

all=0
case "${1:-}" in
  --all) all=1 ;;
  "") ;;
  *) echo "usage: scripts/release.sh [--all]" >&2; exit 2 ;;
esac

NEXT_VERSION=16.4.6
REACT_VERSION=19.3.1
PLAYWRIGHT_VERSION=1.65.1
HOST=$(rustc -vV | sed -n 's/^host: //p')
WASI=wasm32-wasip1-threads
CROSS="x86_64-unknown-linux-musl aarch64-unknown-linux-gnu aarch64-unknown-linux-musl"
out=$root/target/release-npm
build=$out/build
# Outside the repository: the app must be a fresh one, with no lockfile above it.
work=${SITEFILE_REHEARSAL_DIR:-${TMPDIR:-/tmp}/sitefile-release-rehearsal}
mkdir -p "$build"
summary=()
note() { summary+=("$*"); echo "=== $*"; }
seconds() { echo $(($(date +%s) - $1)); }

# shellcheck source=scripts/need.sh
source scripts/need.sh
need chromium chromium
need curl curl
if [ ! -d node_modules/@napi-rs/cli ] || [ ! -d node_modules/emnapi ]; then
  npm install --no-audit --no-fund --loglevel=error
fi
# shellcheck source=scripts/npm.sh
source scripts/npm.sh
node24=$(node_of "$NODE24_VERSION")
playwright=$root/target/playwright/node_modules/playwright-core
if [ "$(node -p "try{require('$playwright/package.json').version}catch{''}")" != "$PLAYWRIGHT_VERSION" ]; then
  npm install --prefix target/playwright --no-save --no-audit --no-fund --loglevel=error \
    "playwright-core@$PLAYWRIGHT_VERSION"
fi

# --- Build: each artifact once.
targets="$HOST $WASI"
[ "$all" = 1 ] && targets="$targets $CROSS"
for target in $targets; do
  rustup target list --installed | grep -qx "$target" || rustup target add "$target" || {
    echo "release: the Rust target $target could not be installed (rustup target add $target)" >&2
    exit 1
  }
done
start=$(date +%s)
npx napi build --platform --release --target "$WASI" --manifest-path node/Cargo.toml \
  --package-json-path package.json --output-dir "$build/$WASI" --no-js --dts ignored.d.ts
note "built $WASI in $(seconds "$start") s"
# build_native TARGET: the addon and the `sitefile` program; cross targets through zig
# (scripts/release/cross.sh).
build_native() {
  local target=$1 start cargo_build=build flags=() dir=target/release
  # The host's build is the plain `cargo build --release` one (target/release/sitefile).
  if [ "$target" != "$HOST" ]; then cargo_build=zigbuild flags=(--target "$target") dir=target/$target/release; fi
  start=$(date +%s)
  npx napi build --platform --release "${flags[@]}" $([ "$target" != "$HOST" ] && echo --cross-compile) \
    --manifest-path node/Cargo.toml --package-json-path package.json --output-dir "$build/$target" \
    --no-js --dts ignored.d.ts
  cargo "$cargo_build" --release --locked -p sitefile-server --bin sitefile "${flags[@]}"
  cp "$dir/sitefile" "$build/$target/sitefile"
  note "built $target (addon and program) in $(seconds "$start") s"
}
if [ "$all" = 1 ]; then
  # shellcheck source=scripts/release/cross.sh
  source scripts/release/cross.sh
  cross_setup
fi
for target in $HOST $([ "$all" = 1 ] && echo "$CROSS"); do build_native "$target"; done
npx tsc -p tsconfig.json

# --- Pack.
# shellcheck disable=SC2086
node scripts/release/pack.js "$build" "$out/dist" $targets
tarball() { node -p "require('$out/dist/packages.json').find((p) => p.name === '$1').tarball"; }

# --- The Node suites on the WebAssembly engine (the loader's own fallback files beside it).
for file in sitefile.wasm32-wasi.wasm sitefile.wasi.cjs wasi-worker.mjs; do
  cp "$build/$WASI/$file" "node/$file"
done
start=$(date +%s)
NAPI_RS_FORCE_WASI=error node --test tests/node/*.test.js
note "node --test on the WebAssembly engine passed in $(seconds "$start") s"

# --- The registry.
registry_dir=$out/registry
rm -rf "$registry_dir" "$work"
mkdir -p "$registry_dir" "$work"
tool=$root/target/verdaccio
if ! cmp -s scripts/release/registry/package-lock.json "$tool/package-lock.json" 2>/dev/null; then
  mkdir -p "$tool"
  cp scripts/release/registry/package.json scripts/release/registry/package-lock.json "$tool/"
  (cd "$tool" && npm install --no-audit --no-fund --loglevel=error)
fi
sed "s#UPSTREAM_REGISTRY#$(npm config get registry)#" scripts/release/verdaccio.yaml >"$registry_dir/config.yaml"
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
registry=http://127.0.0.1:$port/
# The servers a step starts (stopped at its end) and the registry (stopped at exit).
pids=()
stop_all() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}
"$node24" "$tool/node_modules/verdaccio/bin/verdaccio" --config "$registry_dir/config.yaml" \
  --listen "127.0.0.1:$port" >"$registry_dir/log" 2>&1 &
registry_pid=$!
trap 'stop_all; kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -sf -o /dev/null "$registry-/ping" && break; sleep 0.2; done
token=$(curl -sf -X PUT -H 'content-type: application/json' \
  -d '{"name":"rehearsal","password":"rehearsal-password"}' \
  "$registry-/user/org.couchdb.user:rehearsal" | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).token')
npmrc=$registry_dir/npmrc
printf 'registry=%s\n//127.0.0.1:%s/:_authToken=%s\n' "$registry" "$port" "$token" >"$npmrc"
for name in $(node -p "require('$out/dist/packages.json').map((p) => p.name).join(' ')"); do
  NPM_CONFIG_USERCONFIG=$npmrc npm publish "$(tarball "$name")" --registry "$registry" --loglevel=error >/dev/null
done
note "published $(node -p "require('$out/dist/packages.json').length") packages to the rehearsal registry"

# --- A user's machine: no Rust anywhere, a home of its own, the registry in the app's .npmrc.
# The PATH is Node 24 and a directory of links to the system's programs less every Rust tool
# (Debian's cargo and rustc may be in /usr/bin: scripts/ffi.sh installs them for TSan).
user_bin=$work/bin
mkdir -p "$user_bin"
for program in /usr/local/bin/* /usr/bin/* /bin/*; do
  name=$(basename "$program")
  case $name in cargo* | rustc* | rustdoc* | rustup* | rust-* | rls | clippy-driver) continue ;; esac
  [ -e "$user_bin/$name" ] || ln -s "$program" "$user_bin/$name"
done
user_path=$(dirname "$node24"):$user_bin
as_user() {
  env -i HOME="$work/home" PATH="$user_path" NEXT_TELEMETRY_DISABLED=1 \
    NEXT_IGNORE_INCORRECT_LOCKFILE=1 npm_config_update_notifier=false "$@"
}
mkdir -p "$work/home"
if as_user sh -c 'command -v cargo || command -v rustc || [ -d "$HOME/.cargo" ]'; then
  echo "release: the user's PATH still reaches cargo or rustc" >&2
  exit 1
fi
app=$work/app
mkdir -p "$app"
printf '{\n  "name": "my-store",\n  "private": true\n}\n' >"$app/package.json"
printf 'registry=%s\n' "$registry" >"$app/.npmrc"
start=$(date +%s)
(cd "$app" && as_user npm install --no-audit --no-fund --loglevel=error \
  sitefile "next@$NEXT_VERSION" "react@$REACT_VERSION" "react-dom@$REACT_VERSION")
(cd "$app" && as_user npm install --no-audit --no-fund --loglevel=error -D \
  typescript@5.9.3 @types/react@19.3.0 @types/react-dom@19.3.0 @types/node@24)
note "npm install of the fresh app (sitefile, next, react, typescript) took $(seconds "$start") s"
host_package=$(node -p "require('$out/dist/packages.json')[1].name")
[ -d "$app/node_modules/$host_package" ] || { echo "release: $host_package was not installed" >&2; exit 1; }
# The user's own content and sections (the example's), and a page with a device variant.
cp -r examples/nextjs/sections examples/nextjs/loaders examples/nextjs/public "$app/"
mkdir -p "$app/.platform/blocks"
cp examples/nextjs/.platform/blocks/*.json tests/release/blocks/*.json "$app/.platform/blocks/"
# The files the book's Next.js page has a reader write (docs/src/getting-started/nextjs.md).
cp -r docs/examples/getting-started/nextjs/. "$app/"
for file in "app/layout.tsx" "app/platform/[[...platform]]/route.ts" "app/platform/preview/[[...path]]/page.tsx"; do
  mkdir -p "$app/$(dirname "$file")"
  cp "examples/nextjs/$file" "$app/$file"
done

# serve_and_check NAME [ENV...]: `next build` and `next start` in $app with ENV, the app test
# over HTTP and in Chromium, then the server stopped.
serve_and_check() {
  local name=$1 start port url log
  shift
  start=$(date +%s)
  (cd "$app" && as_user "$@" npx sitefile generate 2>"$work/$name-generate.log") || {
    cat "$work/$name-generate.log" >&2; exit 1
  }
  rm -rf "$app/.next"
  (cd "$app" && as_user "$@" npx next build >"$work/$name-build.log" 2>&1) || {
    cat "$work/$name-build.log" >&2; exit 1
  }
  note "$name: cold next build took $(seconds "$start") s"
  port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  url=http://127.0.0.1:$port
  log=$work/$name-start.log
  (cd "$app" && exec env -i HOME="$work/home" PATH="$user_path" NODE_ENV=production \
    PLATFORM_RELEASE_RELOAD_TOKEN=rehearsal-token "$@" \
    "$node24" node_modules/next/dist/bin/next start -H 127.0.0.1 -p "$port") >"$log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 150); do curl -s -o /dev/null "$url/" && break; sleep 0.2; done
  SITEFILE_APP_URL=$url PLATFORM_RELEASE_RELOAD_TOKEN=rehearsal-token SITEFILE_APP_ENGINE=$name \
    SITEFILE_PLAYWRIGHT=$playwright CHROMIUM=$(command -v chromium) \
    node --test tests/release/app.test.js || { echo "--- next start log ($name)" >&2; cat "$log" >&2; exit 1; }
  # Which engine served: Node warns when the WebAssembly one loads.
  if [[ " $* " == *" NAPI_RS_FORCE_WASI=error "* ]]; then
    grep -q "WASI is an experimental feature" "$log" || { echo "release: $name did not run on the WebAssembly engine" >&2; exit 1; }
  elif grep -q "WASI is an experimental feature" "$log"; then
    echo "release: $name ran on the WebAssembly engine, not the native addon" >&2; exit 1
  fi
  stop_all
  pids=()
}
serve_and_check native
# The page a fresh app ships conflicts with the catch-all page the book's Next.js page adds.
[ ! -e "$app/app/page.tsx" ] || { echo "release: app/page.tsx would shadow the catch-all page" >&2; exit 1; }

# The teammate: the app as committed (no node_modules, no build), a plain npm install.
teammate=$work/teammate
mkdir -p "$teammate"
tar -C "$app" --exclude=./node_modules --exclude=./.next -cf - . | tar -xf - -C "$teammate"
start=$(date +%s)
(cd "$teammate" && as_user npm install --no-audit --no-fund --loglevel=error)
note "teammate: npm install took $(seconds "$start") s"
app=$teammate serve_and_check teammate
# The WebAssembly engine, the native addon out of reach.
app=$teammate serve_and_check wasi NAPI_RS_FORCE_WASI=error

# The fallback's speed beside the native addon's, through the installed package.
corpus=${SITEFILE_CORPUS:-$root/../shared/corpus}
if [ -f "$corpus/urls.txt" ]; then
  for engine in native wasi; do
    echo "--- resolveDecoPage through the installed package, $engine engine"
    env ROUNDS="${SITEFILE_RELEASE_BENCH_ROUNDS:-20}" SITEFILE_PACKAGE="$teammate/node_modules/sitefile" \
      SITEFILE_CORPUS="$corpus" $([ "$engine" = wasi ] && echo NAPI_RS_FORCE_WASI=error) \
      "$node24" --expose-gc benches/node/resolve.bench.js --no-memory | tee "$work/bench-$engine.txt"
  done
  note "resolveDecoPage medians (µs, native then WebAssembly): $(node scripts/release/bench-summary.js "$work/bench-native.txt" "$work/bench-wasi.txt")"
elif [ "${CI:-}" = true ]; then
  echo "release: no corpus at $corpus" >&2
  exit 1
fi

# `npx sitefile serve` of the example site, from the installed package.
site=$work/storefront
cp -r examples/storefront "$site"
log=$work/serve.log
(cd "$app" && exec env -i HOME="$work/home" PATH="$user_path" npx sitefile serve "$site" --listen 127.0.0.1:0) >"$log" 2>&1 &
pids+=($!)
serve_url=""
for _ in $(seq 1 100); do
  serve_url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$log" | head -1 || true)
  [ -n "$serve_url" ] && break
  sleep 0.2
done
[ -n "$serve_url" ] || { echo "release: npx sitefile serve did not start:" >&2; cat "$log" >&2; exit 1; }
status=$(curl -s -o "$work/serve-home.html" -w '%{http_code}' "$serve_url/")
[ "$status" = 200 ] && grep -q '<html' "$work/serve-home.html" || {
  echo "release: npx sitefile serve answered $status for /" >&2; cat "$log" >&2; exit 1
}
curl -sf "$serve_url/?asJson" | node -e 'const p=JSON.parse(require("fs").readFileSync(0,"utf8")); if(!Array.isArray(p.props.sections)) process.exit(1)' || {
  echo "release: npx sitefile serve gave no page JSON for /?asJson" >&2; exit 1
}
SITEFILE_SERVE_URL=$serve_url SITEFILE_PLAYWRIGHT=$playwright CHROMIUM=$(command -v chromium) \
  node --test tests/release/serve.test.js || { cat "$log" >&2; exit 1; }
stop_all
note "npx sitefile serve answered the example's pages and page JSON; its first screen passed in Chromium"

# --- A Worker user's machine: examples/worker installed from the registry, bundled as `wrangler
# deploy` bundles it (`--dry-run`), run in workerd through Miniflare (pinned in
# scripts/release/runtimes/): the package's WebAssembly engine behind `createDecoWorkerEntry`.
tools=$root/target/release-runtimes
if ! cmp -s scripts/release/runtimes/package-lock.json "$tools/package-lock.json" 2>/dev/null; then
  mkdir -p "$tools"
  cp scripts/release/runtimes/package.json scripts/release/runtimes/package-lock.json "$tools/"
  (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error)
fi
worker=$work/worker
mkdir -p "$worker"
tar -C examples/worker --exclude=./node_modules --exclude=./.wrangler --exclude=./dist \
  --exclude=./sections.gen.ts --exclude=./.platform/blocks.gen.json --exclude=./.platform/meta.gen.json -cf - . |
  tar -xf - -C "$worker"
# The example depends on the repository (`file:../..`); a user's app on the published version.
node -e 'const f=process.argv[1], p=JSON.parse(require("fs").readFileSync(f, "utf8")); p.dependencies.sitefile=process.argv[2]; require("fs").writeFileSync(f, JSON.stringify(p, null, 2) + "\n")' \
  "$worker/package.json" "$(node -p "require('./package.json').version")"
printf 'registry=%s\n' "$registry" >"$worker/.npmrc"
start=$(date +%s)
(cd "$worker" && as_user npm install --no-audit --no-fund --loglevel=error)
note "worker: npm install (sitefile, hono, react, wrangler) took $(seconds "$start") s"
# The harnesses beside it: the clock (tests/release/worker/clock.js) and the conformance
# suites' runner (the example is "type": "module": the CommonJS runner goes in as .cjs).
mkdir -p "$worker/test"
cp tests/release/worker/clock.js tests/release/worker/conformance.js "$worker/test/"
cp tests/node/conformance-runner.js "$worker/test/conformance-runner.cjs"
(cd "$worker" && as_user WRANGLER_SEND_METRICS=false sh -c 'npm run --silent build &&
  npx wrangler deploy --dry-run --outdir dist &&
  npx wrangler deploy --dry-run --outdir dist-clock --name clock test/clock.js &&
  npx wrangler deploy --dry-run --outdir dist-conformance --name conformance test/conformance.js') \
  >"$work/worker-build.log" 2>&1 || { cat "$work/worker-build.log" >&2; exit 1; }
ls "$worker"/dist/*.wasm >/dev/null 2>&1 || { echo "release: the Worker's bundle holds no WebAssembly engine" >&2; exit 1; }
! ls "$worker"/dist/*.node >/dev/null 2>&1 || { echo "release: the Worker's bundle holds a native addon" >&2; exit 1; }
upload=$(grep -o 'Total Upload: .*' "$work/worker-build.log" | head -1)
SITEFILE_WORKER_BUNDLE=$worker/dist SITEFILE_CLOCK_BUNDLE=$worker/dist-clock \
  SITEFILE_CONFORMANCE_BUNDLE=$worker/dist-conformance SITEFILE_MINIFLARE=$tools/node_modules/miniflare \
  "$node24" --test tests/release/worker.test.js 2>&1 | tee "$work/worker-test.log"
# workerd reports an error thrown outside a request (a finalizer's timer) only on its own output.
if grep -E "Disallowed operation|Uncaught" "$work/worker-test.log"; then
  echo "release: the Worker threw outside a request (above)" >&2
  exit 1
fi
note "worker: examples/worker from the registry served in workerd (pages, admin, purge, MISS/HIT/STALE on the Cache API, Fast Deploy on KV across isolates) and the conformance suites passed there; ${upload:-no upload size printed}"

# --- The book's getting-started paths of npm users, run as a reader runs them: a fresh Next.js
# app and a fresh Worker, from `npm init` to answered requests (docs/examples/getting-started/).
# Every example script marked for the registry (scripts/docs.sh runs the others).
while IFS= read -r script; do
  start=$(date +%s)
  page=$(basename "$script" .sh)
  scratch=$work/getting-started-$page
  mkdir -p "$scratch"
  (cd "$scratch" && as_user npm_config_registry="$registry" SITEFILE_REPO="$root" \
    bash "$root/$script") >"$scratch.log" 2>&1 || {
    cat "$scratch.log" >&2
    exit 1
  }
  note "the book's $page example: its commands passed in $(seconds "$start") s"
done < <(grep -rl --include='*.sh' '^# Run by scripts/release.sh' docs/examples | sort)

# --- Deno (pinned with Miniflare): the teammate's installed package imported by Deno, on its
# native addon (Deno loads Node-API addons with --allow-ffi).
cp tests/release/deno.js "$teammate/deno-check.mjs"
(cd "$teammate" && as_user DENO_NO_UPDATE_CHECK=1 "$tools/node_modules/.bin/deno" run --allow-read \
  --allow-env --allow-ffi --allow-net --allow-sys deno-check.mjs) || {
  echo "release: the package failed in Deno" >&2
  exit 1
}
note "deno $("$tools/node_modules/.bin/deno" --version | head -1 | cut -d' ' -f2): the installed package resolved pages and served them through createDecoWorkerEntry"

if [ "$all" = 1 ]; then cross_check; fi

echo
echo "release rehearsal summary:"
for line in "${summary[@]}"; do echo "  $line"; done
echo "  packages: $(node -p "require('$out/dist/packages.json').map((p) => p.name + ' ' + (p.bytes / 1024).toFixed(0) + ' KB').join(', ')")"
