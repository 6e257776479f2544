#!/usr/bin/env bash
# Worker options from a file (docs/src/reference/options.md): `sitefile cache --options` and
# `sitefile serve --options` read options.json beside this script, under the names
# `createDecoWorkerEntry` takes; an unknown name is refused, naming it.
set -euo pipefail
source "$SITEFILE_REPO/docs/examples/harness.bash"
SITE=$SITEFILE_REPO/examples/storefront
cp "$SITEFILE_REPO/docs/examples/workspace/options.json" options.json

plan() {
# ANCHOR: cache
sitefile cache "$SITE" https://shop.example/account/orders --options options.json
# ANCHOR_END: cache
}
bypass=$(plan)
expect "a bypass path" "$(json '["reason"]' <<< "$bypass")" bypass-path
html=$(sitefile cache "$SITE" "https://shop.example/?ref=mail" --options options.json \
  --status 200 --content-type text/html)
expect "the tracking parameter left out of the key" "$(json '["key"]' <<< "$html")" \
  "$(sitefile cache "$SITE" https://shop.example/ --options options.json | json '["key"]')"
expect "the policy enforced" "$(json '["headers"]["Content-Security-Policy"]' <<< "$html")" \
  "default-src 'self'; img-src 'self' https://cdn.example; frame-ancestors 'self' https://studio.platformcms.com https://*.platform.studio"

PORT=$(free_port)
export SHOP_PURGE_TOKEN=purge-secret
# ANCHOR: serve
sitefile serve "$SITE" --listen 127.0.0.1:$PORT --options options.json &
# ANCHOR_END: serve
started+=($!)
wait_for "http://127.0.0.1:$PORT/platform/_liveness"
cors=$(curl -sS -D - -o /dev/null "http://127.0.0.1:$PORT/?renderJson" -H 'Origin: https://app.example' | tr -d '\r')
expect_in "page JSON CORS for the listed origin" "$cors" "access-control-allow-origin: https://app.example"
expect "the renamed purge token" "$(http_code -X POST "http://127.0.0.1:$PORT/_cache/purge" \
  -H 'Authorization: Bearer purge-secret' -H 'content-type: application/json' -d '{"paths": ["/"]}')" 200

echo '{"bypassPath": ["/account"]}' > typo.json
if sitefile cache "$SITE" https://shop.example/ --options typo.json 2> refused.txt; then
  echo "an unknown option was accepted" >&2
  exit 1
fi
expect_in "the refusal names the option" "$(cat refused.txt)" "invalid bypassPath"
echo "options.sh: passed"
