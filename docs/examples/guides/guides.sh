#!/usr/bin/env bash
# The commands the guides (docs/src/guides/*.md) show, run against the example site beside this
# file, with what the guides say about their output checked. Run from a scratch directory with
# `sitefile` on the PATH and SITEFILE_REPO the repository root (scripts/docs.sh does both):
#
#   PATH=target/debug:$PATH SITEFILE_REPO=$PWD bash docs/examples/guides/guides.sh
#
# The commands are shown as a reader types them at the repository root, so the script works
# there; what it writes goes to the scratch directory it started in.
set -euo pipefail
source "$SITEFILE_REPO/docs/examples/harness.bash"

scratch=$PWD
cd "$SITEFILE_REPO"
# Cache keys carry the deploy version; pin it so they read the same everywhere.
export BUILD_HASH=abc123
unset NODE_ENV PLATFORM_ALLOWED_PREVIEW_HOSTS PLATFORM_SITE_NAME PLATFORM_PREVIEW \
  PLATFORM_CACHE_DISABLE PURGE_TOKEN PLATFORM_CACHE_REDIS_URL PLATFORM_FAST_DEPLOY 2>/dev/null || true

# check FILE EXPRESSION: the Python expression holds with `p` the JSON in FILE (`ps` the list of
# them, for a file that holds several one after another).
check() {
  python3 - "$1" "$2" <<'PY'
import json, os, sys
env = os.environ
path, expression = sys.argv[1], sys.argv[2]
with open(path) as f:
    text = f.read()
decoder, ps, at = json.JSONDecoder(), [], 0
while at < len(text):
    if text[at].isspace():
        at += 1
        continue
    value, at = decoder.raw_decode(text, at)
    ps.append(value)
p = ps[0] if len(ps) == 1 else ps
def matched(page):
    return [s["props"]["rule"] for s in page["sections"] if s["component"] == "site/sections/Matched.tsx"]
def components(page):
    return [s["component"] for s in page["sections"]]
def texts(page):
    return [s["props"].get("text") or s["props"].get("title") for s in page["sections"]
            if s["component"] in ("site/sections/Banner.tsx", "site/sections/Hero.tsx")]
if not eval(expression):
    sys.exit(f"guides.sh: `{expression}` does not hold for {path}:\n" + json.dumps(p, indent=2)[:6000])
PY
}

out="$scratch/out.json"
iphone="Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148"

# --- The content model -----------------------------------------------------------------------

{
# ANCHOR: check
sitefile check docs/examples/guides/site
# ANCHOR_END: check
} > "$scratch/check.txt"
grep -q ": 0 error(s), 0 warning(s)$" "$scratch/check.txt" || fail "check: $(cat "$scratch/check.txt")"

{
# ANCHOR: resolve-home
sitefile resolve docs/examples/guides/site https://shop.example/
# ANCHOR_END: resolve-home
} > "$out"
check "$out" 'p["page"] == "pages-home" and p["path"] == "/"'
check "$out" 'components(p) == ["site/sections/Theme/Theme.tsx", "site/sections/Analytics/Tag.tsx", "site/sections/Header/Header.tsx", "site/sections/Hero.tsx", "site/sections/ProductShelf.tsx"]'
check "$out" 'p["sections"][3]["props"] == {"title": "New season, new shoes"}'
check "$out" 'p["sections"][4]["props"] == {"title": "Best sellers", "products": None}'
check "$out" 'p["seo"]["title"] == "Guides shop" and p["effects"]["varies"] == ["device"]'

# Which page serves which path.
{
# ANCHOR: precedence
for path in / /about /shoes /shoes/p /s /gift/cards/x; do
  sitefile resolve docs/examples/guides/site "https://shop.example$path" |
    python3 -c 'import json, sys; p = json.load(sys.stdin); print(p["page"], p["path"], p["params"], p.get("notFound", False))'
done
# ANCHOR_END: precedence
} > "$scratch/precedence.txt"
cat > "$scratch/precedence.expected" <<'EOF'
pages-home / {} False
About /about {} False
pages-category /:slug {'slug': 'shoes'} False
pages-product /:slug/p {'slug': 'shoes'} False
pages-search /s {} False
pages-not-found /* {'0': 'gift/cards/x'} True
EOF
diff "$scratch/precedence.expected" "$scratch/precedence.txt" || fail "page precedence"

# A section inside a section's props comes out as {"Component", "props"}.
{
# ANCHOR: resolve-nested
sitefile resolve docs/examples/guides/site https://shop.example/about
# ANCHOR_END: resolve-nested
} > "$out"
check "$out" 'p["sections"][2] == {"component": "site/sections/Text.tsx", "props": {"text": "We sell shoes.", "aside": {"Component": "site/sections/Card.tsx", "props": {"title": "Since 1999"}}}}'

# A path no page serves, on a site without a not-found page: no page, exit 3.
mkdir -p "$scratch/bare/.platform/blocks"
echo '{"path": "/", "sections": []}' > "$scratch/bare/.platform/blocks/pages-home.json"
set +e
sitefile resolve "$scratch/bare" https://shop.example/elsewhere > "$out"
status=$?
set -e
[ "$status" = 3 ] || fail "a path without a page exits $status, not 3"
check "$out" 'p["page"] is None and p["sections"] == []'

# Loaders: with --echo-loaders each answers its key and props.
{
# ANCHOR: resolve-loaders
sitefile resolve docs/examples/guides/site https://shop.example/shoes --echo-loaders
# ANCHOR_END: resolve-loaders
} > "$out"
check "$out" 'p["sections"][3]["props"]["page"]["loader"] == "site/loaders/productListingPage.ts"'
check "$out" 'p["sections"][3]["props"]["page"]["props"] == {"category": "shoes", "count": 24, "__pagePath": "/shoes", "__pageUrl": "https://shop.example/shoes"}'
check "$out" 'p["sections"][2]["props"]["navItems"] == []'

# The matcher examples: one page, one flag per example, a section for each rule that matched.
# ANCHOR: matched-fn
matched() { # prints the rules whose Matched section is in the page on stdin
  python3 -c 'import json, sys; print(*[s["props"]["rule"] for s in json.load(sys.stdin)["sections"] if s["component"] == "site/sections/Matched.tsx"])'
}
# ANCHOR_END: matched-fn
{
# ANCHOR: matchers-default
sitefile resolve docs/examples/guides/site https://shop.example/matchers/x \
  --now 2026-06-01T12:00:00Z --draw 0.5 | matched
# ANCHOR_END: matchers-default
} > "$scratch/matched.txt"
[ "$(cat "$scratch/matched.txt")" = "always negate" ] || fail "matchers-default: $(cat "$scratch/matched.txt")"
sitefile resolve docs/examples/guides/site https://shop.example/matchers/x --now 2026-06-01T12:00:00Z --draw 0.5 > "$out"
check "$out" 'p["effects"]["varies"] == ["cohort", "cookie", "device", "host", "path", "query", "region", "time", "user-agent"]'

{
# ANCHOR: matchers-visitor
sitefile resolve docs/examples/guides/site "https://shop.example/matchers/sale/shoes?campaign=spring" \
  --now 2026-11-28T12:00:00Z --draw 0.1 \
  --user-agent "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) ShopApp/3.1 Mobile/15E148" \
  --cookie tier=gold \
  --header "cf-ipcountry: BR" --header "cf-region-code: SP" --header "cf-ipcity: Sao Paulo" | matched
# ANCHOR_END: matchers-visitor
} > "$scratch/matched.txt"
[ "$(cat "$scratch/matched.txt")" = "always device random date cookie queryString pathname userAgent location multi negate" ] ||
  fail "matchers-visitor: $(cat "$scratch/matched.txt")"

{
# ANCHOR: matchers-host
NODE_ENV=production sitefile resolve docs/examples/guides/site "https://br.shop.example/matchers/x?preview=1" \
  --now 2026-12-10T00:00:00Z --draw 0.9 \
  --header "cf-ipcountry: BR" --header "cf-region-code: SP" --header "cf-ipcity: Campinas" | matched
# ANCHOR_END: matchers-host
} > "$scratch/matched.txt"
[ "$(cat "$scratch/matched.txt")" = "always cron host environment" ] || fail "matchers-host: $(cat "$scratch/matched.txt")"

# The tablet counts for the device example, not for "Mobile visitors" (multi).
sitefile resolve docs/examples/guides/site https://shop.example/matchers/x --now 2026-06-01T12:00:00Z \
  --draw 0.5 --user-agent "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X)" --cookie tier=silver > "$out"
check "$out" 'matched(p) == ["always", "device", "negate"]'

# Redirects are answered by the edge, before any page.
{
# ANCHOR: cache-redirect
sitefile cache docs/examples/guides/site https://shop.example/old-shop/bags?color=red
# ANCHOR_END: cache-redirect
} > "$out"
check "$out" 'p["reason"] == "redirect:301" and p["headers"]["Location"] == "/bags?color=red" and p["key"] is None'
sitefile cache docs/examples/guides/site https://shop.example/promo > "$out"
check "$out" 'p["reason"] == "redirect:302" and p["headers"]["Location"] == "/sale"'

# --- Variants --------------------------------------------------------------------------------

{
# ANCHOR: variants-mobile
sitefile resolve docs/examples/guides/site https://shop.example/sale \
  --user-agent "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148" --draw 0.7
# ANCHOR_END: variants-mobile
} > "$out"
check "$out" 'texts(p) == ["Checkout as usual", "Sale: tap to shop"]'
check "$out" 'p["effects"]["varies"] == ["cohort", "device", "query"]'
sitefile resolve docs/examples/guides/site https://shop.example/sale --draw 0.7 > "$out"
check "$out" 'texts(p) == ["Checkout as usual", "Sale: up to 50% off"]'

# Random: the first roll of the request decides checkout-test (traffic 0.5).
{
# ANCHOR: variants-draw
sitefile resolve docs/examples/guides/site https://shop.example/sale --draw 0.3
# ANCHOR_END: variants-draw
} > "$out"
check "$out" 'texts(p) == ["Try the new one-page checkout", "Sale: up to 50% off"]'
check "$out" 'len(p["effects"]["setCookies"]) == 1 and p["effects"]["setCookies"][0].startswith("platform_segment=") and p["effects"]["setCookies"][0].endswith("; Path=/; Max-Age=31536000; SameSite=Lax")'
# ANCHOR: segment
segment=$(sitefile resolve docs/examples/guides/site https://shop.example/sale --draw 0.3 |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["effects"]["setCookies"][0].split(";")[0].split("=", 1)[1])')
# ANCHOR_END: segment
[ -n "$segment" ] || fail "no segment cookie"
# The cookie's value: base64 of the URI-encoded JSON of the decisions.
{
# ANCHOR: decode-segment
python3 -c 'import base64, sys, urllib.parse; print(urllib.parse.unquote(base64.b64decode(sys.argv[1]).decode()))' "$segment"
# ANCHOR_END: decode-segment
} > "$scratch/segment.txt"
grep -qx '{"active":\["checkout-test"\],"inactiveDrawn":\[\],"pct":{"checkout-test":50}}' "$scratch/segment.txt" ||
  fail "segment cookie: $(cat "$scratch/segment.txt")"

# The cookie keeps the cohort whatever this request rolls, and sets nothing new.
{
# ANCHOR: variants-sticky
sitefile resolve docs/examples/guides/site https://shop.example/sale --draw 0.9 \
  --cookie "platform_segment=$segment"
# ANCHOR_END: variants-sticky
} > "$out"
check "$out" 'texts(p) == ["Try the new one-page checkout", "Sale: up to 50% off"] and p["effects"]["setCookies"] == []'
sitefile resolve docs/examples/guides/site https://shop.example/sale --draw 0.9 > "$out"
check "$out" 'texts(p)[0] == "Checkout as usual"'

# Overrides: a saved matcher by name, an inline rule by <block>@<path>.
{
# ANCHOR: variants-override-header
sitefile resolve docs/examples/guides/site https://shop.example/sale \
  --header "x-platform-matchers-override: checkout-test=1 pages-sale@sections.2.variants.0.rule=1"
# ANCHOR_END: variants-override-header
} > "$out"
check "$out" 'texts(p) == ["Try the new one-page checkout", "Sale: up to 50% off", "Welcome, campaign visitor"] and p["effects"]["setCookies"] == []'

{
# ANCHOR: variants-override-query
sitefile resolve docs/examples/guides/site \
  "https://shop.example/sale?x-platform-matchers-override=Mobile%20visitors%3D1&x-platform-matchers-override=checkout-test%3D0"
# ANCHOR_END: variants-override-query
} > "$out"
check "$out" 'texts(p) == ["Checkout as usual", "Sale: tap to shop"] and p["effects"]["setCookies"] == []'

# A rule inside a saved matcher: <name>@<path>. A phone without the tier cookie matches multi.
sitefile resolve docs/examples/guides/site https://shop.example/matchers/x --now 2026-06-01T12:00:00Z --draw 0.5 \
  --user-agent "$iphone" --header "x-platform-matchers-override: matcher-multi@matchers.1=1" > "$out"
check "$out" 'matched(p) == ["always", "device", "multi", "negate"]'
sitefile resolve docs/examples/guides/site https://shop.example/matchers/x --now 2026-06-01T12:00:00Z --draw 0.5 \
  --header "x-platform-matchers-override: website/matchers/never.ts=1" > "$out"
check "$out" 'matched(p) == ["always", "negate"]'

# A name with a space does not survive the header (pairs are split on spaces).
sitefile resolve docs/examples/guides/site https://shop.example/sale --draw 0.9 \
  --header "x-platform-matchers-override: Mobile visitors=1" > "$out"
check "$out" 'texts(p)[1] == "Sale: up to 50% off"'

# An override never touches the edge cache.
{
# ANCHOR: cache-override
sitefile cache docs/examples/guides/site "https://shop.example/sale?x-platform-matchers-override=checkout-test%3D1"
# ANCHOR_END: cache-override
} > "$out"
check "$out" 'p["reason"] == "matcher-override" and p["cacheable"] is False and p["key"] is None'
check "$out" 'p["headers"]["Cache-Control"] == "private, no-cache, no-store, must-revalidate" and p["headers"]["X-Cache"] == "BYPASS"'

# The cohort is part of the cache key.
{
# ANCHOR: cache-cohort
sitefile cache docs/examples/guides/site https://shop.example/sale --cookie "platform_segment=$segment"
# ANCHOR_END: cache-cohort
} > "$out"
check "$out" 'p["key"] == "https://shop.example/sale#v=abc123&cohort=checkout-test%3A1%3A50&device=desktop"'

# --- Section loaders -------------------------------------------------------------------------

{
# ANCHOR: resolve-rounds
sitefile resolve docs/examples/guides/site "https://shop.example/s?q=red+shoes&page=2" --echo-loaders
# ANCHOR_END: resolve-rounds
} > "$out"
check "$out" 'p["sections"][2]["props"]["page"] == {"loader": "site/loaders/search.ts", "props": {"count": 12, "facets": {"loader": "site/loaders/facets.ts", "props": {"scope": "search", "__pagePath": "/s", "__pageUrl": "https://shop.example/s?q=red+shoes&page=2", "q": "red shoes"}}, "__pagePath": "/s", "__pageUrl": "https://shop.example/s?q=red+shoes&page=2", "q": "red shoes"}}'

# A shared saved loader block resolves once per page; without --echo-loaders loaders answer null.
sitefile resolve docs/examples/guides/site https://shop.example/shoes/p > "$out"
check "$out" 'p["sections"][3]["props"] == {"product": None}'

{
# ANCHOR: cache-degraded
sitefile cache docs/examples/guides/site https://shop.example/shoes/p --degraded
# ANCHOR_END: cache-degraded
} > "$out"
check "$out" 'p["cacheable"] is False and p["reason"] == "degraded" and p["headers"]["X-Cache"] == "BYPASS"'
check "$out" '"X-Platform-Degraded" not in p["headers"] and p["headers"]["Cache-Control"] == "private, no-cache, no-store, must-revalidate"'

# --- Layout and deferred sections ------------------------------------------------------------

{
# ANCHOR: resolve-lazy
sitefile resolve docs/examples/guides/site https://shop.example/shoes/p
# ANCHOR_END: resolve-lazy
} > "$out"
check "$out" 'components(p)[2:] == ["site/sections/Header/Header.tsx", "site/sections/ProductDetails.tsx", "site/sections/ProductShelf.tsx", "site/sections/Reviews.tsx", "site/sections/Faq.tsx"]'
check "$out" 'all("deferred" not in s for s in p["sections"])'

{
# ANCHOR: cache-bot
sitefile cache docs/examples/guides/site https://shop.example/shoes/p --header "user-agent: Googlebot/2.1"
sitefile cache docs/examples/guides/site https://shop.example/shoes/p --header "sec-fetch-dest: empty"
# ANCHOR_END: cache-bot
} > "$scratch/bot.txt"
check "$scratch/bot.txt" '[plan["key"] for plan in ps] == ["https://shop.example/shoes/p#v=abc123&bot=1&device=desktop", "https://shop.example/shoes/p#v=abc123&fetch=1&device=desktop"]'

# --- Draft preview ---------------------------------------------------------------------------

{
# ANCHOR: cache-draft
sitefile cache docs/examples/guides/site "https://preview.localhost/?__draft=localhost:4100/drafts/home.json@v1"
# ANCHOR_END: cache-draft
} > "$out"
check "$out" 'p["reason"] == "draft" and p["key"] is None and p["cacheable"] is False'
check "$out" 'p["headers"]["Cache-Control"] == "no-store, private" and p["headers"]["X-Robots-Tag"] == "noindex, nofollow" and p["headers"]["Vary"] == "Cookie"'
check "$out" 'p["headers"]["Set-Cookie"] == "__platform_draft=localhost%3A4100%2Fdrafts%2Fhome%2Ejson%40v1; Path=/; HttpOnly; Secure; SameSite=None; Partitioned; Max-Age=1800"'

# A host the site does not list: the draft is inert and the page is cached as usual.
sitefile cache docs/examples/guides/site "https://shop.example/?__draft=localhost:4100/drafts/home.json@v1" > "$out"
check "$out" 'p["cacheable"] is True and p["reason"] is None and "Set-Cookie" not in p["headers"]'

{
# ANCHOR: cache-draft-env
PLATFORM_ALLOWED_PREVIEW_HOSTS=staging.shop.example,localhost:3000 \
  sitefile cache docs/examples/guides/site "http://localhost:3000/?__draft=localhost:4100/drafts/home.json@v1"
# ANCHOR_END: cache-draft-env
} > "$out"
check "$out" 'p["reason"] == "draft"'
# The variable replaces the Site block's list, and `none` turns preview off.
PLATFORM_ALLOWED_PREVIEW_HOSTS=staging.shop.example \
  sitefile cache docs/examples/guides/site "https://preview.localhost/?__draft=localhost:4100/drafts/home.json@v1" > "$out"
check "$out" 'p["cacheable"] is True'
PLATFORM_ALLOWED_PREVIEW_HOSTS=none \
  sitefile cache docs/examples/guides/site "https://preview.localhost/?__draft=localhost:4100/drafts/home.json@v1" > "$out"
check "$out" 'p["cacheable"] is True'

# The whole round trip through `sitefile serve`: a draft server, then page JSON on a preview host.
{
# ANCHOR: draft-server
python3 -u -m http.server 0 --bind 127.0.0.1 --directory docs/examples/guides/drafts &
# ANCHOR_END: draft-server
} > "$scratch/drafts.out" 2> "$scratch/drafts.err"
started+=($!)
draft_port=$(first_line "$scratch/drafts.out" | sed -n 's/.* port \([0-9]*\) .*/\1/p')
[ -n "$draft_port" ] || fail "no draft server port in $(cat "$scratch/drafts.out")"

{
# ANCHOR: draft-serve
sitefile serve docs/examples/guides/site --listen 127.0.0.1:0 &
# ANCHOR_END: draft-serve
} > "$scratch/serve.out" 2> "$scratch/serve.err"
started+=($!)
site=$(served_at "$scratch/serve.out")

{
# ANCHOR: draft-request
curl -si -H "Host: preview.localhost" "$site/?renderJson&__draft=127.0.0.1:$draft_port/home.json@v1"
# ANCHOR_END: draft-request
} > "$scratch/draft.response"
python3 - "$scratch/draft.response" "$scratch/draft.headers" "$out" <<'PY'
import sys
head, _, body = open(sys.argv[1], newline="").read().partition("\r\n\r\n")
open(sys.argv[2], "w").write(head.replace("\r\n", "\n") + "\n")
open(sys.argv[3], "w").write(body)
PY
check "$out" 'p["sections"][2]["props"]["logo"]["src"] == "/logo-winter.svg"'
grep -qi '^cache-control: no-store, private' "$scratch/draft.headers" || fail "draft headers: $(cat "$scratch/draft.headers")"
grep -qi '^x-robots-tag: noindex, nofollow' "$scratch/draft.headers" || fail "draft headers: $(cat "$scratch/draft.headers")"
grep -qi '^vary: Cookie' "$scratch/draft.headers" || fail "draft headers: $(cat "$scratch/draft.headers")"
grep -qi '^set-cookie: __platform_draft=127%2E0%2E0%2E1%3A[0-9]*%2Fhome%2Ejson%40v1; Path=/; HttpOnly; Secure; SameSite=None; Partitioned; Max-Age=1800' \
  "$scratch/draft.headers" || fail "draft headers: $(cat "$scratch/draft.headers")"
# The draft deletes the About page: on the preview host /about is the category page.
curl -s -o "$out" -H "Host: preview.localhost" \
  "$site/about?renderJson&__draft=127.0.0.1:$draft_port/home.json@v1"
check "$out" 'p["name"] == "Category"'
# The cookie keeps the preview going; elsewhere the published content answers.
{
# ANCHOR: draft-cookie
curl -s -H "Host: preview.localhost" -H "Cookie: __platform_draft=127.0.0.1:$draft_port/home.json@v1" \
  "$site/?renderJson"
# ANCHOR_END: draft-cookie
} > "$out"
check "$out" 'p["sections"][2]["props"]["logo"]["src"] == "/logo-winter.svg"'
curl -s -o "$out" "$site/?renderJson&__draft=127.0.0.1:$draft_port/home.json@v1"
check "$out" 'p["sections"][2]["props"]["logo"]["src"] == "/logo.svg"'
{
# ANCHOR: draft-off
curl -s -D - -o /dev/null -H "Host: preview.localhost" "$site/?renderJson&__draft=off"
# ANCHOR_END: draft-off
} > "$scratch/off.headers"
curl -s -o "$out" -H "Host: preview.localhost" "$site/?renderJson&__draft=off"
check "$out" 'p["sections"][2]["props"]["logo"]["src"] == "/logo.svg"'
grep -qi '^set-cookie: __platform_draft=;.*Max-Age=0' "$scratch/off.headers" || fail "off: $(cat "$scratch/off.headers")"

# --- The edge cache --------------------------------------------------------------------------

{
# ANCHOR: cache-key
sitefile cache docs/examples/guides/site "https://shop.example/?utm_source=mail&b=2&a=1" \
  --header "user-agent: Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X)"
# ANCHOR_END: cache-key
} > "$out"
check "$out" 'p == {"key": "https://shop.example/?a=1&b=2#v=abc123&device=tablet", "profile": "static", "cacheable": True, "reason": None, "headers": {"Cache-Control": "public, max-age=120, s-maxage=900, stale-while-revalidate=1800, stale-if-error=7200", "Vary": "Accept-Encoding", "CDN-Cache-Control": "no-store", "X-Cache-Profile": "static", "X-Cache-Version": "abc123"}}'

{
# ANCHOR: cache-geo
sitefile cache docs/examples/guides/site https://shop.example/shoes \
  --header "cf-ipcountry: BR" --header "cf-region-code: SP" --header "cf-ipcity: Campinas"
# ANCHOR_END: cache-geo
} > "$out"
check "$out" 'p["key"] == "https://shop.example/shoes#v=abc123&geo=BR%7CSP&device=desktop" and p["profile"] == "listing"'

# Profiles from the URL.
for case in "/ static" "/shoes listing" "/shoes/p product" "/s?q=boots search" "/search search" \
  "/cart cart" "/pt-br/account/orders private" "/api/x none"; do
  set -- $case
  sitefile cache docs/examples/guides/site "https://shop.example$1" > "$out"
  check "$out" "p['profile'] == '$2'"
done

# Why a page is not cached.
{
# ANCHOR: cache-why
sitefile cache docs/examples/guides/site https://shop.example/cart
sitefile cache docs/examples/guides/site https://shop.example/shoes --method POST
sitefile cache docs/examples/guides/site https://shop.example/preview-tools/x --options docs/examples/guides/edge-options.json
NODE_ENV=development sitefile cache docs/examples/guides/site https://shop.example/shoes
# ANCHOR_END: cache-why
} > "$scratch/why.txt"
check "$scratch/why.txt" '[(plan["reason"], plan["cacheable"], plan["key"]) for plan in ps] == [("non-cacheable:cart", False, None), ("method:POST", False, None), ("bypass-path", False, None), ("dev-mode", False, None)]'

{
# ANCHOR: cache-after-origin
sitefile cache docs/examples/guides/site https://shop.example/shoes/p --set-cookie "session=abc; Path=/"
sitefile cache docs/examples/guides/site https://shop.example/shoes/p --status 503
# ANCHOR_END: cache-after-origin
} > "$scratch/after.txt"
check "$scratch/after.txt" '[(plan["reason"], plan["cacheable"], plan["headers"]["X-Cache"]) for plan in ps] == [("private-set-cookie", False, "BYPASS"), ("status:503", False, "BYPASS")]'
# A safe cookie (here from the options file) keeps the page cacheable.
sitefile cache docs/examples/guides/site https://shop.example/shoes/p --options docs/examples/guides/edge-options.json \
  --set-cookie "currency=BRL; Path=/" > "$out"
check "$out" 'p["cacheable"] is True and p["headers"]["X-Cache"] == "MISS"'

{
# ANCHOR: cache-html
sitefile cache docs/examples/guides/site https://shop.example/shoes/p --content-type "text/html; charset=utf-8" \
  --options docs/examples/guides/edge-options.json
# ANCHOR_END: cache-html
} > "$out"
check "$out" 'p["headers"]["X-Content-Type-Options"] == "nosniff" and p["headers"]["Strict-Transport-Security"] == "max-age=63072000; includeSubDomains; preload"'
check "$out" 'p["headers"]["Referrer-Policy"] == "strict-origin-when-cross-origin" and p["headers"]["Permissions-Policy"] == "camera=(), microphone=(), geolocation=()"'
check "$out" 'p["headers"]["Content-Security-Policy"].startswith("frame-ancestors '"'"'self'"'"'")'
check "$out" 'p["headers"]["Content-Security-Policy-Report-Only"] == "default-src '"'"'self'"'"'; img-src '"'"'self'"'"' https://cdn.shop.example"'
check "$out" 'p["headers"]["X-Cache"] == "MISS" and p["cacheable"] is True'
sitefile cache docs/examples/guides/site https://shop.example/shoes/p --content-type application/json > "$out"
check "$out" '"X-Content-Type-Options" not in p["headers"]'

# `sitefile serve` as the edge in front of an origin: MISS, HIT, purge, MISS.
{
# ANCHOR: origin
python3 docs/examples/guides/origin.py &
# ANCHOR_END: origin
} > "$scratch/origin.out" 2> "$scratch/origin.err"
started+=($!)
origin_port=$(first_line "$scratch/origin.out")

{
# ANCHOR: serve-origin
export PURGE_TOKEN=s3cret
sitefile serve docs/examples/guides/site --origin "http://127.0.0.1:$origin_port" --listen 127.0.0.1:0 &
# ANCHOR_END: serve-origin
} > "$scratch/edge.out" 2> "$scratch/edge.err"
started+=($!)
edge=$(served_at "$scratch/edge.out")

x_cache() { curl -s -D - -o /dev/null "$@" | tr -d '\r' | sed -n 's/^x-cache: //Ip'; }
[ "$(x_cache "$edge/shoes")" = MISS ] || fail "first request is not a MISS"
[ "$(x_cache "$edge/shoes")" = HIT ] || fail "second request is not a HIT"
[ "$(x_cache "$edge/shoes?utm_source=mail")" = HIT ] || fail "a tracking parameter split the cache"
[ "$(x_cache -A "$iphone" "$edge/shoes")" = MISS ] || fail "a phone shared the desktop copy"
[ "$(x_cache -X POST "$edge/shoes")" = BYPASS ] || fail "POST was not a BYPASS"
curl -s -D "$scratch/edge.headers" -o /dev/null "$edge/shoes"
grep -qi '^x-content-type-options: nosniff' "$scratch/edge.headers" || fail "no security headers on HTML"
redirect=$(curl -s -D - -o /dev/null "$edge/promo" | tr -d '\r')
grep -q '^HTTP/1.1 302' <<< "$redirect" && grep -qi '^location: /sale$' <<< "$redirect" || fail "redirect: $redirect"

{
# ANCHOR: purge
curl -s -X POST "$edge/_cache/purge" -H "Authorization: Bearer $PURGE_TOKEN" \
  -H 'content-type: application/json' -d '{"paths": ["/shoes"]}'
# ANCHOR_END: purge
} > "$out"
EDGE=$edge check "$out" 'p["total"] == 2 and sorted(p["purged"]) == [env["EDGE"] + "/shoes#v=abc123&device=desktop", env["EDGE"] + "/shoes#v=abc123&device=mobile"]'
curl -s -X POST "$edge/_cache/purge" -H "Authorization: Bearer $PURGE_TOKEN" \
  -H 'content-type: application/json' -d '{"paths": ["/shoes"]}' > "$out"
check "$out" 'p == {"purged": [], "total": 0}'
[ "$(x_cache "$edge/shoes")" = MISS ] || fail "a purged page is still a HIT"
[ "$(x_cache "$edge/shoes")" = HIT ] || fail "the page is not stored again"
expect "a wrong purge token" "$(http_code -X POST "$edge/_cache/purge" -H "Authorization: Bearer wrong" \
  -H 'content-type: application/json' -d '{"paths": ["/shoes"]}')" 401

echo "guides.sh: every guide example passed"
