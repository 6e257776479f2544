#!/usr/bin/env bash
# HTTP endpoints (docs/src/reference/endpoints.md): a sample of its tables checked against
# `sitefile serve --workspace` (no origin, no tokens set): the admin protocol's preflights, 405s,
# token refusals and renderer-less answers, page JSON, the built-in view, and the workspace
# API's REST, MCP and discovery answers to wrong methods and unknown paths.
set -euo pipefail
source "$SITEFILE_REPO/docs/examples/harness.bash"
SITE=$SITEFILE_REPO/examples/storefront
PORT=$(free_port)
unset PURGE_TOKEN PLATFORM_RELEASE_RELOAD_TOKEN NODE_ENV
export PLATFORM_WORKSPACE_ENCRYPTION_KEY=$(head -c 32 /dev/urandom | base64)
export PLATFORM_PUBLIC_URL=http://127.0.0.1:$PORT
sitefile workspace init --org acme > /dev/null
sitefile serve "$SITE" --listen 127.0.0.1:$PORT --workspace > serve.out &
started+=($!)
BASE=http://127.0.0.1:$PORT
wait_for "$BASE/platform/_liveness"

# `answer METHOD PATH [curl args]`: the status, then the body in answer.txt, the head in head.txt.
answer() {
  local method=$1 path=$2
  shift 2
  curl -sS -o answer.txt -D head.txt -w '%{http_code}' -X "$method" "$BASE$path" "$@"
}
header() { tr -d '\r' < head.txt | grep -i "^$1:" | cut -d' ' -f2- ; }
code() { json '["error"]["code"]' < answer.txt; }

# The admin protocol.
expect "liveness" "$(answer GET /platform/_liveness)" 200
expect "its body" "$(cat answer.txt)" OK
expect "a preflight" "$(answer OPTIONS /live/_meta -H 'Origin: https://editor.example')" 204
expect "its Allow" "$(header allow)" "GET, OPTIONS"
expect "its origin echoed" "$(header access-control-allow-origin)" "https://editor.example"
expect "another method" "$(answer DELETE /.sitefile)" 405
expect "its code" "$(code)" METHOD_NOT_ALLOWED
expect "its Allow" "$(header allow)" "GET, POST, OPTIONS"
expect "the content map" "$(answer GET /.sitefile)" 200
expect "its cache control" "$(header cache-control)" no-cache
expect "a reload without the variable set" "$(answer POST /.sitefile -d '{}')" 401
expect "its code" "$(code)" UNAUTHORIZED
expect "a purge without the variable set" "$(answer POST /_cache/purge -d '{"paths": ["/"]}')" 401
expect "its challenge" "$(header www-authenticate)" Bearer
expect "a loader purge" "$(answer POST /_cache/purge-loaders)" 401
expect "a preview without an origin" "$(answer GET /live/previews/site%2Fsections%2FHero.tsx)" 503
expect "its code" "$(code)" RENDERER_UNAVAILABLE
expect "the empty preview frame" "$(answer GET /live/previews)" 200
expect "an invoke without an origin" "$(answer POST /platform/invoke/site/loaders/x.ts -d '{}')" 404
expect "its code" "$(code)" UNKNOWN_HANDLER
expect "a multipart invoke" "$(answer POST /platform/invoke/x -F a=b)" 415
expect "an empty batch" "$(answer POST /platform/invoke -H 'content-type: application/json' -d '{}')" 400
expect "its code" "$(code)" INVALID_BODY

# Pages and page JSON.
expect "page JSON" "$(answer GET '/?renderJson')" 200
etag=$(header etag)
expect "page JSON unchanged" "$(answer GET '/?renderJson' -H "If-None-Match: $etag")" 304
expect "page JSON of the not-found page" "$(answer GET '/no/such/page?renderJson')" 404
expect "its mark" "$(json '["notFound"]' < answer.txt)" true
expect "legacy page JSON of the not-found page" "$(answer GET '/no/such/page?asJson')" 404
expect "a section index that is no number" "$(answer GET '/?renderJson&__section=x')" 404
expect "its body" "$(cat answer.txt)" '{"status":404,"notFound":true}'
expect "a page JSON preflight" "$(answer OPTIONS '/?renderJson')" 204
expect "the view" "$(answer GET /)" 200
expect "the view of the not-found page" "$(answer GET /no/such/page)" 404
expect "a page POST without an origin" "$(answer POST / -d x)" 405
expect "its code" "$(code)" METHOD_NOT_ALLOWED
expect "its Allow" "$(header allow)" "GET, HEAD"

# The workspace API.
expect "a tool by GET" "$(answer GET /api/acme/tools/API_KEY_LIST)" 405
expect "its code" "$(code)" METHOD_NOT_ALLOWED
expect "no key" "$(answer POST /api/acme/tools/API_KEY_LIST)" 401
expect "its challenge" "$(header www-authenticate)" 'Bearer realm="workspace"'
expect "a path naming no route" "$(answer GET /api/acme/nothing)" 404
expect "its code" "$(code)" NOT_FOUND
expect "a stream without a key" "$(answer GET /api/acme/pilot/threads/t/stream)" 401
expect "self by GET" "$(answer GET /api/acme/mcp/self)" 405
expect "its Allow" "$(header allow)" POST
expect "its JSON-RPC code" "$(json '["error"]["code"]' < answer.txt)" -32600
expect "the proxy by PUT" "$(answer PUT /api/acme/mcp/c1)" 405
expect "its Allow" "$(header allow)" "GET, POST, DELETE"
expect "the legacy route by PUT" "$(answer PUT /mcp/c1)" 405
expect "its deprecation" "$(header deprecation)" "@1795305600"
expect "a form body on MCP" "$(answer POST /api/acme/mcp/self -d '{}')" 415
expect "another host on MCP" "$(answer POST /api/acme/mcp/self -H 'Host: attacker.example' \
  -H 'content-type: application/json' -d '{}')" 403
expect "its JSON-RPC code" "$(json '["error"]["code"]' < answer.txt)" -32000
expect "the metadata" "$(answer GET /api/acme/mcp/gateway/a1/.well-known/oauth-protected-resource)" 200
expect "its resource" "$(json '["resource"]' < answer.txt)" "$BASE/api/acme/mcp/gateway/a1"
expect "the metadata, path form" "$(answer GET /.well-known/oauth-protected-resource/mcp/c1)" 200
expect "its resource" "$(json '["resource"]' < answer.txt)" "$BASE/mcp/c1"
expect "the metadata by POST" "$(answer POST /api/acme/mcp/self/.well-known/oauth-protected-resource)" 405
expect "its Allow" "$(header allow)" "GET,HEAD"
echo "endpoints.sh: passed"
