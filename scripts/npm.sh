# npm helpers sourced by the test scripts; run from the repository's root.

# npm_install_locked DIR: `npm install` in the npm project DIR (`.` for the root) as its
# lockfile says, failing when the install changed the lockfile. (`npm ci` refuses lockfiles
# written here, which lack optional packages of other platforms the registry does not serve;
# `npm install` respects them and leaves them unchanged.)
npm_install_locked() {
  npm install --prefix "$1" --no-audit --no-fund --loglevel=error
  git diff --exit-code -- "$1/package-lock.json" || {
    echo "npm install changed $1/package-lock.json: commit it" >&2
    exit 1
  }
}

# The Node the suites run beside the machine's own (node_of "$NODE24_VERSION").
NODE24_VERSION=24.21.0

# node_of VERSION: the path of Node VERSION, installed from the npm `node` package into
# target/node<major> when it is not there yet.
node_of() {
  local dir="$PWD/target/node${1%%.*}"
  local node="$dir/node_modules/node/bin/node"
  if [ ! -x "$node" ] || [ "$("$node" --version)" != "v$1" ]; then
    npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "node@$1" >&2
  fi
  echo "$node"
}
