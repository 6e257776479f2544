// The server output of a production build of examples/nextjs, read after `next build`. Run by
// scripts/nextjs.sh, which sets SITEFILE_NEXT_APP to the app's directory and
// SITEFILE_NEXT_DEPLOY to how it built the app: `bundled` (without PLATFORM_SEEDED_DEPLOY), so
// the config wrapper's `fastDeploy: "auto"` traces the site's content into every route's
// output, or `seeded` (with it), so the content is left out of the server output.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const APP = process.env.SITEFILE_NEXT_APP;
if (!APP) throw new Error("SITEFILE_NEXT_APP must be set (run scripts/nextjs.sh)");
const DEPLOY = process.env.SITEFILE_NEXT_DEPLOY;
if (DEPLOY !== "bundled" && DEPLOY !== "seeded") {
  throw new Error("SITEFILE_NEXT_DEPLOY must be bundled or seeded (run scripts/nextjs.sh)");
}
/** The route entries whose output the content concerns: the pages and the admin route. */
const ENTRIES = ["app/[[...slug]]/page", "app/platform/[[...platform]]/route"];

/** The files the build traced for a route entry, relative to the app's directory. */
function traced(entry) {
  const file = path.join(APP, ".next/server", `${entry}.js.nft.json`);
  const { files } = JSON.parse(fs.readFileSync(file, "utf8"));
  return new Set(files.map((f) => path.relative(APP, path.resolve(path.dirname(file), f))));
}

/** The example's content files, relative to the app's directory. */
function contentFiles() {
  const blocks = fs.readdirSync(path.join(APP, ".platform/blocks")).filter((f) => f.endsWith(".json"));
  assert.ok(blocks.length > 5, "the example has content");
  return blocks.map((b) => path.join(".platform/blocks", b));
}

if (DEPLOY === "bundled") {
  test("the pages' and the admin route's outputs carry every content file", () => {
    const content = contentFiles();
    for (const entry of ENTRIES) {
      const files = traced(entry);
      const missing = content.filter((f) => !files.has(f));
      assert.deepEqual(missing, [], `${entry} traces .platform/blocks`);
    }
  });
} else {
  test("a seeded deployment's build leaves every content file out of every route's output", () => {
    const content = new Set([...contentFiles(), ".platform/blocks.gen.json"]);
    const entries = fs
      .readdirSync(path.join(APP, ".next/server/app"), { recursive: true })
      .filter((f) => f.endsWith(".js.nft.json"))
      .map((f) => path.join("app", f.slice(0, -".js.nft.json".length)));
    for (const entry of ENTRIES) assert.ok(entries.includes(entry), `${entry} was built`);
    for (const entry of entries) {
      const kept = [...traced(entry)].filter((f) => content.has(f) || f.startsWith(".platform/blocks/"));
      assert.deepEqual(kept, [], `${entry} traces no content`);
    }
  });
}
