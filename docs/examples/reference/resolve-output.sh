#!/usr/bin/env bash
# The format `sitefile resolve` prints (docs/src/reference/resolve-output.md): the example
# storefront's home page, its not-found page, a path no page serves, and a page whose content
# loops, each checked field by field with its exit code.
set -euo pipefail
cp -r "$SITEFILE_REPO/examples/storefront" storefront

# check FILE: the page in FILE has the format's fields, in order, and nothing else.
check() {
  python3 - "$1" <<'PY'
import json, sys
page = json.load(open(sys.argv[1]))
keys = [k for k in page if k != "notFound"]
assert keys == ["page", "path", "params", "sections", "seo", "effects", "revision"], keys
assert page.get("notFound", True) is True, page["notFound"]
assert isinstance(page["params"], dict) and all(isinstance(v, str) for v in page["params"].values())
for section in page["sections"]:
    assert set(section) <= {"component", "props", "deferred"}, section
    assert isinstance(section["component"], str)
effects = page["effects"]
assert list(effects)[:3] == ["setCookies", "warnings", "varies"], effects
assert set(effects) <= {"setCookies", "warnings", "varies", "errors", "degraded", "cut"}, effects
assert len(page["revision"]) == 64 and all(c in "0123456789abcdef" for c in page["revision"])
PY
}

# The home page, as a desktop at a fixed instant.
# ANCHOR: home
sitefile resolve storefront https://storefront.example/ --now 2026-06-01T12:00:00Z
# ANCHOR_END: home
sitefile resolve storefront https://storefront.example/ --now 2026-06-01T12:00:00Z > home.json
check home.json
python3 - <<'PY'
import json
page = json.load(open("home.json"))
assert page["page"] == "pages-home" and page["path"] == "/" and page["params"] == {}
assert "notFound" not in page
assert page["sections"][0]["component"] == "site/sections/Theme/Theme.tsx"
assert page["seo"]["title"] == "Storefront"
assert page["effects"] == {"setCookies": [], "warnings": [], "varies": ["device", "time"]}, page["effects"]
PY

# A path only the not-found page serves: exit 0, "notFound": true after "params".
# ANCHOR: not-found
sitefile resolve storefront https://storefront.example/gift/cards > not-found.json
echo "exit $?"
head -7 not-found.json
# ANCHOR_END: not-found
check not-found.json
python3 - <<'PY'
import json
page = json.load(open("not-found.json"))
assert list(page)[:5] == ["page", "path", "params", "notFound", "sections"], list(page)
assert page["page"] == "pages-not-found" and page["notFound"] is True
assert page["params"] == {"0": "gift/cards"}
PY

# A site without a not-found page: a path no page serves prints "page": null and exits 3.
mkdir -p plain/.platform/blocks
echo '{"path": "/about", "sections": []}' > plain/.platform/blocks/pages-about.json
# ANCHOR: no-page
status=0
sitefile resolve plain https://shop.example/nothing-here > no-page.json || status=$?
echo "exit $status"
# ANCHOR_END: no-page
[ "$status" = 3 ]
check no-page.json
python3 - <<'PY'
import json
page = json.load(open("no-page.json"))
assert page["page"] is None and page["path"] is None and page["params"] == {}
assert page["sections"] == [] and page["seo"] is None
PY

# Content that loops: the closing reference is null, with a warning and an error.
mkdir -p loop/.platform/blocks
echo '{"__resolveType": "B"}' > loop/.platform/blocks/A.json
echo '{"__resolveType": "A"}' > loop/.platform/blocks/B.json
echo '{"path": "/", "sections": [{"__resolveType": "site/sections/Card.tsx", "body": {"__resolveType": "A"}}]}' \
  > loop/.platform/blocks/pages-home.json
# ANCHOR: errors
sitefile resolve loop https://shop.example/ | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["effects"], indent=2))'
# ANCHOR_END: errors
sitefile resolve loop https://shop.example/ > loop.json
check loop.json
python3 - <<'PY'
import json
page = json.load(open("loop.json"))
assert page["sections"][0]["props"] == {"body": None}, page["sections"]
assert page["effects"]["errors"] == [
    {"resolveType": "A", "context": "cycle", "message": "cyclic reference: A -> B -> A"}
], page["effects"]
assert page["effects"]["warnings"] == ["cyclic reference: A -> B -> A"]
assert "degraded" not in page["effects"] and "cut" not in page["effects"]
PY

# Bad input exits 2, naming what is wrong.
status=0
sitefile resolve storefront / --now yesterday 2> error.txt || status=$?
[ "$status" = 2 ]
grep -q -- '--now: "yesterday" is not an RFC 3339 date-time' error.txt
echo "resolve-output.sh: every check passed"
