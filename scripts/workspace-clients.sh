#!/usr/bin/env bash
# The workspace API driven by real third-party clients over HTTP (tests/workspace-clients):
# install the clients' npm project (failing when its lockfile would change) and the Python MCP
# client's virtual environment (target/py-mcp, from tests/workspace-clients/python/
# requirements.txt), build the `sitefile-workspace` binary, and run the folder's `node --test`
# suites, which start the upstream MCP servers (@modelcontextprotocol/server-everything, our
# reference server in conformance/fixture.mjs) and the workspace server on a fresh SQLite
# database (tests/workspace-clients/harness.js).
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/npm.sh
source scripts/npm.sh
# shellcheck source=scripts/need.sh
source scripts/need.sh
npm_install_locked tests/workspace-clients

# The Python client (python.test.js runs SITEFILE_PYTHON): a virtual environment holding
# exactly what requirements.txt pins, made again only when that file changes (its hash is kept
# in the environment).
need python3 python3
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
  echo "$(basename "$0"): the Python MCP client needs Python 3.10 or later, python3 is $(python3 --version)" >&2
  exit 1
}
python3 -c 'import ensurepip, venv' 2>/dev/null || need_install python3-venv "python3 -m venv"
py_env="$PWD/target/py-mcp"
py_requirements=tests/workspace-clients/python/requirements.txt
py_wanted="$(sha256sum "$py_requirements" | cut -d' ' -f1)"
if [ ! -x "$py_env/bin/python" ] || [ "$(cat "$py_env/requirements.sha256" 2>/dev/null)" != "$py_wanted" ]; then
  echo "installing $py_requirements into target/py-mcp"
  rm -rf "$py_env"
  python3 -m venv "$py_env"
  "$py_env/bin/pip" install --quiet --disable-pip-version-check -r "$py_requirements"
  # `name==version` lines, names normalized as pip compares them (case, `-`, `_`, `.`).
  pins() { awk -F'==' '!/^#/ && NF { name = tolower($1); gsub(/[-_.]+/, "-", name); print name "==" $2 }' | sort; }
  if ! diff <(pins < "$py_requirements") <("$py_env/bin/pip" freeze --disable-pip-version-check | pins); then
    echo "$py_requirements does not pin exactly what it installs (< pinned, > installed)" >&2
    exit 1
  fi
  echo "$py_wanted" > "$py_env/requirements.sha256"
fi
export SITEFILE_PYTHON="$py_env/bin/python"

# --workspace: the features of the test build, so its artifacts are reused.
cargo build --workspace --locked --bin sitefile-workspace
export SITEFILE_WORKSPACE_BIN="$PWD/target/debug/sitefile-workspace"

cd tests/workspace-clients
echo "node --test on $(node --version)"
node --test
