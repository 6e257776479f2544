# need COMMAND PACKAGE: installs Debian's PACKAGE with apt-get (as root, or with passwordless
# sudo) when COMMAND is missing; exits 1 when it still is. Sourced by the test scripts.
need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  need_install "$2" "$1"
  command -v "$1" >/dev/null 2>&1 || {
    echo "$(basename "$0"): $1 is required and could not be installed (apt-get install -y $2)" >&2
    exit 1
  }
}

# need_lib MODULE PACKAGE: the same for a C library, found by its pkg-config MODULE (e.g.
# `need_lib libcjson libcjson-dev`); exits 1 when pkg-config still does not know it.
need_lib() {
  need pkg-config pkgconf
  pkg-config --exists "$1" && return 0
  need_install "$2" "$1"
  pkg-config --exists "$1" || {
    echo "$(basename "$0"): the C library $1 is required and could not be installed (apt-get install -y $2)" >&2
    exit 1
  }
}

# need_install PACKAGE WHAT: installs Debian's PACKAGE (for WHAT) when apt-get may run.
need_install() {
  local sudo=""
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  fi
  if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; }; then
    echo "$(basename "$0"): installing $1 (for $2)" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$1" >/dev/null
  fi
}
