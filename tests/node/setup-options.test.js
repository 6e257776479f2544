// createSiteSetup's options beyond content and loaders, through the public API: each compared
// with a site set up without it.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { createSiteSetup, resolveDecoPage, runSectionLoaders, handleAdminRequest } = require("sitefile");

const hero = (props) => ({ __resolveType: "site/sections/Hero.tsx", ...props });
const HOME = { url: "https://shop.example/" };

test("productionOrigins: absolute URLs on those origins in content become relative", async () => {
  const blocks = {
    "pages-home": {
      path: "/",
      sections: [hero({ href: "https://www.shop.example/shoes?color=red", image: "https://cdn.elsewhere.example/a.png" })],
    },
  };
  const props = async (options) => (await resolveDecoPage(HOME, createSiteSetup({ env: {}, blocks, ...options }))).sections[0].props;
  assert.deepEqual(await props({ productionOrigins: ["https://www.shop.example"] }), {
    href: "/shoes?color=red",
    image: "https://cdn.elsewhere.example/a.png",
  });
  assert.equal((await props({})).href, "https://www.shop.example/shoes?color=red");
});

test("layoutSections: a layout section resolves once for every page", async () => {
  let calls = 0;
  const setup = (options) =>
    createSiteSetup({
      env: {},
      blocks: {
        "pages-home": { path: "/", sections: [{ __resolveType: "Header" }] },
        "pages-other": { path: "/other", sections: [{ __resolveType: "Header" }] },
        Header: { __resolveType: "site/sections/Header.tsx", menu: { __resolveType: "site/loaders/menu.ts" } },
      },
      loaders: {
        "site/loaders/menu.ts": () => {
          calls += 1;
          return ["home", "sale"];
        },
      },
      ...options,
    });
  const layout = setup({ layoutSections: ["site/sections/Header.tsx"] });
  for (const path of ["/", "/other", "/"]) {
    const page = await resolveDecoPage({ url: `https://shop.example${path}` }, layout);
    assert.deepEqual(page.sections[0].props.menu, ["home", "sale"], path);
  }
  assert.equal(calls, 1);
  const plain = setup({});
  await resolveDecoPage(HOME, plain);
  await resolveDecoPage({ url: "https://shop.example/other" }, plain);
  assert.equal(calls, 3, "without the option each page resolves it");
});

test("layoutSections: a layout section's section loader runs once per device for five minutes, shared across pages; a purge drops it", async () => {
  const clock = { now: Date.parse("2026-06-01T12:00:00Z") };
  const runs = [];
  const site = createSiteSetup({
    env: { PURGE_TOKEN: "p" },
    now: () => new Date(clock.now),
    layoutSections: ["site/sections/Header.tsx"],
    blocks: {
      "pages-home": { path: "/", sections: [{ __resolveType: "Header" }, hero({ title: "home" })] },
      "pages-other": {
        path: "/other",
        sections: [{ __resolveType: "Header" }, { __resolveType: "site/sections/Header.tsx", menu: "inline" }],
      },
      Header: { __resolveType: "site/sections/Header.tsx", menu: "main" },
    },
    sections: {
      "./sections/Hero.tsx": async () => ({ default: () => null }),
      "./sections/Header.tsx": async () => ({
        default: () => null,
        loader: (props, request) => {
          runs.push(`${props.menu} ${new URL(request.url).pathname}`);
          return { menu: props.menu, links: runs.length };
        },
      }),
    },
  });
  const visit = async (path, userAgent = "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0") => {
    const request = { url: `https://shop.example${path}`, headers: new Headers({ "user-agent": userAgent }) };
    return runSectionLoaders((await resolveDecoPage(request, site)).sections, request, site);
  };
  const home = await visit("/");
  assert.deepEqual(home[0].props, { menu: "main", links: 1 });
  const other = await visit("/other");
  assert.deepEqual(other[0].props, { menu: "main", links: 1 }, "the saved header's output is shared with another page");
  assert.deepEqual(other[1].props, { menu: "inline", links: 2 }, "an inline header with other props gets its own");
  await visit("/", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148");
  assert.deepEqual(runs, ["main /", "inline /other", "main /"], "a phone gets its own output");
  clock.now += 299_000;
  await visit("/other");
  assert.equal(runs.length, 3, "still fresh after 299 s");
  clock.now += 2_000;
  await visit("/");
  assert.equal(runs.length, 4, "run again after five minutes");
  const purge = await handleAdminRequest(
    new Request("https://shop.example/_cache/purge-loaders", { method: "POST", headers: { authorization: "Bearer p" } }),
    site,
  );
  assert.equal(purge?.status, 200);
  await visit("/");
  assert.equal(runs.length, 5, "a loader purge drops the kept outputs");
});

test("cachedLoaders: a listed loader's answer is reused for maxAgeMs, the others run every time", async () => {
  const clock = { now: Date.parse("2026-06-01T12:00:00Z") };
  const calls = { cached: 0, plain: 0 };
  const site = createSiteSetup({
    env: {},
    now: () => new Date(clock.now),
    blocks: {
      "pages-home": {
        path: "/",
        sections: [hero({ a: { __resolveType: "site/loaders/cached.ts", q: 1 }, b: { __resolveType: "site/loaders/plain.ts", q: 1 } })],
      },
    },
    loaders: {
      "site/loaders/cached.ts": () => (calls.cached += 1),
      "site/loaders/plain.ts": () => (calls.plain += 1),
    },
    cachedLoaders: { "site/loaders/cached.ts": { maxAgeMs: 60_000 } },
  });
  const first = await resolveDecoPage(HOME, site);
  assert.deepEqual(first.sections[0].props, { a: 1, b: 1 });
  clock.now += 30_000;
  const second = await resolveDecoPage(HOME, site);
  assert.deepEqual(second.sections[0].props, { a: 1, b: 2 }, "the cached loader's answer is reused");
  clock.now += 31_000;
  await resolveDecoPage(HOME, site);
  assert.deepEqual(calls, { cached: 2, plain: 3 }, "past maxAgeMs it runs again");
});

test("resolveGlobals: the Site block's theme and global sections lead every page unless false", async () => {
  const blocks = {
    site: {
      __resolveType: "site/apps/site.ts",
      theme: { __resolveType: "site/sections/Theme.tsx", color: "red" },
      global: [{ __resolveType: "site/sections/Banner.tsx", text: "sale" }],
    },
    "pages-home": { path: "/", sections: [hero({ title: "page" })] },
  };
  const components = async (options) =>
    (await resolveDecoPage(HOME, createSiteSetup({ env: {}, blocks, ...options }))).sections.map((s) => s.component);
  const all = ["site/sections/Theme.tsx", "site/sections/Banner.tsx", "site/sections/Hero.tsx"];
  assert.deepEqual(await components({}), all);
  assert.deepEqual(await components({ resolveGlobals: true }), all);
  assert.deepEqual(await components({ resolveGlobals: false }), ["site/sections/Hero.tsx"]);
});
