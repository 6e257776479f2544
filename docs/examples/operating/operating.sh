#!/usr/bin/env bash
# Operating a server (docs/src/guides/operating.md): where `sitefile serve` listens, liveness,
# the connection bounds (a silent connection closed, a stalled body answered 408), the 128
# levels of content JSON, the 256 levels a resolved page is cut at, SIGTERM, and
# `sitefile workspace serve` on SQLite.
set -euo pipefail
source "$SITEFILE_REPO/docs/examples/harness.bash"
cp -r "$SITEFILE_REPO/examples/storefront" storefront

# ANCHOR: serve
export PLATFORM_RELEASE_RELOAD_TOKEN=s3cret
export PLATFORM_HEADER_TIMEOUT_MS=500 PLATFORM_BODY_TIMEOUT_MS=300
export PLATFORM_MAX_CONNECTIONS=64 PLATFORM_SHUTDOWN_TIMEOUT_MS=5000
sitefile serve storefront --listen 127.0.0.1:0 > serve.out 2> serve.err &
server=$!
# ANCHOR_END: serve
started+=("$server")
wait_for_line serve.out
cat serve.out
grep -Eq '^sitefile serve: http://127\.0\.0\.1:[0-9]+/ \(content storefront, revision [0-9a-f]{12}\)$' serve.out
# ANCHOR: liveness
base=$(awk 'NR == 1 {sub("/$", "", $3); print $3}' serve.out)
curl -s "$base/platform/_liveness"; echo
# ANCHOR_END: liveness
expect "liveness" "$(curl -s "$base/platform/_liveness")" OK

# A connection that sends nothing is closed after PLATFORM_HEADER_TIMEOUT_MS; a body that
# stops arriving is answered 408 after PLATFORM_BODY_TIMEOUT_MS.
python3 - "${base#http://}" <<'PY'
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
silent = socket.create_connection((host, int(port)))
started = time.monotonic()
assert silent.recv(100) == b""
waited = time.monotonic() - started
assert 0.4 < waited < 3, waited
stalled = socket.create_connection((host, int(port)))
stalled.sendall(b"POST /.sitefile HTTP/1.1\r\nHost: shop\r\nAuthorization: s3cret\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"blocks\"")
answer = stalled.recv(4096).decode()
assert answer.startswith("HTTP/1.1 408"), answer
assert '"code":"BODY_TIMEOUT"' in answer, answer
print(f"silent connection closed after {waited:.1f} s; stalled body: 408 BODY_TIMEOUT")
PY

# Content JSON deeper than 128 levels is refused.
python3 -c 'print("{\"blocks\": {\"Deep\": " + "[" * 200 + "]" * 200 + "}}")' > deep-reload.json
# ANCHOR: deep-reload
curl -s -X POST "$base/.sitefile" -H "Authorization: $PLATFORM_RELEASE_RELOAD_TOKEN" \
  -H 'content-type: application/json' --data-binary @deep-reload.json -w '\n%{http_code}\n'
# ANCHOR_END: deep-reload
reply=$(curl -s -X POST "$base/.sitefile" -H "Authorization: $PLATFORM_RELEASE_RELOAD_TOKEN" \
  -H 'content-type: application/json' --data-binary @deep-reload.json -w ' %{http_code}')
expect "a deep reload's status" "${reply##* }" 400
expect_in "its code" "$reply" '"code":"INVALID_JSON"'
expect_in "its message" "$reply" 'nesting deeper than 128 levels'

# ANCHOR: stop
kill -TERM "$server"
wait "$server"   # exit 0 once open requests are done (at most PLATFORM_SHUTDOWN_TIMEOUT_MS)
# ANCHOR_END: stop
unset PLATFORM_RELEASE_RELOAD_TOKEN PLATFORM_HEADER_TIMEOUT_MS PLATFORM_BODY_TIMEOUT_MS
unset PLATFORM_MAX_CONNECTIONS PLATFORM_SHUTDOWN_TIMEOUT_MS

# A resolved page: four blocks of 100 nested lists, each ending in a reference to the next.
# Each block alone is within the 128 levels; the page they build is cut at 256.
mkdir -p deep/.platform/blocks
python3 - <<'PY'
import json
def nested(levels, inner):
    for _ in range(levels):
        inner = [inner]
    return inner
for i in range(4):
    inner = {"__resolveType": f"Level{i + 1}"} if i < 3 else "bottom"
    json.dump(nested(100, inner), open(f"deep/.platform/blocks/Level{i}.json", "w"))
page = {"name": "Deep", "path": "/",
        "sections": [{"__resolveType": "site/sections/Deep.tsx", "value": {"__resolveType": "Level0"}}]}
json.dump(page, open("deep/.platform/blocks/pages-deep.json", "w"))
PY
# ANCHOR: deep-page
sitefile resolve deep https://shop.example/ > page.json
python3 -c 'import json; print(json.dumps(json.load(open("page.json"))["effects"]["errors"]))'
# ANCHOR_END: deep-page
python3 - <<'PY'
import json
page = json.load(open("page.json"))
effects = page["effects"]
assert effects["errors"] == [{"resolveType": "page", "context": "depth",
                              "message": "content nests deeper than 256 levels"}], effects
assert effects["degraded"] is True, effects
PY

# The workspace API alone, on SQLite in ./data/ (PostgreSQL and Redis are for several servers).
port=$(free_port)
# ANCHOR: workspace
export PLATFORM_WORKSPACE_ENCRYPTION_KEY=$(head -c 32 /dev/urandom | base64)   # keep it safe
sitefile workspace serve --listen "127.0.0.1:$port" 2> workspace.err &
workspace=$!
# ANCHOR_END: workspace
started+=("$workspace")
wait_for_line workspace.err 'workspace API listening'
expect "a call without a key" "$(http_code -X POST "http://127.0.0.1:$port/api/acme/tools/COLLECTION_CONNECTIONS_LIST" \
  -H 'content-type: application/json' -d '{}')" 401
kill -TERM "$workspace"
wait "$workspace"
grep -q 'shutting down' workspace.err
[ -f data/workspace.db ]
echo "operating.sh: every check passed"
