// The Node runner of tests/conformance/: every case file the Rust core runs, run through the
// addon (the package's native layer, as the C runner uses the C API; the WebAssembly engine
// where it stands in), with the conventions of tests/conformance/README.md. Every suite
// directory must be driven here: a new one fails until the runner (conformance-runner.js)
// knows it.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const addon = require("../../node/index.js");
const { SUITES, runSuite } = require("./conformance-runner");
const { ROOT, suiteFiles } = require("./conformance-cases");

test("every suite directory has a runner here", () => {
  const suites = fs
    .readdirSync(ROOT, { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== "schema")
    .map((d) => d.name)
    .sort();
  assert.deepEqual(suites, [...SUITES].sort());
});

for (const suite of SUITES) {
  test(`conformance: ${suite}`, () => {
    const { count, failures } = runSuite(addon, suite, suiteFiles(suite));
    assert.ok(count > 0);
    assert.equal(failures.length, 0, `${failures.length} of ${count} cases failed:\n${failures.join("\n")}`);
  });
}
