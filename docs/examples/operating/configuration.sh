#!/usr/bin/env bash
# Configuration (docs/src/guides/configuration.md): a bad value stops a command naming its
# variable (exit 2), a secret is never repeated, the reload token guards POST /.sitefile, and
# BUILD_HASH versions the edge cache keys.
set -euo pipefail
source "$SITEFILE_REPO/docs/examples/harness.bash"
cp -r "$SITEFILE_REPO/examples/storefront" storefront

# A bad value: the command stops before it serves, with exit 2 and the variable's name.
# ANCHOR: invalid
status=0
PLATFORM_OTEL_TRACES_SAMPLING_RATE=2 sitefile serve storefront 2> error.txt || status=$?
cat error.txt
# ANCHOR_END: invalid
[ "$status" = 2 ]
grep -qx 'error: invalid PLATFORM_OTEL_TRACES_SAMPLING_RATE="2": expected a number from 0 to 1' error.txt

# A secret's value is never repeated, not even when it is wrong.
# ANCHOR: secret
status=0
PLATFORM_CRYPTO_KEY=hunter2 sitefile check storefront 2> error.txt || status=$?
cat error.txt
# ANCHOR_END: secret
[ "$status" = 2 ]
grep -q 'PLATFORM_CRYPTO_KEY="<redacted>"' error.txt
if grep -q hunter2 error.txt; then exit 1; fi

# The reload token: POST /.sitefile takes exactly its value as the Authorization header.
# ANCHOR: reload-serve
export PLATFORM_RELEASE_RELOAD_TOKEN=$(head -c 24 /dev/urandom | base64)
sitefile serve storefront --listen 127.0.0.1:0 > serve.out &
server=$!
# ANCHOR_END: reload-serve
started+=("$server")
wait_for_line serve.out
# ANCHOR: reload
base=$(awk 'NR == 1 {sub("/$", "", $3); print $3}' serve.out)   # the address the first line names
curl -s -X POST "$base/.sitefile" -H "Authorization: $PLATFORM_RELEASE_RELOAD_TOKEN" \
  -H 'content-type: application/json' \
  -d '{"blocks": {"pages-about": {"name": "About", "path": "/about", "sections": []}}}' | tee reply.json
# ANCHOR_END: reload
grep -q '"ok":true' reply.json
grep -q '"mode":"delta"' reply.json
expect "the page the reload added" "$(http_code "$base/about")" 200
# Without the token, or with a scheme in front of it, the reload is refused.
expect "a reload without the token" "$(http_code -X POST "$base/.sitefile" -d '{}')" 401
expect "a reload with a scheme before the token" "$(http_code -X POST "$base/.sitefile" \
  -H "Authorization: Bearer $PLATFORM_RELEASE_RELOAD_TOKEN" -d '{}')" 401
kill -TERM "$server"
wait "$server"
unset PLATFORM_RELEASE_RELOAD_TOKEN

# The deploy version in every edge cache key.
# ANCHOR: build-hash
BUILD_HASH=abc123 sitefile cache storefront "https://shop.com/?utm_source=x" | tee decision.json
# ANCHOR_END: build-hash
grep -q '"key": "https://shop.com/#v=abc123&device=desktop"' decision.json
grep -q '"X-Cache-Version": "abc123"' decision.json
echo "configuration.sh: every check passed"
