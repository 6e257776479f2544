#!/usr/bin/env bash
# Developing sitefile (docs/src/development/developing.md): the checks a maintainer runs from
# the checkout's root that need no build: Biome over the TypeScript and JavaScript, and the
# book's rule that every pasteable code block is an include of a file CI runs.
set -euo pipefail
cd "$SITEFILE_REPO"

# ANCHOR: lint
npm run lint
# ANCHOR_END: lint

# ANCHOR: code-blocks
node scripts/docs/code-blocks.js
# ANCHOR_END: code-blocks
echo "developing.sh: every check passed"
