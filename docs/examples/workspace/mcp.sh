#!/usr/bin/env bash
# The MCP endpoints (docs/src/guides/workspace-api.md, "The MCP proxy and gateway", "OAuth"):
# the 401 that points at the protected-resource metadata, the document itself, a session of the
# 2025 revisions through the connection proxy (initialize, tools/call, DELETE), a stateless
# 2026-07-28 call, the agent gateway's composed tools, management over `self`, and the legacy
# route's deprecation. The MCP server is the stand-in under stand-ins/.
set -euo pipefail
source "$SITEFILE_REPO/docs/examples/harness.bash"
here=$SITEFILE_REPO/docs/examples/workspace
PORT=$(free_port)
stand_in "$here/stand-ins/upstream.js" upstream.port
MCP_SERVER_URL=http://127.0.0.1:$(first_line upstream.port)/mcp

export PLATFORM_WORKSPACE_ENCRYPTION_KEY=$(head -c 32 /dev/urandom | base64)
export PLATFORM_PUBLIC_URL=http://127.0.0.1:$PORT
OWNER_KEY=$(sitefile workspace init --org acme)
sitefile workspace serve --listen 127.0.0.1:$PORT &
started+=($!)
API=$PLATFORM_PUBLIC_URL
wait_for "$API/api/acme/tools/API_KEY_LIST"
tool() {
  curl -sS -X POST "$API/api/acme/tools/$1" -H "Authorization: Bearer $OWNER_KEY" \
    -H 'content-type: application/json' -d "$2"
}
CONNECTION_ID=$(tool COLLECTION_CONNECTIONS_CREATE \
  "{\"data\": {\"title\": \"Orders\", \"connection_url\": \"$MCP_SERVER_URL\"}}" | json '["item"]["id"]')
AGENT_ID=$(tool COLLECTION_VIRTUAL_MCP_CREATE \
  "{\"data\": {\"title\": \"Support\", \"connections\": [{\"connection_id\": \"$CONNECTION_ID\"}]}}" | json '["item"]["id"]')

# ANCHOR: key
KEY=$(curl -sS -X POST "$API/api/acme/tools/API_KEY_CREATE" \
  -H "Authorization: Bearer $OWNER_KEY" -H 'content-type: application/json' \
  -d "{\"name\": \"orders-client\", \"permissions\": {\"$CONNECTION_ID\": [\"echo\"]}}" \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["key"])')
# ANCHOR_END: key

unauthorized() {
# ANCHOR: unauthorized
curl -sS -i -X POST "$API/api/acme/mcp/$CONNECTION_ID" \
  -H 'content-type: application/json' -d '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'
# ANCHOR_END: unauthorized
}
challenge=$(unauthorized | grep -i '^www-authenticate:' | tr -d '\r')
expect "the challenge" "$challenge" \
  "www-authenticate: Bearer realm=\"mcp\", resource_metadata=\"$API/api/acme/mcp/$CONNECTION_ID/.well-known/oauth-protected-resource\""

# ANCHOR: metadata
curl -sS "$API/api/acme/mcp/$CONNECTION_ID/.well-known/oauth-protected-resource"
# ANCHOR_END: metadata
echo
metadata=$(curl -sS "$API/.well-known/oauth-protected-resource/api/acme/mcp/$CONNECTION_ID")
expect "the resource (RFC 9728 path form)" "$(json '["resource"]' <<< "$metadata")" "$API/api/acme/mcp/$CONNECTION_ID"

# ANCHOR: initialize
curl -sS -D headers.txt -X POST "$API/api/acme/mcp/$CONNECTION_ID" \
  -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \
  -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc": "2.0", "id": 1, "method": "initialize",
       "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                  "clientInfo": {"name": "curl", "version": "1"}}}'
SESSION=$(grep -i '^mcp-session-id:' headers.txt | cut -d' ' -f2 | tr -d '\r')
# ANCHOR_END: initialize
echo
expect "a session id" "${#SESSION}" 32

call() {
# ANCHOR: call
curl -sS -X POST "$API/api/acme/mcp/$CONNECTION_ID" \
  -H "Authorization: Bearer $KEY" -H "Mcp-Session-Id: $SESSION" \
  -H 'content-type: application/json' -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
       "params": {"name": "echo", "arguments": {"message": "hello"}}}'
# ANCHOR_END: call
}
expect "the tool's answer" "$(call)" '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hello"}]}}'
denied=$(curl -sS -o answer.json -w '%{http_code}' -X POST "$API/api/acme/mcp/$CONNECTION_ID" \
  -H "Authorization: Bearer $KEY" -H "Mcp-Session-Id: $SESSION" -H 'content-type: application/json' \
  -d '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "refund", "arguments": {}}}')
expect "a tool the key is not granted" "$denied" 403
expect "its JSON-RPC code" "$(json '["error"]["code"]' < answer.json)" -32003
invalid=$(curl -sS -X POST "$API/api/acme/mcp/$CONNECTION_ID" \
  -H "Authorization: Bearer $KEY" -H "Mcp-Session-Id: $SESSION" -H 'content-type: application/json' \
  -d '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "echo", "arguments": {}}}')
expect "arguments checked against the tool's schema" "$(json '["error"]["code"]' <<< "$invalid")" -32602

# ANCHOR: end-session
curl -sS -o /dev/null -w '%{http_code}\n' -X DELETE "$API/api/acme/mcp/$CONNECTION_ID" \
  -H "Authorization: Bearer $KEY" -H "Mcp-Session-Id: $SESSION"
# ANCHOR_END: end-session
gone=$(curl -sS -o answer.json -w '%{http_code}' -X POST "$API/api/acme/mcp/$CONNECTION_ID" \
  -H "Authorization: Bearer $KEY" -H "Mcp-Session-Id: $SESSION" -H 'content-type: application/json' \
  -d '{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}')
expect "an ended session" "$gone" 404

stateless() {
# ANCHOR: stateless
curl -sS -X POST "$API/api/acme/mcp/$CONNECTION_ID" \
  -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \
  -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo' \
  -d '{"jsonrpc": "2.0", "id": 6, "method": "tools/call",
       "params": {"name": "echo", "arguments": {"message": "no session"},
                  "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                            "io.modelcontextprotocol/clientCapabilities": {}}}}'
# ANCHOR_END: stateless
}
modern=$(stateless)
expect "a stateless result" "$(json '["result"]["resultType"]' <<< "$modern")" complete
expect "its text" "$(json '["result"]["content"][0]["text"]' <<< "$modern")" "no session"
mismatch=$(curl -sS -o answer.json -w '%{http_code}' -X POST "$API/api/acme/mcp/$CONNECTION_ID" \
  -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \
  -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list' \
  -d '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "echo",
       "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}')
expect "headers that contradict the body" "$mismatch" 400
expect "their code" "$(json '["error"]["code"]' < answer.json)" -32020

gateway() {
# ANCHOR: gateway
curl -sS -X POST "$API/api/acme/mcp/gateway/$AGENT_ID" \
  -H "Authorization: Bearer $OWNER_KEY" -H 'content-type: application/json' \
  -d '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'
# ANCHOR_END: gateway
}
listed=$(gateway)
expect "a composed name" "$(json '["result"]["tools"][0]["name"]' <<< "$listed")" "${CONNECTION_ID:0:8}_echo"
bare=$(curl -sS -X POST "$API/api/acme/mcp/gateway/$AGENT_ID" \
  -H "Authorization: Bearer $OWNER_KEY" -H 'content-type: application/json' \
  -d '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "bare"}}}')
expect "a bare name one member lists" "$(json '["result"]["content"][0]["text"]' <<< "$bare")" bare

manage() {
# ANCHOR: self
curl -sS -X POST "$API/api/acme/mcp/self" \
  -H "Authorization: Bearer $OWNER_KEY" -H 'content-type: application/json' \
  -d '{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
       "params": {"name": "COLLECTION_THREADS_LIST", "arguments": {"limit": 10}}}'
# ANCHOR_END: self
}
managed=$(manage)
expect "structured content" "$(json '["result"]["structuredContent"]["totalCount"]' <<< "$managed")" 0

legacy_call() {
# ANCHOR: legacy
curl -sS -D - -o /dev/null -X POST "$API/mcp/$CONNECTION_ID" \
  -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \
  -d '{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
# ANCHOR_END: legacy
}
legacy=$(legacy_call | tr -d '\r')
expect_in "the deprecation" "$legacy" "deprecation: @1795305600"
expect_in "the successor" "$legacy" "link: </api/acme/mcp/$CONNECTION_ID>; rel=\"successor-version\""

expect "a host the service does not answer for" "$(http_code -X POST "$API/api/acme/mcp/self" \
  -H 'Host: attacker.example' -H 'content-type: application/json' -d '{}')" 403
echo "mcp.sh: passed"
