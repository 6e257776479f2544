#!/usr/bin/env bash
# Getting started with the workspace API (docs/src/getting-started/workspace-api.md): an
# organization and its owner key, the API served on its default address over the default
# SQLite database, a first call, a key scoped to the thread tools, and what that key may and may
# not do. No language model provider is needed for any of it. Run by scripts/docs.sh in a
# scratch directory, with `sitefile` on the PATH.
set -euo pipefail
set -m # the server runs in a process group of its own, stopped as one on exit
source "$SITEFILE_REPO/docs/examples/harness.bash"
expect_nothing_at http://127.0.0.1:8787/

# ANCHOR: init
export PLATFORM_WORKSPACE_ENCRYPTION_KEY=$(head -c 32 /dev/urandom | base64)
KEY=$(sitefile workspace init --org acme)
# ANCHOR_END: init
[[ $KEY =~ ^sfk_[A-Za-z0-9_-]+$ ]] || fail "init printed $KEY"
[ -f data/workspace.db ]

serve() {
# ANCHOR: serve
sitefile workspace serve
# ANCHOR_END: serve
}
serve >serve.log 2>&1 &
started+=($!)
wait_for_line serve.log 'workspace API listening listen=127.0.0.1:8787'

first_call() {
# ANCHOR: first-call
curl -s -w '\n' -X POST http://127.0.0.1:8787/api/acme/tools/COLLECTION_CONNECTIONS_LIST \
  -H "Authorization: Bearer $KEY" -H 'content-type: application/json' -d '{}'
# ANCHOR_END: first-call
}
expect "the first call" "$(first_call)" '{"items":[],"totalCount":0,"hasMore":false}'

# ANCHOR: create-key
ANSWER=$(curl -s -X POST http://127.0.0.1:8787/api/acme/tools/API_KEY_CREATE \
  -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \
  -d '{"name": "chatbot", "expiresIn": 2592000, "permissions": {"self": [
        "COLLECTION_THREADS_CREATE", "COLLECTION_THREADS_GET",
        "COLLECTION_THREAD_MESSAGES_LIST", "COLLECTION_THREADS_LIST"]}}')
echo "$ANSWER"
CHATBOT_KEY=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["key"])' "$ANSWER")
# ANCHOR_END: create-key
grep -q '"name":"chatbot","permissions":{"self":\["COLLECTION_THREADS_CREATE","COLLECTION_THREADS_GET","COLLECTION_THREAD_MESSAGES_LIST","COLLECTION_THREADS_LIST"\]},"expiresAt":"' <<<"$ANSWER"
[[ $CHATBOT_KEY =~ ^sfk_ ]]

use_key() {
# ANCHOR: use-key
curl -s -w '\n' -X POST http://127.0.0.1:8787/api/acme/tools/COLLECTION_THREADS_LIST \
  -H "Authorization: Bearer $CHATBOT_KEY" -H 'content-type: application/json' -d '{}'
curl -s -w '\n' -X POST http://127.0.0.1:8787/api/acme/tools/COLLECTION_CONNECTIONS_LIST \
  -H "Authorization: Bearer $CHATBOT_KEY" -H 'content-type: application/json' -d '{}'
# ANCHOR_END: use-key
}
expected='{"items":[],"totalCount":0,"hasMore":false}
{"error":{"code":"FORBIDDEN","message":"Access denied to: COLLECTION_CONNECTIONS_LIST"}}'
out=$(use_key)
expect "what the chatbot key got" "$out" "$expected"
echo "workspace-api.sh: passed"
