#!/usr/bin/env bash
# Getting started with `sitefile serve` (docs/src/getting-started/serve.md): a site of one page
# written from nothing, checked, resolved, served on the default address, and asked for its
# page as a desktop and as a phone. Run by scripts/docs.sh in a scratch directory, with
# `sitefile` on the PATH and SITEFILE_REPO the repository.
set -euo pipefail
set -m # the server runs in a process group of its own, stopped as one on exit
source "$SITEFILE_REPO/docs/examples/harness.bash"

# ANCHOR: site
mkdir -p my-site/.platform/blocks
# ANCHOR_END: site
copy_my_site my-site

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

expect_nothing_at http://127.0.0.1:8000/
serve() {
# ANCHOR: serve
sitefile serve my-site
# ANCHOR_END: serve
}
serve >serve.log 2>&1 &
started+=($!)
wait_for_line serve.log '^sitefile serve: '
head -1 serve.log | grep -q '^sitefile serve: http://127.0.0.1:8000/ (content my-site, revision [0-9a-f]*)$' ||
  fail "the server said: $(cat serve.log)"

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
expect "the page JSON" "$out" "$expected"

# The built-in view a browser gets says which variant was chosen and why.
view=$(curl -s http://127.0.0.1:8000/)
grep -q 'variant 2 of 2 chosen, its rule <code>website/matchers/always.ts</code> matched' <<<"$view"
grep -q 'Varies on: device.' <<<"$view"
echo "serve.sh: passed"
