#!/usr/bin/env bash
# OAuth access tokens beside API keys (docs/src/guides/workspace-api.md, "OAuth"): an owner
# who signs in as an OAuth subject, the protected-resource metadata naming the authorization
# server, a token accepted for the service's audience, and one for another audience refused
# with RFC 6750's `invalid_token`. The authorization server is the stand-in under stand-ins/.
set -euo pipefail
source "$SITEFILE_REPO/docs/examples/harness.bash"
here=$SITEFILE_REPO/docs/examples/workspace
PORT=$(free_port)
stand_in "$here/stand-ins/authorization-server.js" issuer.txt
ISSUER_URL=$(first_line issuer.txt)
export PLATFORM_WORKSPACE_ENCRYPTION_KEY=$(head -c 32 /dev/urandom | base64)
export PLATFORM_PUBLIC_URL=http://127.0.0.1:$PORT
API=$PLATFORM_PUBLIC_URL

# ANCHOR: start
export PLATFORM_OAUTH_ISSUER=$ISSUER_URL          # e.g. https://auth.example.com
export PLATFORM_OAUTH_SCOPES=mcp,offline_access
sitefile workspace init --org acme --oauth-subject user-42 > owner-key.txt
sitefile workspace serve --listen 127.0.0.1:$PORT &
# ANCHOR_END: start
started+=($!)
wait_for "$API/api/acme/tools/API_KEY_LIST"

read_metadata() {
# ANCHOR: metadata
curl -sS "$API/api/acme/mcp/self/.well-known/oauth-protected-resource"
# ANCHOR_END: metadata
}
metadata=$(read_metadata)
expect "the authorization server" "$(json '["authorization_servers"][0]' <<< "$metadata")" "$ISSUER_URL"
expect "the scopes" "$(json '["scopes_supported"]' <<< "$metadata")" '["mcp", "offline_access"]'

# A token the authorization server issued to user-42 for this service.
TOKEN=$(curl -sS "$ISSUER_URL/token?sub=user-42&aud=$API")
call() {
# ANCHOR: call
curl -sS -X POST "$API/api/acme/tools/COLLECTION_THREADS_LIST" \
  -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{}'
# ANCHOR_END: call
}
expect "a token for the service" "$(call)" '{"items":[],"totalCount":0,"hasMore":false}'
resource_token=$(curl -sS "$ISSUER_URL/token?sub=user-42&aud=$API/api/acme/mcp/self")
expect "a token for one MCP resource, on that resource" "$(http_code -X POST "$API/api/acme/mcp/self" \
  -H "Authorization: Bearer $resource_token" -H 'content-type: application/json' \
  -d '{"jsonrpc": "2.0", "id": 1, "method": "ping"}')" 200
expect "the same token on the tools endpoint" "$(http_code -X POST \
  "$API/api/acme/tools/COLLECTION_THREADS_LIST" -H "Authorization: Bearer $resource_token" -d '{}')" 401

OTHER=$(curl -sS "$ISSUER_URL/token?sub=user-42&aud=https://another-service.example")
refuse() {
# ANCHOR: refused
curl -sS -D - -o /dev/null -X POST "$API/api/acme/tools/COLLECTION_THREADS_LIST" \
  -H "Authorization: Bearer $OTHER" -H 'content-type: application/json' -d '{}'
# ANCHOR_END: refused
}
refused=$(refuse | tr -d '\r')
expect_in "refused" "$refused" "HTTP/1.1 401"
expect_in "why" "$refused" 'www-authenticate: Bearer realm="workspace", error="invalid_token", error_description="the token is not meant for this resource (aud)"'
stranger=$(curl -sS "$ISSUER_URL/token?sub=someone-else&aud=$API")
expect "a subject that is no member" "$(http_code -X POST \
  "$API/api/acme/tools/COLLECTION_THREADS_LIST" -H "Authorization: Bearer $stranger" -d '{}')" 401
expect "API keys still work" "$(http_code -X POST \
  "$API/api/acme/tools/COLLECTION_THREADS_LIST" -H "Authorization: Bearer $(cat owner-key.txt)" -d '{}')" 200
echo "oauth.sh: passed"
