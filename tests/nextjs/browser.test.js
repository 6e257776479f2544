// examples/nextjs in Chromium (Debian's, driven by playwright-core): sections visible, the
// client section interactive after hydration (on a page and on the preview page), the
// not-found page rendered, a deferred section fetched by scrolling, the live controls; screenshots under
// target/nextjs/<bundler>/ (SITEFILE_SHOTS). Run by scripts/nextjs.sh (SITEFILE_NEXT_URL, SITEFILE_PLAYWRIGHT, CHROMIUM).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const BASE = process.env.SITEFILE_NEXT_URL;
const PLAYWRIGHT = process.env.SITEFILE_PLAYWRIGHT;
const CHROMIUM = process.env.CHROMIUM;
if (!BASE || !PLAYWRIGHT || !CHROMIUM) {
  throw new Error("SITEFILE_NEXT_URL, SITEFILE_PLAYWRIGHT and CHROMIUM must be set (run scripts/nextjs.sh)");
}
const { launchChromium } = require("../chromium");
const shots = process.env.SITEFILE_SHOTS ?? path.join(__dirname, "..", "..", "target", "nextjs");

let context;
test.before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  context = await launchChromium();
});
test.after(async () => {
  await context?.close();
});

test("the home page shows its sections and the client section counts clicks", async () => {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  const response = await page.goto(`${BASE}/`, { waitUntil: "load" });
  assert.equal(response.status(), 200);
  assert.equal(await page.title(), "sitefile on Next.js");
  for (const section of ["hero", "shelf", "counter", "footer"]) {
    assert.ok(await page.locator(`[data-section="${section}"]`).isVisible(), `${section} is visible`);
  }
  assert.equal(await page.locator("h1").textContent(), "Welcome to the example store");
  assert.equal(await page.locator('[data-section="shelf"] li').count(), 3);

  // Interactive once hydrated: click until the count moves (hydration may lag the load
  // event), then each click adds one.
  const button = page.locator('[data-section="counter"] button');
  const count = page.locator('[data-testid="count"]');
  const deadline = Date.now() + 15000;
  while ((await count.textContent()) === "0") {
    assert.ok(Date.now() < deadline, "the counter never reacted: the client component did not hydrate");
    await button.click();
    await page.waitForTimeout(100);
  }
  const before = Number(await count.textContent());
  await button.click();
  await page.waitForFunction((n) => document.querySelector('[data-testid="count"]').textContent === String(n), before + 1);
  await page.screenshot({ path: path.join(shots, "home.png"), fullPage: true });
  assert.deepEqual(errors, [], "no script errors");
  await page.close();
});

test("a second page and the not-found page render in the browser", async () => {
  const page = await context.newPage();
  let response = await page.goto(`${BASE}/about`, { waitUntil: "load" });
  assert.equal(response.status(), 200);
  assert.ok(await page.locator('main[data-page="pages-about"] [data-section="hero"]').isVisible());
  await page.screenshot({ path: path.join(shots, "about.png"), fullPage: true });

  response = await page.goto(`${BASE}/no/such/page`, { waitUntil: "load" });
  assert.equal(response.status(), 404);
  await page.locator('main[data-page="pages-not-found"] [data-section="hero"]').waitFor({ state: "visible", timeout: 15000 });
  await page.screenshot({ path: path.join(shots, "not-found.png"), fullPage: true });
  await page.close();
});

test("a preview opened at /live/previews lands on the preview page, where the client section is interactive", async () => {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  const props = encodeURIComponent(JSON.stringify({ label: "Preview me", start: 5 }));
  const response = await page.goto(`${BASE}/live/previews/site%2Fsections%2FCounter.tsx?props=${props}`, { waitUntil: "load" });
  assert.equal(response.status(), 200);
  assert.equal(new URL(page.url()).pathname, "/platform/preview/site%2Fsections%2FCounter.tsx", "followed the 307");
  const section = page.locator('[data-manifest-key="site/sections/Counter.tsx"]');
  assert.ok(await section.isVisible());
  const button = section.locator("button");
  const count = section.locator('[data-testid="count"]');
  assert.equal(await button.textContent(), "Preview me");
  const deadline = Date.now() + 15000;
  while ((await count.textContent()) === "5") {
    assert.ok(Date.now() < deadline, "the previewed counter never reacted: the client component did not hydrate");
    await button.click();
    await page.waitForTimeout(100);
  }
  await page.screenshot({ path: path.join(shots, "preview.png"), fullPage: true });
  assert.deepEqual(errors, [], "no script errors");
  await page.close();
});

test("a deferred section shows its fallback until scrolled near, then is fetched and shown, its client component interactive", async () => {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  /** The Server Action requests (Next-Action header) the page made. */
  const actions = [];
  page.on("request", (request) => {
    if (request.method() === "POST" && request.headers()["next-action"]) actions.push(request);
  });
  await page.setViewportSize({ width: 1280, height: 720 });
  const response = await page.goto(`${BASE}/reviews`, { waitUntil: "load" });
  assert.equal(response.status(), 200);
  const fallback = page.locator('[data-testid="reviews-loading"]');
  const reviews = page.locator('[data-section="reviews"]');
  assert.equal(await fallback.textContent(), "Loading What customers say…");
  assert.equal(await reviews.count(), 0, "the section is not in the page yet");
  assert.equal(await page.locator("platform-deferred[data-loaded]").count(), 0);
  // Idle, hydrated, nothing near the viewport: nothing fetched.
  await page.waitForLoadState("networkidle");
  assert.deepEqual(actions, [], "no section fetched before scrolling");
  await page.screenshot({ path: path.join(shots, "deferred-before.png"), fullPage: true });
  await page.mouse.wheel(0, 2400);
  await reviews.waitFor({ state: "visible", timeout: 15000 });
  assert.equal(await fallback.count(), 0, "the fallback is gone");
  assert.equal(await reviews.locator("li").count(), 2);
  assert.equal(
    await page.locator('[data-testid="reviews-loader"]').textContent(),
    "Loaded for /reviews",
    "its section loader ran for the separate load",
  );
  // The client component inside a deferred section hydrates: each click adds one.
  await page.evaluate(() => document.querySelector('platform-deferred[data-component="site/sections/Counter.tsx"]').scrollIntoView());
  const counter = page.locator('platform-deferred[data-component="site/sections/Counter.tsx"] [data-section="counter"]');
  await counter.waitFor({ state: "visible", timeout: 15000 });
  assert.equal(await counter.locator('[data-testid="count"]').textContent(), "10");
  await counter.locator("button").click();
  await page.waitForFunction(
    () =>
      document.querySelector('platform-deferred[data-component="site/sections/Counter.tsx"] [data-testid="count"]')?.textContent === "11",
  );
  // Each section was fetched after scrolling, by its reference (what the action answered is
  // checked over HTTP in http.test.js).
  const asked = actions.map((request) => JSON.parse(request.postData() ?? "null"));
  assert.deepEqual(
    asked.map(([ref]) => ref.component).sort(),
    ["site/sections/Counter.tsx", "site/sections/Reviews.tsx"],
    "one fetch per deferred section",
  );
  assert.deepEqual(
    asked.find(([ref]) => ref.component === "site/sections/Reviews.tsx"),
    [{ path: "/reviews", index: 2, component: "site/sections/Reviews.tsx" }],
  );

  await page.screenshot({ path: path.join(shots, "deferred-after.png"), fullPage: true });
  assert.deepEqual(errors, [], "no script errors");
  await page.close();
});

test("a deferred section reached by client-side navigation loads when scrolled near", async () => {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.setViewportSize({ width: 1280, height: 720 });
  assert.equal((await page.goto(`${BASE}/`, { waitUntil: "load" })).status(), 200);
  await page.waitForLoadState("networkidle");
  // The App Router's own navigation (what a <Link> does): no document load, the page's RSC
  // payload rendered by React.
  let loads = 0;
  page.on("load", () => (loads += 1));
  await page.evaluate(() => window.next.router.push("/reviews"));
  await page.locator('[data-testid="reviews-loading"]').waitFor({ state: "visible", timeout: 15000 });
  assert.equal(new URL(page.url()).pathname, "/reviews");
  await page.mouse.wheel(0, 2400);
  await page.locator('[data-section="reviews"]').waitFor({ state: "visible", timeout: 15000 });
  assert.equal(await page.locator('[data-testid="reviews-loader"]').textContent(), "Loaded for /reviews");
  assert.equal(loads, 0, "a client-side navigation, not a document load");
  assert.deepEqual(errors, [], "no script errors");
  await page.close();
});

test("live controls: `.` opens the site in the editor, Ctrl + `.` in a new tab", async () => {
  const page = await context.newPage();
  const editor = "https://studio.platformcms.com/sites/sitefile-example";
  // The editor is not reachable from here: answer its pages locally.
  await context.route(`${editor}**`, (route) => route.fulfill({ status: 200, contentType: "text/html", body: "<p>editor</p>" }));
  // Idle first: the keys go to a page that has finished hydrating (under load, Next 15 could
  // still be busy with it when `load` fired).
  await page.goto(`${BASE}/about?x=1`, { waitUntil: "networkidle" });
  await page.locator("body").focus();
  const opened = context.waitForEvent("page", { timeout: 20000 });
  await page.keyboard.press("Control+.");
  const tab = await opened;
  await tab.waitForLoadState();
  assert.equal(tab.url(), `${editor}?path=${encodeURIComponent("/about?x=1")}`);
  assert.equal(new URL(page.url()).pathname, "/about", "Ctrl + . leaves the page where it is");
  await tab.close();
  await Promise.all([page.waitForURL(`${editor}**`), page.keyboard.press(".")]);
  assert.equal(page.url(), `${editor}?path=${encodeURIComponent("/about?x=1")}`);
  await context.unroute(`${editor}**`);
  await page.close();
});
