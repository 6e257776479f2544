// The first screen of `npx sitefile serve examples/storefront` (the release rehearsal's
// installed program, no origin), in Chromium: it says what it is, raises no false alarm, and
// every page and variant is reachable from it by clicking. SITEFILE_SERVE_URL,
// SITEFILE_PLAYWRIGHT and CHROMIUM are set by scripts/release.sh.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { launchChromium } = require("../chromium");

const BASE = process.env.SITEFILE_SERVE_URL;
const PLAYWRIGHT = process.env.SITEFILE_PLAYWRIGHT;
const CHROMIUM = process.env.CHROMIUM;
if (!BASE || !PLAYWRIGHT || !CHROMIUM) {
  throw new Error("SITEFILE_SERVE_URL, SITEFILE_PLAYWRIGHT and CHROMIUM must be set (run scripts/release.sh)");
}

test("the first screen explains itself and reaches every page and variant", async () => {
  const context = await launchChromium();
  try {
    const page = await context.newPage();
    assert.equal((await page.goto(`${BASE}/`)).status(), 200);
    const header = page.locator("header");
    assert.match(await header.textContent(), /This is the built-in view of the content/);
    assert.equal(await page.locator(".note").count(), 0, "no alarm on the first screen");
    assert.match(await page.locator(".calm").textContent(), /Loaders are not run without an origin/);
    assert.match(await page.locator("main, body").first().textContent(), /resolved as a desktop visitor/);

    // Every page is a link away; following one lands on that page.
    const links = header.locator("nav").first().locator("a");
    const hrefs = await links.evaluateAll((anchors) => anchors.map((a) => a.getAttribute("href")));
    assert.deepEqual([...hrefs].sort(), ["/any", "/s", "/slug", "/slug/p"]);
    await header.locator("nav a", { hasText: "pages-category" }).click();
    await page.waitForURL(`${BASE}/slug`);
    assert.equal(await page.locator("h1").textContent(), "/slug");
    assert.match(await page.locator("body").textContent(), /Page block pages-category/);

    // Looking as a phone picks the mobile variant of the home page, and says why.
    await page.goto(`${BASE}/`);
    assert.match(await page.locator("body").textContent(), /variant 2 of 2 chosen/);
    await header.locator("nav a", { hasText: "mobile" }).click();
    await page.waitForURL(`${BASE}/?deviceHint=mobile`);
    const mobile = await page.locator("body").textContent();
    assert.match(mobile, /resolved as a mobile visitor/);
    assert.match(mobile, /variant 1 of 2 chosen, its rule Mobile visitors matched/);

    // Forcing the saved matcher from the view does the same on a desktop. (Which other rules
    // offer "force it" depends on the day: the example's Black Friday matcher is a date range.)
    await page.goto(`${BASE}/`);
    await page.locator('a[href*="Mobile+visitors"]', { hasText: "force it" }).click();
    await page.waitForURL(/x-platform-matchers-override=/);
    const forced = await page.locator("body").textContent();
    assert.match(forced, /resolved as a desktop visitor/);
    assert.match(forced, /variant 1 of 2 chosen, its rule Mobile visitors matched/);
  } finally {
    await context.close();
  }
});
