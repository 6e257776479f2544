// How the release rehearsal's Worker tests and the Worker benchmark run a bundle wrangler wrote
// (`wrangler deploy --dry-run --outdir DIR`) in Miniflare, as examples/worker/wrangler.toml
// configures the Worker.
"use strict";
const path = require("node:path");

/** The Miniflare options of the bundle `main` in `dir`. */
function bundledWorker(dir, main) {
  return {
    modules: true,
    scriptPath: path.join(dir, main),
    // Module names are paths under it (the bundle's `import ... from "./<hash>-….wasm"`).
    modulesRoot: dir,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2026-04-01",
    compatibilityFlags: ["nodejs_compat", "no_handle_cross_request_promise_resolution"],
  };
}

module.exports = { bundledWorker };
