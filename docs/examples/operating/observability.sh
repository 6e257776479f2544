#!/usr/bin/env bash
# Observability (docs/src/guides/observability.md): `sitefile serve` in front of an origin,
# exporting spans, metrics and logs as OTLP/HTTP JSON to a collector, with the auth token and
# the extra headers on every export, and the outgoing-fetch log on stderr.
set -euo pipefail
cp -r "$SITEFILE_REPO/examples/storefront" storefront
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

# A stand-in for both the origin (GET: an HTML page) and an OpenTelemetry collector (POST:
# each export written to exports.jsonl, with its path and headers).
cat > stand-in.py <<'PY'
import http.server, json
class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, type, body):
        self.send_response(200)
        self.send_header("content-type", type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        self.answer("text/html", b"<!doctype html><title>Home</title><p>Hello</p>")
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        with open("exports.jsonl", "a") as out:
            headers = {k: self.headers[k] for k in ("authorization", "x-team", "content-type")}
            out.write(json.dumps({"path": self.path, "headers": headers, "body": body}) + "\n")
        self.answer("application/json", b"{}")
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
PY
python3 stand-in.py > port.txt &
pids+=($!)
for _ in $(seq 100); do [ -s port.txt ] && break; sleep 0.1; done
port=$(cat port.txt)
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
pids+=("$server")
for _ in $(seq 100); do [ -s serve.out ] && break; sleep 0.1; done

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
pids+=("$server")
for _ in $(seq 100); do [ -s dev.out ] && break; sleep 0.1; done
base=$(awk 'NR == 1 {sub("/$", "", $3); print $3}' dev.out)
curl -s -o /dev/null "$base/"
kill -TERM "$server"
wait "$server"
[ ! -e exports.jsonl ]
echo "observability.sh: every check passed"
