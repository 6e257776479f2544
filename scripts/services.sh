#!/usr/bin/env bash
# Throwaway services for the test suite, sourced by scripts/test.sh:
#   services_start  starts PostgreSQL (initdb in a temp dir, loopback, trust auth, free port)
#                   and Redis (loopback, free port, no persistence) and exports
#                   SITEFILE_TEST_POSTGRES_URL and SITEFILE_TEST_REDIS_URL;
#   services_stop   stops them and removes the temp dir.
# Installs Debian's PostgreSQL server when its binaries (/usr/lib/postgresql/*/bin) are missing,
# and Debian's redis-server when `redis-server` is missing (as root).

_services_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

_services_pgbin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1
}

services_start() {
  local pgbin
  pgbin=$(_services_pgbin)
  if [ -z "$pgbin" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "services.sh: installing PostgreSQL from Debian's packages" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    pgbin=$(_services_pgbin)
  fi
  if [ -z "$pgbin" ] || [ ! -x "$pgbin/initdb" ]; then
    echo "services.sh: PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin" >&2
    return 1
  fi
  SITEFILE_SERVICES_DIR=$(mktemp -d /tmp/sitefile-services.XXXXXX)
  export SITEFILE_SERVICES_DIR
  local pgdata="$SITEFILE_SERVICES_DIR/pgdata" port
  port=$(_services_free_port)
  mkdir -p "$pgdata"
  # PostgreSQL refuses to run as root: use the postgres account when we are root.
  local as=()
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown -R postgres: "$SITEFILE_SERVICES_DIR"
    chmod 755 "$SITEFILE_SERVICES_DIR"
    as=(runuser -u postgres --)
  fi
  "${as[@]}" "$pgbin/initdb" -D "$pgdata" -A trust -U postgres --no-sync >"$SITEFILE_SERVICES_DIR/initdb.log" 2>&1 \
    || { cat "$SITEFILE_SERVICES_DIR/initdb.log" >&2; return 1; }
  "${as[@]}" "$pgbin/pg_ctl" -D "$pgdata" -l "$pgdata/server.log" -w \
    -o "-p $port -k $SITEFILE_SERVICES_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300" start >/dev/null \
    || { cat "$pgdata/server.log" >&2; return 1; }
  SITEFILE_PGCTL="$pgbin/pg_ctl"
  export SITEFILE_PGCTL
  export SITEFILE_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres"
  echo "services.sh: PostgreSQL on 127.0.0.1:$port" >&2
  _services_redis_start || { services_stop; return 1; }
}

_services_redis_start() {
  if ! command -v redis-server >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "services.sh: installing redis-server from Debian's packages" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  fi
  if ! command -v redis-server >/dev/null 2>&1; then
    echo "services.sh: redis-server not found" >&2
    return 1
  fi
  local dir="$SITEFILE_SERVICES_DIR/redis" port
  port=$(_services_free_port)
  mkdir -p "$dir"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
    --dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
    || { cat "$dir/redis.log" >&2 2>/dev/null; return 1; }
  local i
  for i in $(seq 50); do
    [ -s "$dir/redis.pid" ] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
  [ -s "$dir/redis.pid" ] || { cat "$dir/redis.log" >&2; return 1; }
  export SITEFILE_TEST_REDIS_URL="redis://127.0.0.1:$port/"
  echo "services.sh: Redis on 127.0.0.1:$port" >&2
}

services_stop() {
  [ -n "${SITEFILE_SERVICES_DIR:-}" ] || return 0
  local as=()
  [ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
  "${as[@]}" "$SITEFILE_PGCTL" -D "$SITEFILE_SERVICES_DIR/pgdata" -m immediate stop >/dev/null 2>&1 || true
  if [ -s "$SITEFILE_SERVICES_DIR/redis/redis.pid" ]; then
    local pid i
    pid=$(cat "$SITEFILE_SERVICES_DIR/redis/redis.pid")
    kill "$pid" 2>/dev/null || true
    # Redis writes its log while it shuts down: removing the directory under it races.
    for i in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  # A straggler's last write must not fail the run that used these services.
  rm -rf "$SITEFILE_SERVICES_DIR" 2>/dev/null || { sleep 1; rm -rf "$SITEFILE_SERVICES_DIR" || true; }
  unset SITEFILE_SERVICES_DIR SITEFILE_TEST_POSTGRES_URL SITEFILE_TEST_REDIS_URL
}
