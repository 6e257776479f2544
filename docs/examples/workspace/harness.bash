# Sourced by the workspace examples beside it (not an example itself): a free loopback port,
# background processes stopped when the script exits, and the checks the examples make.

# A loopback port nothing listens on.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The background processes to stop at exit (append `$!` after starting one).
started=()
stop_started() {
  for pid in "${started[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop_started EXIT

# Waits until something answers HTTP at $1 (any status).
wait_for() {
  for _ in $(seq 150); do
    if curl -s -o /dev/null "$1"; then return 0; fi
    sleep 0.1
  done
  echo "nothing answers at $1" >&2
  exit 1
}

# The first line a background process wrote to file $1 (waits for it).
first_line() {
  for _ in $(seq 150); do
    if [ -s "$1" ]; then head -n 1 "$1"; return 0; fi
    sleep 0.1
  done
  echo "$1 stayed empty" >&2
  exit 1
}

# Fails unless $2 (what happened) equals $3 (what should have), saying $1.
expect() {
  if [ "$2" != "$3" ]; then
    echo "$1: expected [$3], got [$2]" >&2
    exit 1
  fi
}

# Fails unless text $2 contains $3, saying $1.
expect_in() {
  case "$2" in
    *"$3"*) ;;
    *) echo "$1: [$3] not in [$2]" >&2; exit 1 ;;
  esac
}

# The value at a JSON path ($1, Python subscripts such as ["item"]["id"]) of standard input.
json() {
  python3 -c "import json, sys; v = json.load(sys.stdin)$1; print(v if isinstance(v, str) else json.dumps(v))"
}
