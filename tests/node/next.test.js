// The Next.js binding's server pieces, called as Next calls them: `createNextSetup`
// (`sitefile/setup`), the catch-all admin route (`sitefile/route-handlers`) and the config
// wrapper (`sitefile/config`).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const React = require("react");
const { resolveDecoPage, currentSite } = require("sitefile");
const { createNextSetup } = require("sitefile/setup");
const { createDecoRouteHandlers } = require("sitefile/route-handlers");

const ORIGIN = "https://shop.example";
const hero = (title) => ({ __resolveType: "site/sections/Hero.tsx", title });
const Hero = ({ title }) => React.createElement("h1", null, title);
const sections = { "./sections/Hero.tsx": async () => ({ default: Hero }) };
const request = (p, init = {}) => new Request(`${ORIGIN}${p}`, init);

function siteDir(blocks) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "sitefile-next-"));
  const dir = path.join(root, ".platform", "blocks");
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, block] of Object.entries(blocks)) {
    fs.writeFileSync(path.join(dir, `${encodeURIComponent(name)}.json`), JSON.stringify(block));
  }
  return root;
}

test("createNextSetup: reads .platform/blocks of the working directory by default, once", async () => {
  const root = siteDir({ "pages-home": { path: "/", sections: [hero("from disk")] } });
  const cwd = process.cwd();
  process.chdir(root);
  let extended = 0;
  let seen;
  try {
    const ensureSetup = createNextSetup({
      sections,
      extend: (blocks) => {
        extended += 1;
        seen = blocks;
      },
    });
    assert.equal(extended, 0, "nothing runs before ensureSetup()");
    const [a, b] = await Promise.all([ensureSetup(), ensureSetup()]);
    assert.equal(a, b, "concurrent callers share one set-up");
    assert.equal(await ensureSetup(), a, "later calls answer the same site");
    assert.equal(extended, 1, "extend runs once");
    assert.deepEqual(Object.keys(seen), ["pages-home"]);
    assert.equal(currentSite(), a);
    const page = await resolveDecoPage({ url: `${ORIGIN}/` }, a);
    assert.equal(page.sections[0].props.title, "from disk");
  } finally {
    process.chdir(cwd);
  }
});

test("createNextSetup: blocks laid over blocksDir; blocks alone read no directory", async () => {
  const root = siteDir({
    "pages-home": { path: "/", sections: [hero("disk")] },
    "pages-about": { path: "/about", sections: [hero("about")] },
  });
  const site = await createNextSetup({
    sections,
    blocksDir: path.join(root, ".platform/blocks"),
    blocks: { "pages-home": { path: "/", sections: [hero("over")] } },
  })();
  assert.equal((await resolveDecoPage({ url: `${ORIGIN}/` }, site)).sections[0].props.title, "over");
  assert.equal((await resolveDecoPage({ url: `${ORIGIN}/about` }, site)).sections[0].props.title, "about");

  const cwd = process.cwd();
  process.chdir(os.tmpdir()); // no .platform/blocks here
  try {
    const only = await createNextSetup({ sections, blocks: { "pages-home": { path: "/", sections: [hero("only")] } } })();
    assert.equal((await resolveDecoPage({ url: `${ORIGIN}/` }, only)).sections[0].props.title, "only");
  } finally {
    process.chdir(cwd);
  }
});

test("createNextSetup: a rejected set-up is not remembered; the next call tries again", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "sitefile-next-"));
  const dir = path.join(root, "blocks");
  let extendFails = true;
  const ensureSetup = createNextSetup({
    sections,
    blocksDir: dir,
    extend: () => {
      if (extendFails) throw new Error("extend failed");
    },
  });
  await assert.rejects(ensureSetup(), (error) => error.code !== undefined, "a missing blocks directory rejects");
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, "pages-home.json"), JSON.stringify({ path: "/", sections: [hero("late")] }));
  await assert.rejects(ensureSetup(), /extend failed/, "a throwing extend rejects");
  extendFails = false;
  const site = await ensureSetup();
  assert.equal((await resolveDecoPage({ url: `${ORIGIN}/` }, site)).sections[0].props.title, "late");
});

test("createNextSetup: options are checked; conventions mark layout sections", async () => {
  assert.throws(() => createNextSetup({}), { code: "INVALID_CONFIG" });
  assert.throws(() => createNextSetup({ sections, blocks: {}, bogus: 1 }), { code: "INVALID_CONFIG" });
  assert.throws(() => createNextSetup({ sections, meta: {} }), { code: "INVALID_CONFIG" });
  const ensureSetup = createNextSetup({
    sections: { ...sections, "./sections/Footer.tsx": async () => ({ default: () => null }) },
    blocks: { "pages-home": { path: "/", sections: [hero("x")] } },
    conventions: { meta: { "./sections/Footer.tsx": { layout: true } } },
  });
  assert.deepEqual(ensureSetup.conventions.meta["./sections/Footer.tsx"], { layout: true });
  await ensureSetup();
});

function routeSetup(env = {}, extra = {}) {
  let runs = 0;
  const ensureSetup = createNextSetup({
    sections,
    blocks: { "pages-home": { path: "/", sections: [hero("hello")] } },
    loaders: { "site/loaders/double.ts": (props) => props.n * 2 },
    env,
    ...extra,
  });
  const setup = () => {
    runs += 1;
    return ensureSetup();
  };
  return { handlers: createDecoRouteHandlers({ setup }), runs: () => runs };
}

test("route handlers: OPTIONS is answered by the core without running setup", async () => {
  const { handlers, runs } = routeSetup();
  const response = await handlers.OPTIONS(
    request("/platform/meta", { method: "OPTIONS", headers: { origin: "https://editor.example" } }),
  );
  assert.equal(response.status, 204);
  assert.equal(response.headers.get("access-control-allow-origin"), "https://editor.example");
  assert.match(response.headers.get("access-control-allow-methods"), /POST/);
  assert.equal(response.headers.get("allow"), "GET, OPTIONS");
  assert.equal(runs(), 0);
});

test("route handlers: meta is GET only, 503 Schema not initialized without a schema, then ETag and 304", async () => {
  let { handlers } = routeSetup();
  let response = await handlers.GET(request("/platform/meta"));
  assert.equal(response.status, 503);
  assert.match(JSON.stringify(await response.json()), /Schema not initialized/);
  response = await handlers.POST(request("/platform/meta", { method: "POST", body: "{}" }));
  assert.equal(response.status, 405);
  assert.equal(response.headers.get("allow"), "GET, OPTIONS");
  assert.ok(response.headers.get("access-control-allow-origin"), "a 405 has CORS");

  ({ handlers } = routeSetup({}, { meta: async () => ({ manifest: { blocks: { sections: {} } }, schema: {} }) }));
  response = await handlers.GET(request("/live/_meta")); // the pre-rewrite path is routed too
  assert.equal(response.status, 200);
  const etag = response.headers.get("etag");
  assert.ok(etag);
  response = await handlers.GET(request("/platform/meta", { headers: { "if-none-match": etag } }));
  assert.equal(response.status, 304);
});

test("route handlers: content read and reload through /platform/sitefile and /.sitefile", async () => {
  const { handlers } = routeSetup({ PLATFORM_RELEASE_RELOAD_TOKEN: "tok" });
  let response = await handlers.GET(request("/platform/sitefile"));
  assert.equal(response.status, 200);
  assert.deepEqual(Object.keys(await response.json()), ["pages-home"]);
  const delta = JSON.stringify({ blocks: { "pages-home": { path: "/", sections: [hero("changed")] } } });
  response = await handlers.POST(request("/.sitefile", { method: "POST", body: delta }));
  assert.equal(response.status, 401);
  response = await handlers.POST(request("/.sitefile", { method: "POST", body: delta, headers: { authorization: "tok" } }));
  assert.equal(response.status, 200);
  assert.equal((await response.json()).mode, "delta");
  assert.equal((await resolveDecoPage({ url: `${ORIGIN}/` })).sections[0].props.title, "changed");
});

test("route handlers: invoke is POST only; liveness; unknown platform paths are 404 JSON", async () => {
  const { handlers } = routeSetup();
  let response = await handlers.POST(
    request("/platform/invoke/site/loaders/double.ts", { method: "POST", body: JSON.stringify({ n: 21 }) }),
  );
  assert.equal(response.status, 200);
  assert.equal(await response.json(), 42);
  response = await handlers.POST(
    request("/platform/invoke", { method: "POST", body: JSON.stringify({ a: { __resolveType: "site/loaders/double.ts", n: 2 } }) }),
  );
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { a: 4 });
  response = await handlers.GET(request("/platform/invoke/site/loaders/double.ts?props=%7B%7D"));
  assert.equal(response.status, 405);
  assert.equal(response.headers.get("allow"), "POST, OPTIONS");
  response = await handlers.GET(request("/platform/_liveness"));
  assert.equal(await response.text(), "OK");
  response = await handlers.GET(request("/platform/nothing-here"));
  assert.equal(response.status, 404);
  assert.ok((await response.json()).error);
});

test("route handlers: a failing setup fails the request and is retried by the next", async () => {
  let fail = true;
  const handlers = createDecoRouteHandlers({
    setup: async () => {
      if (fail) throw new Error("no content yet");
      return createNextSetup({ sections, blocks: {} })();
    },
  });
  await assert.rejects(handlers.GET(request("/platform/_liveness")), /no content yet/);
  fail = false;
  assert.equal((await handlers.GET(request("/platform/_liveness"))).status, 200);
  assert.throws(() => createDecoRouteHandlers({}), { code: "INVALID_CONFIG" });
});
