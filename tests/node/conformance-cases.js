// The case files of tests/conformance/, read for a runner: the Node suites run them in Node,
// the release rehearsal posts them to its conformance Worker (tests/release/worker.test.js).
"use strict";
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

/** The conformance suites' directory. */
const ROOT = path.join(__dirname, "..", "conformance");

/** The case files of `suite`: `[{name, cases}]`, by name. */
function suiteFiles(suite) {
  const dir = path.join(ROOT, suite);
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort();
  assert.ok(files.length > 0, `no cases under ${dir}`);
  return files.map((name) => ({ name, cases: JSON.parse(fs.readFileSync(path.join(dir, name), "utf8")) }));
}

module.exports = { ROOT, suiteFiles };
