// The server output of a production build of examples/nextjs, read after `next build`. Run by
// scripts/nextjs.sh, which sets SITEFILE_NEXT_APP to the app's directory: the config wrapper
// traces the site's content into every route's output (the app builds without
// PLATFORM_SEEDED_DEPLOY, so `fastDeploy: "auto"` keeps it in).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const APP = process.env.SITEFILE_NEXT_APP;
if (!APP) throw new Error("SITEFILE_NEXT_APP must be set (run scripts/nextjs.sh)");

/** The files the build traced for a route entry, relative to the app's directory. */
function traced(entry) {
  const file = path.join(APP, ".next/server", `${entry}.js.nft.json`);
  const { files } = JSON.parse(fs.readFileSync(file, "utf8"));
  return new Set(files.map((f) => path.relative(APP, path.resolve(path.dirname(file), f))));
}

test("the pages' and the admin route's outputs carry every content file", () => {
  const blocks = fs.readdirSync(path.join(APP, ".platform/blocks")).filter((f) => f.endsWith(".json"));
  assert.ok(blocks.length > 5, "the example has content");
  for (const entry of ["app/[[...slug]]/page", "app/platform/[[...platform]]/route"]) {
    const files = traced(entry);
    const missing = blocks.filter((b) => !files.has(path.join(".platform/blocks", b)));
    assert.deepEqual(missing, [], `${entry} traces .platform/blocks`);
  }
});
