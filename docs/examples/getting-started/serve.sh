#!/usr/bin/env bash
# Getting started with `sitefile serve` (docs/src/getting-started/serve.md): a site of one page
# written from nothing, checked, resolved, served on the default address, and asked for its
# page as a desktop and as a phone. Run by scripts/docs.sh in a scratch directory, with
# `sitefile` on the PATH and SITEFILE_REPO the repository.
set -euo pipefail
set -m # the server runs in a process group of its own, stopped as one on exit
my_site="$SITEFILE_REPO/docs/examples/getting-started/my-site"

# ANCHOR: site
mkdir -p my-site/.platform/blocks
# ANCHOR_END: site
cp "$my_site/.platform/blocks/pages-home.json" my-site/.platform/blocks/

check_site() {
# ANCHOR: check
sitefile check my-site
sitefile resolve my-site /
# ANCHOR_END: check
}
out=$(check_site)
grep -q '^my-site/.platform/blocks: 1 blocks, 1 pages: 0 error(s), 0 warning(s)$' <<<"$out"
grep -q '"title": "Hello, world"' <<<"$out"
grep -q '"varies": \[' <<<"$out"

# The page's commands use the default address: fail clearly when something else holds it.
if curl -s -o /dev/null http://127.0.0.1:8000/; then
  echo "serve.sh: 127.0.0.1:8000 is taken; stop what listens there" >&2
  exit 1
fi
serve() {
# ANCHOR: serve
sitefile serve my-site
# ANCHOR_END: serve
}
serve >serve.log 2>&1 &
server=$!
trap 'kill -- -"$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  grep -q '^sitefile serve: ' serve.log && break
  sleep 0.1
done
head -1 serve.log | grep -q '^sitefile serve: http://127.0.0.1:8000/ (content my-site, revision [0-9a-f]*)$' || {
  cat serve.log >&2
  exit 1
}

ask() {
# ANCHOR: ask
curl -s 'http://127.0.0.1:8000/?asJson' | grep -o '"title":"[^"]*"'
curl -s -A 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)' 'http://127.0.0.1:8000/?asJson' |
  grep -o '"title":"[^"]*"'
# ANCHOR_END: ask
}
out=$(ask)
expected='"title":"Hello, world"
"title":"Best sellers"
"title":"Hello, phone"
"title":"Best sellers"'
[ "$out" = "$expected" ] || {
  printf 'serve.sh: the page JSON gave\n%s\n' "$out" >&2
  exit 1
}

# The built-in view a browser gets says which variant was chosen and why.
view=$(curl -s http://127.0.0.1:8000/)
grep -q 'variant 2 of 2 chosen, its rule <code>website/matchers/always.ts</code> matched' <<<"$view"
grep -q 'Varies on: device.' <<<"$view"
echo "serve.sh: passed"
