#!/usr/bin/env bash
# Getting started in Python (docs/src/getting-started/python.md): libsitefile installed under
# ~/.local, and a Python program that loads it with ctypes, resolves the home page of my-site as
# a desktop and as a phone and runs its loader. Run by scripts/docs.sh in a scratch directory,
# with SITEFILE_LIB_DIR the directory of the built libsitefile.so and .a.
set -euo pipefail
here="$SITEFILE_REPO/docs/examples/getting-started"

# What the reader has after the page's first step: the library installed under ~/.local (here
# the build the runner made, installed by the same script; the page's `scripts/install-ffi.sh
# "$HOME/.local"` builds it in release first).
export HOME="$PWD/home"
"$SITEFILE_REPO/scripts/install-ffi.sh" --from "$SITEFILE_LIB_DIR" "$HOME/.local" >/dev/null
# The site of the page, and its program.
mkdir -p my-site/.platform/blocks
cp "$here/my-site/.platform/blocks/pages-home.json" my-site/.platform/blocks/
cp "$here/python/app.py" .

run() {
# ANCHOR: run
SITEFILE_LIB="$HOME/.local/lib/libsitefile.so" python3 app.py
# ANCHOR_END: run
}
out=$(run)
expected='[{"title": "Hello, world"}, {"title": "Best sellers", "products": [{"name": "Product 1", "price": 10}, {"name": "Product 2", "price": 20}]}]
[{"title": "Hello, phone"}, {"title": "Best sellers", "products": [{"name": "Product 1", "price": 10}, {"name": "Product 2", "price": 20}]}]'
[ "$out" = "$expected" ] || {
  printf 'python.sh: app.py printed\n%s\n' "$out" >&2
  exit 1
}
echo "python.sh: passed"
