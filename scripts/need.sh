# need COMMAND PACKAGE: installs Debian's PACKAGE with apt-get (as root, or with passwordless
# sudo) when COMMAND is missing; exits 1 when it still is. Sourced by the test scripts.
need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  local sudo=""
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  fi
  if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; }; then
    echo "$(basename "$0"): installing $2 (for $1)" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$2" >/dev/null
  fi
  command -v "$1" >/dev/null 2>&1 || {
    echo "$(basename "$0"): $1 is required and could not be installed (apt-get install -y $2)" >&2
    exit 1
  }
}
