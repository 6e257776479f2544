# Sourced by the book's example scripts (docs/examples/**/*.sh), not an example itself:
#
#   source "$SITEFILE_REPO/docs/examples/harness.bash"
#
# What the scripts do around the commands a reader sees: stop what they started when they exit,
# wait for a server and read its address, pick free ports, run stand-in servers, and check what
# came back. Sourcing it defines functions and sets the exit trap; it runs nothing else.

# Fails the script, saying why (prefixed with the script's name).
fail() {
  echo "${0##*/}: $*" >&2
  exit 1
}

# --- Background processes --------------------------------------------------------------------

# The background processes to stop at exit (append `$!` after starting one). One that leads a
# process group of its own (started under `set -m`) is stopped with its whole group. Only the
# shell's own children still running are signalled: a process the script already stopped and
# waited for is not, so a reused process id is never hit.
started=()
stop_started() {
  local pid running
  running=" $(jobs -pr | tr '\n' ' ') "
  for pid in "${started[@]}"; do
    [[ $running == *" $pid "* ]] || continue
    kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
trap stop_started EXIT

# --- Ports and addresses ---------------------------------------------------------------------

# A loopback port nothing listens on.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Fails when something already answers at URL $1: the page's commands use that fixed address.
expect_nothing_at() {
  if curl -s --max-time 2 -o /dev/null "$1"; then
    fail "$1 is taken; stop what listens there"
  fi
}

# wait_for URL [SECONDS [LOG]]: waits until something answers HTTP at URL (any status); fails
# after SECONDS (15), showing the file LOG when one is named.
wait_for() {
  local seconds=${2:-15}
  for _ in $(seq $((seconds * 10))); do
    if curl -s --max-time 2 -o /dev/null "$1"; then return 0; fi
    sleep 0.1
  done
  fail "nothing answers at $1 after $seconds s${3:+; $3 says:
$(cat "$3")}"
}

# wait_for_line FILE [PATTERN]: waits until FILE, written by a background process, holds a whole
# first line, or a line matching the grep PATTERN; fails after 15 s, showing FILE (and the
# process's stderr when FILE is NAME.out and it went to NAME.err).
wait_for_line() {
  for _ in $(seq 150); do
    if [ -n "${2-}" ]; then
      if grep -q -- "$2" "$1" 2>/dev/null; then return 0; fi
    elif [ -s "$1" ] && [ "$(wc -l < "$1")" -gt 0 ]; then
      return 0
    fi
    sleep 0.1
  done
  local message err=${1%.out}.err
  message="nothing${2:+ matching [$2]} in $1 after 15 s: $(cat "$1" 2>/dev/null)"
  if [ "$err" != "$1" ] && [ -s "$err" ]; then message+=$'\n'"$err: $(cat "$err")"; fi
  fail "$message"
}

# The first line a background process wrote to file $1 (waits for it).
first_line() {
  wait_for_line "$1"
  head -n 1 "$1"
}

# The address `sitefile serve` names on the first line it wrote to file $1
# ("sitefile serve: http://127.0.0.1:PORT/ (…)"), without the closing slash (waits for it).
served_at() {
  wait_for_line "$1"
  local address
  address=$(sed -n '1s|^sitefile serve: \(http://[^ ]*\)/ .*|\1|p' "$1")
  [ -n "$address" ] || fail "no address on the first line of $1: $(head -n 1 "$1")"
  echo "$address"
}

# --- Stand-in servers ------------------------------------------------------------------------

# stand_in FILE PORT_FILE: runs the stand-in server FILE in the background until the script
# exits, on a free loopback port; what it prints first (its port, or its address) goes to
# PORT_FILE. A .js file is a Node program of its own. A .py file defines the request handler
# class `Handler` on `StandIn`: http.server's BaseHTTPRequestHandler with
# `answer(status, body, type="application/json")` and no request log.
stand_in() {
  case "$1" in
    *.js) node "$1" > "$2" & ;;
    *.py) python3 -c "$stand_in_server" "$1" > "$2" & ;;
    *) fail "stand_in: $1 is neither a .js nor a .py file" ;;
  esac
  started+=($!)
}
stand_in_server='
import http.server, sys

class StandIn(http.server.BaseHTTPRequestHandler):
    def answer(self, status, body, type="application/json"):
        self.send_response(status)
        self.send_header("content-type", type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

exec(open(sys.argv[1]).read())
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
'

# --- Checks ----------------------------------------------------------------------------------

# expect LABEL GOT WANT [LOG]: fails unless GOT (what happened) equals WANT (what should have),
# saying LABEL, and showing the file LOG when one is named.
expect() {
  if [ "$2" != "$3" ]; then
    fail "$1: expected [$3], got [$2]${4:+; $4 says:
$(cat "$4")}"
  fi
}

# Fails unless text $2 contains $3, saying $1.
expect_in() {
  case "$2" in
    *"$3"*) ;;
    *) fail "$1: [$3] not in [$2]" ;;
  esac
}

# The value at a JSON path ($1, Python subscripts such as ["item"]["id"]) of standard input.
json() {
  python3 -c "import json, sys; v = json.load(sys.stdin)$1; print(v if isinstance(v, str) else json.dumps(v))"
}

# The HTTP status code of a request (the arguments are curl's); the body is dropped.
http_code() {
  curl -sS -o /dev/null -w '%{http_code}' "$@"
}

# --- Getting started -------------------------------------------------------------------------

# What a reader of the C and Python pages has after their first step: libsitefile with its
# header and pkg-config file installed under ~/.local, HOME being ./home (here the build the
# runner made, installed by the same script; the pages' `scripts/install-ffi.sh "$HOME/.local"`
# builds it in release first).
install_library() {
  export HOME="$PWD/home"
  "$SITEFILE_REPO/scripts/install-ffi.sh" --from "$SITEFILE_LIB_DIR" "$HOME/.local" >/dev/null
}

# The getting-started pages' site, my-site (one page of content), copied to directory $1.
copy_my_site() {
  mkdir -p "$1/.platform/blocks"
  cp "$SITEFILE_REPO/docs/examples/getting-started/my-site/.platform/blocks/pages-home.json" \
    "$1/.platform/blocks/"
}

# Fails unless the npm registry serves this checkout's `sitefile` (the release rehearsal's does).
expect_registry_release() {
  local want have
  want=$(node -p "require(process.argv[1]).version" "$SITEFILE_REPO/package.json")
  have=$(npm view sitefile version 2>/dev/null || true)
  [ "$have" = "$want" ] ||
    fail "the npm registry serves sitefile ${have:-(none)}, not $want; run this against the release's registry"
}
