#!/usr/bin/env bash
# Getting started on Next.js (docs/src/getting-started/nextjs.md): a fresh App Router app that
# installs `sitefile` from the npm registry, gets the page's files (the set-up, the catch-all
# page, the admin route, the preview page, the root layout, the draft proxy, a page of content,
# two sections and a loader), builds, starts on the default port and answers the home page as a
# desktop and as a phone. It needs a registry that serves this checkout's `sitefile` (the release
# rehearsal's); against any other it stops at the first check below.
# Run by scripts/release.sh against its registry.
set -euo pipefail
set -m # `next start` runs in a process group of its own, stopped as one on exit
export NEXT_TELEMETRY_DISABLED=1 npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
example="$SITEFILE_REPO/examples/nextjs"
here="$SITEFILE_REPO/docs/examples/getting-started"
source "$SITEFILE_REPO/docs/examples/harness.bash"

expect_registry_release
expect_nothing_at http://localhost:3000/

# ANCHOR: install
mkdir my-store && cd my-store
npm init -y
npm pkg delete type
npm i sitefile next react react-dom
npm i -D typescript @types/react @types/react-dom @types/node
# ANCHOR_END: install

# The files the page shows, where it says to put them.
mkdir -p lib sections loaders .platform/blocks "app/[[...slug]]" "app/platform/[[...platform]]" \
  "app/platform/preview/[[...path]]"
cp "$here/nextjs/lib/sitefile.ts" lib/
cp "$here/nextjs/next.config.mjs" "$here/nextjs/proxy.ts" .
cp "$here/nextjs/app/[[...slug]]/page.tsx" "app/[[...slug]]/"
cp "$example/app/layout.tsx" app/
cp "$example/app/platform/[[...platform]]/route.ts" "app/platform/[[...platform]]/"
cp "$example/app/platform/preview/[[...path]]/page.tsx" "app/platform/preview/[[...path]]/"
cp "$example/sections/Hero.tsx" "$example/sections/ProductShelf.tsx" sections/
cp "$example/loaders/products.ts" loaders/
cp "$here/my-site/.platform/blocks/pages-home.json" .platform/blocks/

# ANCHOR: build
npx sitefile generate
npx next build
# ANCHOR_END: build
for generated in sections.gen.ts .platform/meta.gen.json .platform/blocks.gen.json; do
  [ -f "$generated" ] || fail "npx sitefile generate wrote no $generated"
done

start() {
# ANCHOR: start
npx next start
# ANCHOR_END: start
}
start >next.log 2>&1 &
started+=($!)
wait_for http://localhost:3000/ 30 next.log

ask() {
# ANCHOR: ask
curl -s http://localhost:3000/ | grep -o '<h1>[^<]*</h1>'
curl -s -A 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)' http://localhost:3000/ |
  grep -o '<h1>[^<]*</h1>'
# ANCHOR_END: ask
}
out=$(ask)
expect "the home page" "$out" $'<h1>Hello, world</h1>\n<h1>Hello, phone</h1>' next.log
# The loader ran: the shelf lists its two products.
curl -s http://localhost:3000/ | sed 's/<!-- -->//g' | grep -q '<li>Product 2: \$20</li>'
# The admin route answers the schema `npx sitefile generate` wrote.
curl -s http://localhost:3000/live/_meta | grep -q '"site/sections/Hero.tsx"'
# A path no page serves is Next's not-found page.
[ "$(curl -s -o /dev/null -w '%{http_code}' http://localhost:3000/nowhere)" = 404 ]
echo "nextjs.sh: passed"
