#!/usr/bin/env bash
# `sitefile serve` under wrk, beside nginx with proxy_cache in front of the same origin (not run
# in CI). On loopback: the origin is nginx serving static pages; the peer is nginx with
# proxy_cache in front of it; sitefile serve --origin is in front of it too:
#   hit     one URL answered from the cache, a 20 KB page and a 200 KB page: three runs each,
#           nginx and sitefile alternating, and the median of sitefile/nginx requests/s;
#   miss    a new query string on every request, so every request goes to the origin;
#   asJson  a corpus page's JSON, resolved by sitefile itself (nginx has no peer for it).
# Prints requests per second and the 99th percentile latency of each. Then the memory of large
# misses: 20 concurrent downloads of a 30 MB origin answer through `sitefile serve`, each a miss
# (too large to keep), with the server's resident memory before, at its peak and after.
#
#   bash benches/http/run.sh [duration, default 10s]
# Installs wrk and nginx from Debian's packages when missing (as root).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
duration=${1:-10s}
connections=64
# shellcheck source=scripts/need.sh
source scripts/need.sh
need wrk wrk
need nginx nginx-light
corpus=${SITEFILE_CORPUS:-$root/../shared/corpus}

cargo build --release --locked -q -p sitefile-server
sitefile=$root/target/release/sitefile

work=$(mktemp -d /tmp/sitefile-http-bench.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
origin_port=$(free_port)
peer_port=$(free_port)

# A 20 KB page, as a storefront page's HTML, and a 200 KB one, as a large listing's.
mkdir -p "$work/www" "$work/cache"
# nginx workers run as an unprivileged user: they must read the page and write the cache.
chmod 755 "$work" "$work/www"
chmod 777 "$work/cache"
python3 -c 'print("<!DOCTYPE html><html><body>" + "<p>sitefile edge bench</p>" * 800 + "</body></html>")' \
  >"$work/www/index.html"
python3 -c 'print("<!DOCTYPE html><html><body>" + "<p>sitefile edge bench</p>" * 8000 + "</body></html>")' \
  >"$work/www/page200.html"
head -c 30000000 /dev/zero | tr '\0' 'x' >"$work/www/large.txt"
cat >"$work/nginx.conf" <<CONF
worker_processes 2;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  proxy_cache_path $work/cache levels=1:2 keys_zone=bench:10m max_size=256m inactive=60m;
  server {
    listen 127.0.0.1:$origin_port;
    root $work/www;
    location / {
      default_type text/html;
      add_header Cache-Control "public, max-age=60";
      try_files \$uri /index.html =404;
    }
  }
  server {
    listen 127.0.0.1:$peer_port;
    location / {
      proxy_pass http://127.0.0.1:$origin_port;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache bench;
      proxy_cache_valid 200 10m;
      proxy_cache_lock on;
      add_header X-Cache \$upstream_cache_status;
    }
  }
}
CONF
nginx -c "$work/nginx.conf"

# sitefile serve in front of the same origin, and over a corpus site for page JSON (stopped on
# exit by their arguments: start_serve runs in a command substitution, so `pids` misses them).
trap 'pkill -f "$sitefile serve" 2>/dev/null || true; cleanup' EXIT
start_serve() { # <log> <args...>
  local log=$1
  shift
  "$sitefile" serve "$@" --listen 127.0.0.1:0 >"$log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    if grep -qo 'http://[0-9.:]*' "$log" 2>/dev/null; then
      grep -o 'http://[0-9.:]*' "$log" | head -n1
      return
    fi
    sleep 0.1
  done
  echo "sitefile serve did not start:" >&2
  cat "$log" >&2
  exit 1
}
edge=$(start_serve "$work/edge.log" examples/storefront --origin "http://127.0.0.1:$origin_port")
site=$(head -n1 "$corpus/urls.txt" | cut -d' ' -f1)
page=$(head -n1 "$corpus/urls.txt" | cut -d' ' -f2 | sed -E 's#^https?://[^/]+##')
pages=$(start_serve "$work/pages.log" "$corpus/$site")

cat >"$work/miss.lua" <<'LUA'
request = function() return wrk.format("GET", "/?bench=" .. math.random(1, 1000000000)) end
LUA

# wrk <name> <url> [script]: one line, requests per second and p99; the requests per second
# are left in $rate.
run() {
  local name=$1 url=$2 script=${3:-}
  curl -fsS -o /dev/null "$url" # warm (and fill the cache)
  local args=(-t2 -c"$connections" -d"$duration" --latency)
  [ -n "$script" ] && args+=(-s "$script")
  local out
  out=$(wrk "${args[@]}" "$url")
  rate=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  printf '%-28s %12s req/s   p99 %s\n' "$name" "$rate" "$(awk '$1 == "99%" {print $2}' <<<"$out")"
}

# hits <label> <path>: three runs of nginx and sitefile alternating, then the median ratio.
hits() {
  local label=$1 path=$2 ratios=()
  for round in 1 2 3; do
    run "hit $label: nginx ($round)" "http://127.0.0.1:$peer_port$path"
    local peer=$rate
    run "hit $label: sitefile ($round)" "$edge$path"
    ratios+=("$(awk -v a="$rate" -v b="$peer" 'BEGIN {printf "%.2f", a / b}')")
  done
  printf '%-28s %s (runs: %s)\n' "hit $label: sitefile/nginx" \
    "$(printf '%s\n' "${ratios[@]}" | sort -n | sed -n 2p)" "${ratios[*]}"
}

echo "wrk -t2 -c$connections -d$duration on loopback ($(nproc) cores), sitefile $(git rev-parse --short HEAD)"
hits "20 KB" /
hits "200 KB" /page200.html
run "miss: nginx proxy_cache" "http://127.0.0.1:$peer_port/" "$work/miss.lua"
run "miss: sitefile serve" "$edge/" "$work/miss.lua"
run "asJson: sitefile ($site)" "$pages$page?asJson"

# Large misses: the edge's memory while 20 visitors each download a 30 MB answer.
# start_serve runs in a command substitution: its pid is found by its arguments.
edge_pid=$(pgrep -n -f "serve examples/storefront --origin http://127.0.0.1:$origin_port")
rss() { awk '/^VmRSS/ {printf "%d MiB", $2 / 1024}' "/proc/$edge_pid/status"; }
before=$(rss)
for i in $(seq 20); do
  curl -fsS -o /dev/null "$edge/large.txt?visitor=$i" &
done
wait_downloads() { for job in $(jobs -p); do wait "$job"; done; }
peak=0
while [ -n "$(jobs -pr)" ]; do
  now=$(awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$edge_pid/status")
  [ "$now" -gt "$peak" ] && peak=$now
  sleep 0.05
done
wait_downloads
sleep 1
printf '%-28s before %s, peak %d MiB, after %s\n' "20 large misses (30 MB each)" "$before" "$peak" "$(rss)"
