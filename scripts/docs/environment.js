// Holds the environment-variable reference to the code: every `PLATFORM_`, `EDGE_`,
// `CLOUDFLARE_` and `OTEL_` variable a crate or the npm package reads is a row of
// `docs/src/reference/environment.md`, and every such row is read somewhere (the few
// unprefixed names the page lists, `BUILD_HASH`, `NODE_ENV`, …, are not checked). The page is written by hand (each variable's meaning and default); this check is
// what keeps its list from drifting.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

/** Where the variables are read: the crates' sources and the package's TypeScript. */
const SOURCE_DIRS = ["core/src", "server/src", "workspace/src", "ffi/src", "node/src", "site-dir/src", "node/ts"];

/**
 * A variable read by name: a quoted string (`"PLATFORM_KV"`, `'PLATFORM_KV'`) or a property of
 * an environment object (`process.env.PLATFORM_SITE_NAME`, `env.PLATFORM_KV`), with the spec's
 * prefixes. Names in doc comments (in backticks) are not reads.
 */
const VARIABLE = /(?:["']|\benv\.)((?:PLATFORM|EDGE|CLOUDFLARE|OTEL)_[A-Z0-9_]*)/g;

/** Variables the page lists that a dependency reads (the OpenTelemetry SDK's own settings). */
const READ_BY_DEPENDENCIES = new Set(["OTEL_METRIC_EXPORT_INTERVAL", "OTEL_BSP_SCHEDULE_DELAY", "OTEL_BLRP_SCHEDULE_DELAY"]);

/** Every file under `dir` with a source extension. */
function sourceFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return /\.(rs|ts|tsx)$/.test(entry.name) ? [file] : [];
  });
}

/** Variable names read in the sources under `root` (a name ending in `_` is a prefix). */
function variablesInCode(root) {
  const names = new Set();
  for (const dir of SOURCE_DIRS) {
    for (const file of sourceFiles(path.join(root, dir))) {
      for (const match of fs.readFileSync(file, "utf8").matchAll(VARIABLE)) names.add(match[1]);
    }
  }
  return names;
}

/** The names the page's tables list: the first column's code spans. */
function variablesOnPage(page) {
  return new Set([...page.matchAll(/^\| `([A-Z][A-Z0-9_]*)`/gm)].map((m) => m[1]));
}

/** Problems between the code and the page, as sentences; empty when they agree. */
function environmentProblems(root) {
  const code = variablesInCode(root);
  const page = variablesOnPage(fs.readFileSync(path.join(root, "docs/src/reference/environment.md"), "utf8"));
  const prefixes = [...code].filter((name) => name.endsWith("_"));
  const problems = [];
  for (const name of code) {
    const listed = name.endsWith("_") ? [...page].some((row) => row.startsWith(name)) : page.has(name);
    if (!listed) problems.push(`${name} is read by the code but not listed`);
  }
  for (const name of page) {
    const read = code.has(name) || READ_BY_DEPENDENCIES.has(name) || prefixes.some((prefix) => name.startsWith(prefix));
    if (!read && /^(PLATFORM|EDGE|CLOUDFLARE|OTEL)_/.test(name)) {
      problems.push(`${name} is listed but nothing reads it`);
    }
  }
  return problems;
}

module.exports = { environmentProblems };
