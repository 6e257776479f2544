#!/usr/bin/env bash
# Getting started in C (docs/src/getting-started/c.md): libsitefile installed under ~/.local
# with its header and pkg-config file, a program that resolves the home page of my-site and
# answers its loader, compiled with pkg-config and run. Run by scripts/docs.sh in a scratch
# directory, with SITEFILE_LIB_DIR the directory of the built libsitefile.so and .a.
set -euo pipefail
source "$SITEFILE_REPO/docs/examples/harness.bash"

# What the reader has after the page's first step: the library installed under ~/.local. Then
# the site of the page, and its program.
install_library
copy_my_site my-site
cp "$SITEFILE_REPO/docs/examples/getting-started/c/app.c" .

build_and_run() {
# ANCHOR: build
export PKG_CONFIG_PATH="$HOME/.local/lib/pkgconfig"
cc app.c $(pkg-config --cflags --libs sitefile) -Wl,-rpath,"$HOME/.local/lib" -o app
./app
# ANCHOR_END: build
}
out=$(build_and_run)
python3 - "$out" <<'PY'
import json, sys
step = json.loads(sys.argv[1])
assert step["step"] == "done", step
page = step["value"]
assert page["page"] == "pages-home", page
sections = [(s["component"], s["props"]) for s in page["sections"]]
assert sections == [
    ("site/sections/Hero.tsx", {"title": "Hello, world"}),
    ("site/sections/ProductShelf.tsx", {"title": "Best sellers", "products": [
        {"name": "Trail runner", "price": 89.9}, {"name": "Canvas tote", "price": 24}]}),
], sections
assert page["effects"]["varies"] == ["device"], page["effects"]
PY
echo "c.sh: passed"
