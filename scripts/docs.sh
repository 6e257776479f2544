#!/usr/bin/env bash
# The book (docs/): its generated reference pages compared with the code, its pasteable code
# blocks checked to be includes of files CI runs, its runnable examples run
# (docs/examples/**/*.sh), then the book built with mdBook and every link and anchor in it
# checked. Needs the debug builds of `sitefile` and `libsitefile` (built here when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# shellcheck source=/dev/null
source scripts/npm.sh

# mdBook from crates.io, pinned, built once into target/tools (with its search index, without
# its server and file watcher: the book is built, not served).
MDBOOK_VERSION=0.5.4
mdbook=target/tools/bin/mdbook
if ! "$mdbook" --version 2>/dev/null | grep -qx "mdbook v$MDBOOK_VERSION"; then
  cargo install mdbook --version "$MDBOOK_VERSION" --locked --root target/tools \
    --no-default-features --features search --quiet
fi

npm_install_locked .
cargo build --locked -p sitefile-server -p sitefile-ffi --quiet
export PATH="$root/target/debug:$PATH"

node scripts/docs/reference.js --sitefile target/debug/sitefile --check
node scripts/docs/code-blocks.js

# Each example script runs in a scratch directory of its own, as a reader's shell would. The
# npm users' paths (Next.js, Workers) need a registry serving this checkout's package:
# scripts/release.sh runs those against its own.
export SITEFILE_REPO=$root
export SITEFILE_LIB_DIR=$root/target/debug
export SITEFILE_INCLUDE_DIR=$root/include
ran=0
while IFS= read -r script; do
  scratch=$(mktemp -d)
  if ! (cd "$scratch" && bash "$root/$script" > "$scratch.log" 2>&1); then
    cat "$scratch.log" >&2
    echo "docs: $script failed" >&2
    exit 1
  fi
  rm -rf "$scratch" "$scratch.log"
  ran=$((ran + 1))
done < <(grep -rL --include='*.sh' '^# Run by scripts/release.sh' docs/examples | sort)

# A failure or a warning (raw HTML that swallows text, an include that is not found) fails the
# build; nothing of an earlier build is left for the link check to read.
rm -rf target/book
if ! "$mdbook" build docs > target/book-build.log 2>&1; then
  cat target/book-build.log >&2
  echo "docs: mdBook failed (above)" >&2
  exit 1
fi
if grep -q ' WARN\| ERROR' target/book-build.log; then
  grep -v '^ INFO' target/book-build.log >&2
  echo "docs: mdBook warned (above)" >&2
  exit 1
fi
# Every link and anchor between pages (linkinator serves the book on localhost; its HTTP client
# needs Node 22 or later). Other sites are not fetched (CI reaches only package registries), nor
# the servers the pages tell a reader to start.
"$(node_of "$NODE24_VERSION")" node_modules/.bin/linkinator target/book --recurse --check-fragments \
  --silent --skip '^https?://(?!localhost|127\.0\.0\.1)' \
  --skip '^https?://(localhost|127\.0\.0\.1):(3000|8000|8787)/'
echo "docs: reference current, $ran example scripts passed, book built with every link checked"
