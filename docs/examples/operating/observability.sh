#!/usr/bin/env bash
# Observability (docs/src/guides/observability.md): `sitefile serve` in front of an origin,
# exporting spans, metrics and logs as OTLP/HTTP JSON to a collector, with the auth token and
# the extra headers on every export, and the outgoing-fetch log on stderr.
set -euo pipefail
source "$SITEFILE_REPO/docs/examples/harness.bash"
cp -r "$SITEFILE_REPO/examples/storefront" storefront

# A stand-in for both the origin (GET: an HTML page) and an OpenTelemetry collector (POST:
# each export written to exports.jsonl, with its path and headers).
cat > stand-in.py <<'PY'
import json
class Handler(StandIn):
    def do_GET(self):
        self.answer(200, b"<!doctype html><title>Home</title><p>Hello</p>", "text/html")
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        with open("exports.jsonl", "a") as out:
            headers = {k: self.headers[k] for k in ("authorization", "x-team", "content-type")}
            out.write(json.dumps({"path": self.path, "headers": headers, "body": body}) + "\n")
        self.answer(200, b"{}")
PY
stand_in stand-in.py stand-in.port
port=$(first_line stand-in.port)
origin=http://127.0.0.1:$port
collector=http://127.0.0.1:$port

# ANCHOR: serve
export PLATFORM_OTEL=on
export PLATFORM_OTEL_TRACES_ENDPOINT=$collector/v1/traces
export PLATFORM_OTEL_METRICS_ENDPOINT=$collector/v1/metrics
export PLATFORM_OTEL_LOGS_ENDPOINT=$collector/v1/logs
export PLATFORM_OTEL_TRACES_SAMPLING_RATE=1
export PLATFORM_OTEL_AUTH_TOKEN="Bearer collector-token"
export PLATFORM_OTEL_HEADERS="x-team=storefront"
export PLATFORM_SITE_NAME=shop PLATFORM_ENV_NAME=staging
export OTEL_LOG_OUTGOING_FETCH=true
sitefile serve storefront --listen 127.0.0.1:0 --origin "$origin" > serve.out 2> serve.err &
server=$!
# ANCHOR_END: serve
started+=("$server")
wait_for_line serve.out

# ANCHOR: requests
base=$(awk 'NR == 1 {sub("/$", "", $3); print $3}' serve.out)   # the address the first line names
curl -s -o /dev/null -D - "$base/" | grep -i '^x-cache:'   # MISS: the origin answered
curl -s -o /dev/null -D - "$base/" | grep -i '^x-cache:'   # HIT: the stored copy
kill -TERM "$server"                                       # exports are flushed on the way out
# ANCHOR_END: requests
wait "$server"
cat serve.err

# The outgoing fetch is a structured log line on stderr...
grep -q 'INFO outgoing fetch method=GET url=http://127.0.0.1:[0-9]*/ status=200 ms=' serve.err
# ...and every signal reached the collector, with the token and the extra header.
python3 - <<'PY'
import json
exports = [json.loads(line) for line in open("exports.jsonl")]
paths = {e["path"] for e in exports}
assert paths == {"/v1/traces", "/v1/metrics", "/v1/logs"}, paths
for e in exports:
    assert e["headers"]["authorization"] == "Bearer collector-token", e["headers"]
    assert e["headers"]["x-team"] == "storefront", e["headers"]
    assert e["headers"]["content-type"] == "application/json", e["headers"]
def attributes(item):
    return {a["key"]: list(a["value"].values())[0] for a in item.get("attributes", [])}
spans = [s for e in exports if e["path"] == "/v1/traces"
         for r in e["body"]["resourceSpans"] for ss in r["scopeSpans"] for s in ss["spans"]]
resource = attributes(next(e for e in exports if e["path"] == "/v1/traces")["body"]["resourceSpans"][0]["resource"])
assert resource["service.name"] == "shop" and resource["deployment.environment"] == "staging", resource
caches = sorted(attributes(s)["sitefile.cache"] for s in spans)
assert caches == ["HIT", "MISS"], caches
span = attributes(spans[0])
assert span["http.request.method"] == "GET" and span["url.path"] == "/", span
assert str(span["http.response.status_code"]) == "200", span
metrics = [m["name"] for e in exports if e["path"] == "/v1/metrics"
           for r in e["body"]["resourceMetrics"] for sm in r["scopeMetrics"] for m in sm["metrics"]]
assert "http.server.request.duration" in metrics, metrics
logs = [l["body"]["stringValue"] for e in exports if e["path"] == "/v1/logs"
        for r in e["body"]["resourceLogs"] for sl in r["scopeLogs"] for l in sl["logRecords"]]
assert "outgoing fetch" in logs, logs
print("spans:", caches, "metrics:", metrics, "logs:", logs)
PY

# With PLATFORM_OTEL=auto (the default), development exports nothing.
rm -f exports.jsonl
# ANCHOR: development
NODE_ENV=development PLATFORM_OTEL=auto sitefile serve storefront --listen 127.0.0.1:0 > dev.out 2> dev.err &
# ANCHOR_END: development
server=$!
started+=("$server")
base=$(served_at dev.out)
curl -s -o /dev/null "$base/"
kill -TERM "$server"
wait "$server"
[ ! -e exports.jsonl ]
echo "observability.sh: every check passed"
