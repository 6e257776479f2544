// The publish rehearsal's Worker (scripts/release.sh): examples/worker installed from the
// rehearsal registry, bundled by `wrangler deploy --dry-run` as a deploy bundles it, run in
// workerd through Miniflare. Pages, page JSON, redirects, the admin endpoints with and without
// tokens, purge, and the edge cache on the Cache API (MISS, HIT, and STALE through the clock
// harness, tests/release/worker/clock.js), and Fast Deploy on a KV namespace three isolates share.
// The conformance suites run through the same engine in workerd (tests/release/worker/
// conformance.js). SITEFILE_WORKER_BUNDLE (the example's bundle directory),
// SITEFILE_CLOCK_BUNDLE and SITEFILE_CONFORMANCE_BUNDLE (the harnesses') and SITEFILE_MINIFLARE
// (the Miniflare package) are set by the script.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");

const {
  SITEFILE_WORKER_BUNDLE: BUNDLE,
  SITEFILE_CLOCK_BUNDLE: CLOCK,
  SITEFILE_CONFORMANCE_BUNDLE: CONFORMANCE,
  SITEFILE_MINIFLARE: MINIFLARE,
} = process.env;
if (!BUNDLE || !CLOCK || !CONFORMANCE || !MINIFLARE) {
  throw new Error(
    "SITEFILE_WORKER_BUNDLE, SITEFILE_CLOCK_BUNDLE, SITEFILE_CONFORMANCE_BUNDLE and SITEFILE_MINIFLARE must be set (run scripts/release.sh)",
  );
}
const { Miniflare } = require(MINIFLARE);
const { SUITES } = require("../node/conformance-runner");
const { suiteFiles } = require("../node/conformance-cases");
const { bundledWorker } = require("./worker/miniflare");

const RELOAD_TOKEN = "rehearsal-reload-token";
const PURGE_TOKEN = "rehearsal-purge-token";
const PHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1";
const DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36";

/** A Worker as wrangler.toml configures it, with its variables and secrets; `buildHash`
 * versions its cache keys. */
function worker(name, dir, main, buildHash, more = {}) {
  return {
    name,
    ...bundledWorker(dir, main),
    bindings: { BUILD_HASH: buildHash, PLATFORM_RELEASE_RELOAD_TOKEN: RELOAD_TOKEN, PURGE_TOKEN, ...more.bindings },
    kvNamespaces: more.kvNamespaces ?? {},
  };
}

/** Three isolates of one deployment with Fast Deploy on one KV namespace: two of the example,
 * and the clock harness (whose clock the test moves past the 10 s between reads). */
const fastDeploy = {
  bindings: { PLATFORM_FAST_DEPLOY: "true", PLATFORM_DEPLOYMENT_ID: "d1" },
  kvNamespaces: { PLATFORM_KV: "deployments" },
};

const mf = new Miniflare({
  workers: [
    worker("site", BUNDLE, "worker.js", "v1"),
    // Its own cache keys: the two share the Cache API.
    worker("clock", CLOCK, "clock.js", "clock-v1"),
    worker("kv-a", BUNDLE, "worker.js", "kv", fastDeploy),
    worker("kv-b", CLOCK, "clock.js", "kv", fastDeploy),
    worker("kv-c", BUNDLE, "worker.js", "kv", fastDeploy),
    worker("conformance", CONFORMANCE, "conformance.js", "conformance"),
  ],
  cf: false,
});
test.after(() => mf.dispose());

/** A request to worker `name`, answered once the work it left under `waitUntil` is done. */
async function send(name, pathname, init = {}) {
  const target = await mf.getWorker(name);
  const response = await target.fetch(`https://shop.example${pathname}`, {
    redirect: "manual",
    ...init,
    headers: { "user-agent": DESKTOP, ...init.headers },
  });
  const body = await response.text();
  return { status: response.status, headers: response.headers, body };
}
const get = (pathname, headers = {}) => send("site", pathname, { headers });
const h1 = (html) => /<h1>([^<]*)<\/h1>/.exec(html)?.[1];

test("pages render their sections, a MISS then a HIT from the Cache API, a device variant apart", async () => {
  const first = await get("/");
  assert.equal(first.status, 200);
  assert.match(first.headers.get("content-type"), /text\/html/);
  assert.equal(h1(first.body), "Welcome to the example store");
  assert.match(first.body.replaceAll("<!-- -->", ""), /<li>Product 1: \$10<\/li>/, "the loader's products");
  assert.equal(first.headers.get("x-cache"), "MISS");
  const second = await get("/");
  assert.equal(second.headers.get("x-cache"), "HIT");
  assert.equal(second.body, first.body);
  const phone = await get("/", { "user-agent": PHONE });
  assert.equal(h1(phone.body), "Welcome, phone visitor");
  assert.equal(phone.headers.get("x-cache"), "MISS", "a phone's copy is its own");
  assert.equal((await get("/", { "user-agent": PHONE })).headers.get("x-cache"), "HIT");
});

test("the app's own route answers beside the site's pages", async () => {
  const health = await get("/api/health");
  assert.equal(health.status, 200);
  assert.deepEqual(JSON.parse(health.body), { ok: true });
});

test("redirects, the not-found page and page JSON", async () => {
  const moved = await get("/about-us");
  assert.equal(moved.status, 301);
  assert.equal(moved.headers.get("location"), "/about");
  const missing = await get("/no-such-page");
  assert.equal(missing.status, 404);
  assert.equal(h1(missing.body), "We could not find that page");
  const json = await get("/about?asJson");
  assert.equal(json.status, 200);
  const page = JSON.parse(json.body);
  assert.equal(page.props.sections[0].props.title, "About us");
});

test("admin endpoints: content read, a reload refused without the token and served with it", async () => {
  const read = await get("/.sitefile");
  assert.equal(read.status, 200);
  const revision = JSON.parse(read.headers.get("etag"));
  assert.ok(JSON.parse(read.body)["pages-about"]);
  const meta = await get("/live/_meta");
  assert.equal(meta.status, 200);
  assert.ok(JSON.parse(meta.body).manifest, "the generated schema");
  const delta = {
    blocks: {
      "pages-about": {
        name: "About",
        path: "/about",
        sections: [{ __resolveType: "site/sections/Hero.tsx", title: "About us, reloaded" }],
      },
    },
  };
  const post = (headers) =>
    send("site", "/.sitefile", {
      method: "POST",
      body: JSON.stringify(delta),
      headers: { "content-type": "application/json", ...headers },
    });
  assert.equal((await post({})).status, 401);
  assert.equal((await post({ authorization: "wrong" })).status, 401);
  const reloaded = await post({ authorization: RELOAD_TOKEN });
  assert.equal(reloaded.status, 200, reloaded.body);
  const response = JSON.parse(reloaded.body);
  assert.equal(response.mode, "delta");
  assert.notEqual(response.revision, revision);
  assert.equal(response.kvWritten, false, "no Fast Deploy in this worker");
  const page = JSON.parse((await get("/about?asJson")).body);
  assert.equal(page.props.sections[0].props.title, "About us, reloaded");
});

test("a section preview renders React in the render shell", async () => {
  const props = encodeURIComponent(JSON.stringify({ title: "Previewed" }));
  const preview = await get(`/live/previews/site/sections/Hero.tsx?props=${props}`);
  assert.equal(preview.status, 200);
  assert.match(preview.body, /<h1>Previewed<\/h1>/);
});

test("purge: refused without the token; with it the next visitor is a MISS", async () => {
  await get("/about");
  assert.equal((await get("/about")).headers.get("x-cache"), "HIT");
  const purge = (headers) => send("site", "/_cache/purge", { method: "POST", body: JSON.stringify({ paths: ["/about"] }), headers });
  assert.equal((await purge({})).status, 401);
  const purged = await purge({ authorization: `Bearer ${PURGE_TOKEN}` });
  assert.equal(purged.status, 200, purged.body);
  assert.equal((await get("/about")).headers.get("x-cache"), "MISS");
});

test("a stored copy past its freshness is served STALE and revalidated in the background", async () => {
  const clock = (pathname, init) => send("clock", pathname, init);
  const first = await clock("/about");
  assert.equal(first.headers.get("x-cache"), "MISS");
  assert.match(first.body, /origin answer 1 /);
  assert.equal((await clock("/about")).headers.get("x-cache"), "HIT");
  // Ten minutes on: past the page profile's (`listing`) 120 s of freshness, inside its 900 s
  // of stale-while-revalidate.
  await clock("/__clock?ms=600000");
  const stale = await clock("/about");
  assert.equal(stale.headers.get("x-cache"), "STALE");
  assert.match(stale.body, /origin answer 1 /, "the stored copy");
  const fresh = await clock("/about");
  assert.equal(fresh.headers.get("x-cache"), "HIT");
  assert.match(fresh.body, /origin answer 2 /, "the background refresh stored the origin's new answer");
});

test("concurrent misses of one page are one origin request, shared across requests", async () => {
  const answers = await Promise.all(Array.from({ length: 6 }, () => send("clock", "/slow-page")));
  const bodies = new Set(answers.map((a) => a.body));
  assert.deepEqual(
    answers.map((a) => a.status),
    [200, 200, 200, 200, 200, 200],
  );
  assert.equal(bodies.size, 1, `one origin answer for all: ${[...bodies].join(" | ")}`);
});

test("the visitor's location from request.cf reaches the origin as __cf_geo_* cookies", async () => {
  const target = await mf.getWorker("clock");
  const response = await target.fetch("https://shop.example/echo-cookie", {
    headers: { cookie: "a=1" },
    // Every field the edge reads (Miniflare fills the others in); ASCII, as Miniflare passes
    // `cf` to workerd in a header.
    cf: { country: "BR", regionCode: "SP", region: "Sao Paulo", city: "Campinas", latitude: "-22.9", longitude: "-47.06", colo: "GRU" },
  });
  assert.equal(
    await response.text(),
    "a=1; __cf_geo_country=BR; __cf_geo_region_code=SP; __cf_geo_region=Sao%20Paulo; __cf_geo_city=Campinas; __cf_geo_lat=-22.9; __cf_geo_lng=-47.06",
  );
});

test("Fast Deploy: a reload is written to PLATFORM_KV, read by a new isolate at once and by a running one at its next poll", async () => {
  const title = async (name) => JSON.parse((await send(name, "/about?asJson")).body).props.sections[0].props.title;
  assert.equal(await title("kv-b"), "About us", "no snapshot in the store: the bundled content");
  const delta = {
    blocks: {
      "pages-about": { name: "About", path: "/about", sections: [{ __resolveType: "site/sections/Hero.tsx", title: "About us, from KV" }] },
    },
  };
  const reloaded = await send("kv-a", "/.sitefile", {
    method: "POST",
    body: JSON.stringify(delta),
    headers: { "content-type": "application/json", authorization: RELOAD_TOKEN },
  });
  assert.equal(reloaded.status, 200, reloaded.body);
  const { revision, kvWritten } = JSON.parse(reloaded.body);
  assert.equal(kvWritten, true);
  const kv = await mf.getKVNamespace("PLATFORM_KV", "kv-a");
  assert.equal(await kv.get("index:revision:d1"), revision);
  const stored = JSON.parse(await kv.get("sitefile:d1"));
  assert.equal(stored["pages-about"].sections[0].title, "About us, from KV", "the snapshot, in the format `sitefile kv` writes");
  assert.equal(await title("kv-a"), "About us, from KV");
  assert.equal(await title("kv-c"), "About us, from KV", "a new isolate reads the snapshot at its first request");
  assert.equal(await title("kv-b"), "About us", "a running isolate reads again only after 10 s");
  await send("kv-b", "/__clock?ms=11000");
  // That request starts the read in the background; a later one serves what it loaded.
  let seen = await title("kv-b");
  for (let i = 0; i < 50 && seen !== "About us, from KV"; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    seen = await title("kv-b");
  }
  assert.equal(seen, "About us, from KV");
});

for (const suite of SUITES) {
  test(`conformance in workerd: ${suite}`, async () => {
    const files = suiteFiles(suite);
    const answer = await send("conformance", "/", { method: "POST", body: JSON.stringify({ suite, files }) });
    assert.equal(answer.status, 200, answer.body);
    const { count, failures } = JSON.parse(answer.body);
    assert.equal(
      count,
      files.reduce((n, f) => n + f.cases.length, 0),
      "every case ran",
    );
    assert.equal(failures.length, 0, `${failures.length} of ${count} cases failed in workerd:\n${failures.join("\n")}`);
  });
}
