#!/usr/bin/env bash
# Fast Deploy (docs/src/guides/fast-deploy.md): `sitefile kv sync` and `migrate` against a
# Workers KV namespace (a local stand-in for Cloudflare's API), and a server whose Redis does
# not answer at start: it waits PLATFORM_FAST_DEPLOY_START_TIMEOUT_MS, then serves the site
# directory marked `X-Sitefile-Content: directory-fallback` and refuses reloads.
set -euo pipefail
source "$SITEFILE_REPO/docs/examples/harness.bash"
cp -r "$SITEFILE_REPO/examples/storefront" storefront

# A stand-in for Cloudflare's Workers KV API: values under
# /client/v4/accounts/<account>/storage/kv/namespaces/<namespace>/values/<key>, a bearer token;
# the keys it holds are written to keys.json after every change.
cat > workers-kv.py <<'PY'
import json, urllib.parse
PREFIX = "/client/v4/accounts/my-account/storage/kv/namespaces/my-namespace/values/"
values = {}
class Handler(StandIn):
    def key(self):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        assert path.startswith(PREFIX), path
        assert self.headers["authorization"] == "Bearer my-token"
        return path[len(PREFIX):]
    def changed(self):
        with open("keys.json", "w") as out:
            json.dump({k: len(v) for k, v in sorted(values.items())}, out)
        self.answer(200, b'{"success": true, "errors": []}')
    def do_GET(self):
        key = self.key()
        if key in values:
            self.answer(200, values[key], "application/octet-stream")
        else:
            self.answer(404, b'{"success": false, "errors": [{"message": "key not found"}]}')
    def do_PUT(self):
        values[self.key()] = self.rfile.read(int(self.headers["content-length"]))
        self.changed()
    def do_DELETE(self):
        values.pop(self.key(), None)
        self.changed()
PY
stand_in workers-kv.py workers-kv.port
kv_port=$(first_line workers-kv.port)
export CLOUDFLARE_API_BASE_URL=http://127.0.0.1:$kv_port/client/v4

# ANCHOR: sync
export EDGE_KV_NAMESPACE_ID=my-namespace EDGE_ACCOUNT_ID=my-account EDGE_API_TOKEN=my-token
sitefile kv sync storefront --deployment-id 1a2b3c --set-live
# ANCHOR_END: sync
# ANCHOR: migrate
sitefile kv migrate --to 4d5e6f --set-live
# ANCHOR_END: migrate
python3 - <<'PY'
import json
keys = json.load(open("keys.json"))
expected = {"index:deployments", "index:live", "sitefile:1a2b3c", "index:revision:1a2b3c",
            "sitefile:4d5e6f", "index:revision:4d5e6f"}
assert set(keys) == expected, keys
assert keys["sitefile:1a2b3c"] == keys["sitefile:4d5e6f"], keys
assert keys["index:live"] == len("4d5e6f"), keys
print("keys:", ", ".join(sorted(keys)))
PY
unset EDGE_KV_NAMESPACE_ID EDGE_ACCOUNT_ID EDGE_API_TOKEN

# A store that does not answer (nothing listens on port 1).
# ANCHOR: fallback
export PLATFORM_FAST_DEPLOY=1 PLATFORM_KV=redis://127.0.0.1:1/0 PLATFORM_DEPLOYMENT_ID=4d5e6f
export PLATFORM_FAST_DEPLOY_START_TIMEOUT_MS=1000
export PLATFORM_RELEASE_RELOAD_TOKEN=s3cret
sitefile serve storefront --listen 127.0.0.1:0 > serve.out 2> serve.err &
server=$!
# ANCHOR_END: fallback
started+=("$server")
wait_for_line serve.out
cat serve.out
grep -q 'content storefront as a directory fallback: PLATFORM_KV did not answer' serve.out
# ANCHOR: fallback-answers
base=$(awk 'NR == 1 {sub("/$", "", $3); print $3}' serve.out)   # the address the first line names
curl -s -D - -o /dev/null "$base/platform/_liveness" | grep -i -e '^HTTP' -e '^x-sitefile-content'
curl -s -X POST "$base/.sitefile" -H "Authorization: $PLATFORM_RELEASE_RELOAD_TOKEN" \
  -H 'content-type: application/json' -d '{"blocks": {}}' -w '\n%{http_code}\n'
# ANCHOR_END: fallback-answers
expect "liveness" "$(http_code "$base/platform/_liveness")" 200
curl -s -D - -o /dev/null "$base/" | grep -qi '^x-sitefile-content: directory-fallback'
reply=$(curl -s -X POST "$base/.sitefile" -H "Authorization: $PLATFORM_RELEASE_RELOAD_TOKEN" \
  -H 'content-type: application/json' -d '{"blocks": {}}' -w ' %{http_code}')
expect "a reload's status" "${reply##* }" 503
expect_in "a reload's code" "$reply" '"code":"KV_WRITE_FAILED"'
grep -q 'PLATFORM_FAST_DEPLOY_START_TIMEOUT_MS' serve.err
kill -TERM "$server"
wait "$server"
echo "fast-deploy.sh: every check passed"
