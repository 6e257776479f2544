// The publish rehearsal's app (scripts/release.sh): a Next 16 app that installed sitefile from
// the rehearsal registry and was wired with the files of the book's Next.js page, served by `next start`.
// Checked over HTTP and in Chromium: pages, a device variant, the admin endpoints and a reload.
// SITEFILE_APP_URL, PLATFORM_RELEASE_RELOAD_TOKEN, SITEFILE_PLAYWRIGHT and CHROMIUM are set by
// the script; SITEFILE_APP_ENGINE names the run (native, teammate, wasi).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");

const BASE = process.env.SITEFILE_APP_URL;
const TOKEN = process.env.PLATFORM_RELEASE_RELOAD_TOKEN;
const PLAYWRIGHT = process.env.SITEFILE_PLAYWRIGHT;
const CHROMIUM = process.env.CHROMIUM;
if (!BASE || !TOKEN || !PLAYWRIGHT || !CHROMIUM) {
  throw new Error("SITEFILE_APP_URL, PLATFORM_RELEASE_RELOAD_TOKEN, SITEFILE_PLAYWRIGHT and CHROMIUM must be set (run scripts/release.sh)");
}
const { DESKTOP_USER_AGENT: DESKTOP, launchChromium } = require("../chromium");
const PHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1";

const get = (pathname, headers = {}) => fetch(`${BASE}${pathname}`, { redirect: "manual", headers: { "user-agent": DESKTOP, ...headers } });
const post = (pathname, body, headers = {}) =>
  fetch(`${BASE}${pathname}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers } });
const h1s = (html) => [...html.matchAll(/<h1>([^<]*)<\/h1>/g)].map((m) => m[1]);

test("pages render their sections; a path no page serves is Next's 404", async () => {
  let response = await get("/about");
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type"), /text\/html/);
  const html = await response.text();
  assert.deepEqual(h1s(html), ["About us"]);
  response = await get("/");
  assert.equal(response.status, 200);
  assert.ok(h1s(await response.text()).length > 0, "the home page has its hero");
  response = await get("/no/such/page");
  assert.equal(response.status, 404);
});

test("a device variant: a phone and a desktop get their own hero", async () => {
  assert.deepEqual(h1s(await (await get("/device")).text()), ["Seen on a desktop"]);
  assert.deepEqual(h1s(await (await get("/device", { "user-agent": PHONE })).text()), ["Seen on a phone"]);
});

test("admin endpoints: the schema, liveness and the content", async () => {
  let response = await get("/live/_meta");
  assert.equal(response.status, 200);
  const meta = await response.json();
  assert.ok(meta.manifest.blocks.sections["site/sections/Hero.tsx"], "the schema lists the app's sections");
  response = await get("/.sitefile");
  assert.equal(response.status, 200);
  assert.ok((await response.json())["pages-device"], "the content includes the app's pages");
});

test("a reload with the token changes the page; without it, nothing changes", async () => {
  const delta = {
    blocks: {
      "pages-about": { path: "/about", sections: [{ __resolveType: "site/sections/Hero.tsx", title: "Reloaded after install" }] },
    },
  };
  let response = await post("/.sitefile", delta);
  assert.equal(response.status, 401);
  assert.deepEqual(h1s(await (await get("/about")).text()), ["About us"]);
  response = await post("/.sitefile", delta, { authorization: TOKEN });
  assert.equal(response.status, 200);
  assert.equal((await response.json()).ok, true);
  assert.deepEqual(h1s(await (await get("/about")).text()), ["Reloaded after install"]);
});

test("in Chromium: a page and the phone variant render", async () => {
  for (const [userAgent, expected] of [
    [DESKTOP, "Seen on a desktop"],
    [PHONE, "Seen on a phone"],
  ]) {
    const context = await launchChromium({ userAgent });
    try {
      const page = await context.newPage();
      const response = await page.goto(`${BASE}/device`);
      assert.equal(response.status(), 200);
      assert.equal(await page.locator("h1").textContent(), expected);
      const about = await page.goto(`${BASE}/about`);
      assert.equal(about.status(), 200);
      assert.equal(await page.locator("h1").count(), 1);
    } finally {
      await context.close();
    }
  }
});
