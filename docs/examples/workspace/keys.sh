#!/usr/bin/env bash
# The workspace API's keys (docs/src/guides/workspace-api.md, "API keys"): the owner key
# `workspace init` prints, a narrower key minted with API_KEY_CREATE, what each may call, the
# listing without values, revocation, and the database holding only a hash.
set -euo pipefail
source "$SITEFILE_REPO/docs/examples/harness.bash"
PORT=$(free_port)

# ANCHOR: start
export PLATFORM_WORKSPACE_ENCRYPTION_KEY=$(head -c 32 /dev/urandom | base64)  # keep it: it decrypts stored credentials
export PLATFORM_PUBLIC_URL=http://127.0.0.1:$PORT
OWNER_KEY=$(sitefile workspace init --org acme)   # prints the owner key once
sitefile workspace serve --listen 127.0.0.1:$PORT &
API=$PLATFORM_PUBLIC_URL
# ANCHOR_END: start
started+=($!)
wait_for "$API/api/acme/tools/API_KEY_LIST"
expect "the owner key's shape" "${OWNER_KEY:0:4}" "sfk_"
expect "the default database" "$(ls data/workspace.db)" "data/workspace.db"

owner_call() {
# ANCHOR: owner-call
curl -sS -X POST "$API/api/acme/tools/COLLECTION_CONNECTIONS_LIST" \
  -H "Authorization: Bearer $OWNER_KEY" -H 'content-type: application/json' -d '{}'
# ANCHOR_END: owner-call
}
expect "an empty listing" "$(owner_call)" '{"items":[],"totalCount":0,"hasMore":false}'

# ANCHOR: create-key
curl -sS -X POST "$API/api/acme/tools/API_KEY_CREATE" \
  -H "Authorization: Bearer $OWNER_KEY" -H 'content-type: application/json' \
  -d '{"name": "support-bot",
       "permissions": {"self": ["COLLECTION_THREADS_CREATE", "COLLECTION_THREADS_GET",
                                "COLLECTION_THREAD_MESSAGES_LIST", "COLLECTION_THREADS_LIST"]},
       "expiresIn": 2592000}' > support-key.json
SUPPORT_KEY=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["key"])' < support-key.json)
# ANCHOR_END: create-key
expect "the new key's name" "$(json '["name"]' < support-key.json)" "support-bot"
expect "the new key's shape" "${SUPPORT_KEY:0:4}" "sfk_"
expect "a 43-character value after sfk_" "${#SUPPORT_KEY}" "47"
KEY_ID=$(json '["id"]' < support-key.json)

status() { curl -sS -o answer.json -w '%{http_code}' -X POST "$API/api/acme/tools/$1" \
  -H "Authorization: Bearer $2" -H 'content-type: application/json' -d "${3:-{\}}"; }
expect "a granted tool" "$(status COLLECTION_THREADS_LIST "$SUPPORT_KEY")" 200
expect "a tool not granted" "$(status COLLECTION_CONNECTIONS_LIST "$SUPPORT_KEY")" 403
expect "its code" "$(json '["error"]["code"]' < answer.json)" FORBIDDEN
expect "minting beyond its own permissions" \
  "$(status API_KEY_CREATE "$OWNER_KEY" '{"name": "x", "permissions": {"self": ["API_KEY_CREATE"]}}')" 200
WIDE_BUT_SMALL=$(json '["key"]' < answer.json)
expect "a key cannot grant what it does not hold" \
  "$(status API_KEY_CREATE "$WIDE_BUT_SMALL" '{"name": "y", "permissions": {"self": ["API_KEY_DELETE"]}}')" 403
expect "another organization's path" "$(http_code -X POST "$API/api/other/tools/COLLECTION_THREADS_LIST" \
  -H "Authorization: Bearer $SUPPORT_KEY" -d '{}')" 403
expect "a string expiresIn" \
  "$(status API_KEY_CREATE "$OWNER_KEY" '{"name": "z", "expiresIn": "30d"}')" 400

list_keys() {
# ANCHOR: list-keys
curl -sS -X POST "$API/api/acme/tools/API_KEY_LIST" \
  -H "Authorization: Bearer $OWNER_KEY" -H 'content-type: application/json' -d '{}'
# ANCHOR_END: list-keys
}
listing=$(list_keys)
expect_in "the listing names the key" "$listing" '"name":"support-bot"'
case "$listing" in *sfk_*) echo "the listing shows a key value" >&2; exit 1 ;; esac

# The database holds a hash of each key, never the key.
if grep -rq "$SUPPORT_KEY" data; then echo "a key value is stored" >&2; exit 1; fi

# ANCHOR: delete-key
curl -sS -X POST "$API/api/acme/tools/API_KEY_DELETE" \
  -H "Authorization: Bearer $OWNER_KEY" -H 'content-type: application/json' \
  -d "{\"keyId\": \"$KEY_ID\"}"
# ANCHOR_END: delete-key
echo
expect "a revoked key" "$(status COLLECTION_THREADS_LIST "$SUPPORT_KEY")" 401
expect "its code" "$(json '["error"]["code"]' < answer.json)" UNAUTHORIZED
expect "no key" "$(http_code -X POST "$API/api/acme/tools/API_KEY_LIST")" 401
echo "keys.sh: passed"
