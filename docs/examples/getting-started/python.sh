#!/usr/bin/env bash
# Getting started in Python (docs/src/getting-started/python.md): libsitefile installed under
# ~/.local, and a Python program that loads it with ctypes, resolves the home page of my-site as
# a desktop and as a phone and runs its loader. Run by scripts/docs.sh in a scratch directory,
# with SITEFILE_LIB_DIR the directory of the built libsitefile.so and .a.
set -euo pipefail
source "$SITEFILE_REPO/docs/examples/harness.bash"

# What the reader has after the page's first step: the library installed under ~/.local. Then
# the site of the page, and its program.
install_library
copy_my_site my-site
cp "$SITEFILE_REPO/docs/examples/getting-started/python/app.py" .

run() {
# ANCHOR: run
SITEFILE_LIB="$HOME/.local/lib/libsitefile.so" python3 app.py
# ANCHOR_END: run
}
out=$(run)
expected='[{"title": "Hello, world"}, {"title": "Best sellers", "products": [{"name": "Product 1", "price": 10}, {"name": "Product 2", "price": 20}]}]
[{"title": "Hello, phone"}, {"title": "Best sellers", "products": [{"name": "Product 1", "price": 10}, {"name": "Product 2", "price": 20}]}]'
expect "what app.py printed" "$out" "$expected"
echo "python.sh: passed"
