// The sitefile package through its public API: pages, loaders, custom matchers, errors, reload.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");
const { createSiteSetup, resolveDecoPage, registerMatcher, SitefileError, isSitefileError, ERROR_CODES } = require("sitefile");

const storefront = path.join(__dirname, "..", "..", "examples", "storefront");
const MOBILE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148";

const hero = (title) => ({ __resolveType: "site/sections/Hero.tsx", title });
const flag = (...variants) => ({ __resolveType: "website/flags/multivariate.ts", variants });
const variant = (rule, value) => ({ rule, value });
const always = { __resolveType: "website/matchers/always.ts" };
const never = { __resolveType: "website/matchers/never.ts" };

test("a page of examples/storefront resolves with its loaders and matchers", async () => {
  const calls = [];
  // The header's alert follows a date rule (Black Friday 2026): the clock is the test's.
  let now = "2026-06-01T12:00:00Z";
  const site = createSiteSetup({
    blocksDir: storefront,
    env: {},
    now: () => new Date(now),
    loaders: {
      "vtex/loaders/intelligentSearch/productListingPage.ts": (props) => {
        calls.push(props);
        return { products: [{ name: "Runner" }] };
      },
    },
  });
  const page = await resolveDecoPage({ url: "https://storefront.example/shoes" }, site);
  assert.equal(page.page, "pages-category");
  assert.deepEqual(page.params, { slug: "shoes" });
  assert.equal(page.revision, site.revision);
  assert.equal(calls.length, 1);
  assert.deepEqual(calls[0].selectedFacets, [{ key: "category-1", value: "shoes" }]);
  const result = page.sections.find((s) => s.component === "site/sections/Product/SearchResult.tsx");
  assert.deepEqual(result.props.page, { products: [{ name: "Runner" }] });
  const header = page.sections.find((s) => s.component === "site/sections/Header/Header.tsx");
  assert.equal(header.props.alert, "Free shipping over $50");
  now = "2026-11-28T12:00:00Z";
  const campaign = await resolveDecoPage({ url: "https://storefront.example/shoes" }, site);
  const alert = campaign.sections.find((s) => s.component === "site/sections/Header/Header.tsx").props.alert;
  assert.equal(alert, "Black Friday: 30% off everything");
});

test("the request's headers reach the built-in matchers (a mobile visitor, fetch Request too)", async () => {
  const site = createSiteSetup({ blocksDir: storefront, env: {} });
  const heroTitle = (page) => page.sections.find((s) => s.component === "site/sections/Hero/Hero.tsx").props.title;
  const mobile = await resolveDecoPage({ url: "https://storefront.example/", headers: { "user-agent": MOBILE } }, site);
  assert.equal(heroTitle(mobile), "Shop on the go");
  assert.deepEqual(mobile.effects.varies.includes("device"), true);
  const request = new Request("https://storefront.example/", { headers: { "user-agent": MOBILE } });
  assert.equal(heroTitle(await resolveDecoPage(request, site)), "Shop on the go");
  assert.equal(heroTitle(await resolveDecoPage({ url: "https://storefront.example/" }, site)), "New season, new shoes");
});

test("a page of an inline content map resolves; the last site set up is the default", async () => {
  createSiteSetup({
    env: {},
    blocks: { "pages-home": { path: "/", sections: [hero("hello")] } },
    sections: { "./sections/Hero.tsx": () => Promise.resolve({}) },
  });
  const page = await resolveDecoPage({ url: "https://shop.example/" });
  assert.equal(page.page, "pages-home");
  assert.deepEqual(page.sections, [{ component: "site/sections/Hero.tsx", props: { title: "hello" } }]);
  assert.equal(page.seo, null);
  const none = await resolveDecoPage({ url: "https://shop.example/nothing/here" });
  assert.equal(none.page, null);
  assert.deepEqual(none.sections, []);
});

// Loader `a` waits for `b` to start: run one after the other, they would wait forever, so the
// test has a time limit to fail by.
test("loaders run once per round, concurrently, and never under an unchosen variant", { timeout: 10_000 }, async () => {
  const calls = [];
  let releaseA;
  const bStarted = new Promise((resolve) => {
    releaseA = resolve;
  });
  const site = createSiteSetup({
    env: {},
    blocks: {
      "pages-home": {
        path: "/",
        sections: [
          {
            __resolveType: "site/sections/Shelf.tsx",
            a: { __resolveType: "site/loaders/a.ts", n: 1 },
            b: { __resolveType: "site/loaders/b.ts", n: 2 },
            // `outer` needs `inner`'s answer as a prop: a second round.
            nested: { __resolveType: "site/loaders/outer.ts", inner: { __resolveType: "site/loaders/inner.ts" } },
            chosen: flag(
              variant(never, { __resolveType: "site/loaders/unchosen.ts" }),
              variant(always, { __resolveType: "site/loaders/chosen.ts" }),
            ),
          },
        ],
      },
    },
    loaders: {
      // `a` finishes only once `b` started: the round runs its loaders concurrently.
      "site/loaders/a.ts": async (props) => {
        calls.push("a");
        await bStarted;
        return props.n;
      },
      "site/loaders/b.ts": async (props) => {
        calls.push("b");
        releaseA();
        return props.n;
      },
      "site/loaders/inner.ts": () => {
        calls.push("inner");
        return "in";
      },
      "site/loaders/outer.ts": (props) => {
        calls.push("outer");
        return { got: props.inner };
      },
      "site/loaders/chosen.ts": () => {
        calls.push("chosen");
        return "yes";
      },
      "site/loaders/unchosen.ts": () => {
        calls.push("unchosen");
        return "no";
      },
    },
  });
  const page = await resolveDecoPage({ url: "https://shop.example/" }, site);
  const props = page.sections[0].props;
  assert.equal(props.a, 1);
  assert.equal(props.b, 2);
  assert.deepEqual(props.nested, { got: "in" });
  assert.equal(props.chosen, "yes");
  assert.deepEqual([...calls].sort(), ["a", "b", "chosen", "inner", "outer"]);
  assert.ok(calls.indexOf("outer") > calls.indexOf("inner"), "outer runs in the round after inner");
  assert.ok(calls.indexOf("outer") > calls.indexOf("a") && calls.indexOf("outer") > calls.indexOf("b"));
});

test("a throwing or rejecting loader is a failed call: null, effects.errors, degraded", async () => {
  const site = createSiteSetup({
    env: {},
    blocks: {
      "pages-home": {
        path: "/",
        sections: [
          {
            __resolveType: "site/sections/Shelf.tsx",
            sync: { __resolveType: "site/loaders/throws.ts" },
            async: { __resolveType: "site/loaders/rejects.ts" },
            fine: { __resolveType: "site/loaders/fine.ts" },
          },
        ],
      },
    },
    loaders: {
      "site/loaders/throws.ts": () => {
        throw new Error("search is down");
      },
      "site/loaders/rejects.ts": async () => {
        throw new Error("timeout");
      },
      "site/loaders/fine.ts": async () => undefined,
    },
  });
  const page = await resolveDecoPage({ url: "https://shop.example/" }, site);
  assert.deepEqual(page.sections[0].props, { sync: null, async: null, fine: null });
  assert.equal(page.effects.degraded, true);
  const messages = page.effects.errors.map((e) => e.message).join("\n");
  assert.match(messages, /search is down/);
  assert.match(messages, /timeout/);
});

const vipPage = {
  "pages-home": {
    path: "/",
    sections: [flag(variant({ __resolveType: "site/matchers/vip.ts", tier: "gold" }, hero("vip")), variant(always, hero("everyone")))],
  },
};

test("a custom matcher JS function decides the variant with the rule and the request context", async () => {
  const seen = [];
  const site = createSiteSetup({
    env: {},
    blocks: vipPage,
    customMatchers: [
      () =>
        registerMatcher("site/matchers/vip.ts", (rule, ctx) => {
          seen.push({ rule, ctx });
          return ctx.cookies.tier === rule.tier;
        }),
    ],
  });
  const request = { url: "https://shop.example/?a=1", headers: { "x-test": "1" }, cookies: { tier: "gold" } };
  const gold = await resolveDecoPage(request, site);
  assert.equal(gold.sections[0].props.title, "vip");
  const { rule, ctx } = seen[0];
  assert.equal(rule.tier, "gold");
  assert.equal(ctx.url, "https://shop.example/?a=1");
  assert.equal(ctx.path, "/");
  assert.equal(ctx.headers["x-test"], "1");
  assert.deepEqual(ctx.cookies, { tier: "gold" });
  assert.equal(ctx.request, request);
  const plain = await resolveDecoPage({ url: "https://shop.example/", cookies: { tier: "silver" } }, site);
  assert.equal(plain.sections[0].props.title, "everyone");
  assert.equal(plain.effects.errors, undefined);
});

test("a throwing custom matcher counts as false and is reported in effects.errors", async () => {
  const reported = [];
  const site = createSiteSetup({
    env: {},
    blocks: vipPage,
    customMatchers: [
      () =>
        registerMatcher("site/matchers/vip.ts", () => {
          throw new Error("vip service down");
        }),
    ],
    onResolveError: (error, resolveType, context) => reported.push({ message: error.message, resolveType, context }),
  });
  const page = await resolveDecoPage({ url: "https://shop.example/" }, site);
  assert.equal(page.sections[0].props.title, "everyone");
  assert.equal(page.effects.errors.length, 1);
  const [error] = page.effects.errors;
  assert.equal(error.resolveType, "site/matchers/vip.ts");
  assert.equal(error.context, "Matcher");
  assert.equal(error.message, "vip service down");
  assert.deepEqual(reported, [{ message: error.message, resolveType: "site/matchers/vip.ts", context: "Matcher" }]);
});

test("a matcher returning a Promise is not synchronous: false, reported", async () => {
  const site = createSiteSetup({
    env: {},
    blocks: vipPage,
    customMatchers: [() => registerMatcher("site/matchers/vip.ts", async () => true)],
  });
  const page = await resolveDecoPage({ url: "https://shop.example/" }, site);
  assert.equal(page.sections[0].props.title, "everyone");
  assert.match(page.effects.errors[0].message, /Promise/);
});

test("the feature-flag bridge asks the adapter", async () => {
  const key = "posthog/matchers/featureFlag.ts";
  const blocks = {
    "pages-home": {
      path: "/",
      sections: [
        flag(
          variant({ __resolveType: key, flagKey: "checkout", variant: "b" }, hero("b")),
          variant({ __resolveType: key, flagKey: "banner" }, hero("banner")),
          variant(always, hero("none")),
        ),
      ],
    },
  };
  const setup = (enabled, variantOf) =>
    createSiteSetup({
      env: {},
      blocks,
      featureFlags: { matcherKey: key, adapter: { isFeatureEnabled: (k) => enabled.includes(k), getFeatureFlagVariant: variantOf } },
    });
  const title = async (site) => (await resolveDecoPage({ url: "https://shop.example/" }, site)).sections[0].props.title;
  assert.equal(await title(setup([], (k) => (k === "checkout" ? "b" : null))), "b");
  assert.equal(await title(setup(["banner"], () => null)), "banner");
  assert.equal(await title(setup([], () => null)), "none");
});

test("now() and random() make date and random rules deterministic", async () => {
  const blocks = {
    "pages-home": {
      path: "/",
      sections: [
        flag(
          variant({ __resolveType: "website/matchers/date.ts", start: "2026-11-27T00:00:00Z", end: "2026-11-30T00:00:00Z" }, hero("sale")),
          variant(always, hero("regular")),
        ),
        flag(variant({ __resolveType: "website/matchers/random.ts", traffic: 0.5 }, hero("test")), variant(always, hero("control"))),
      ],
    },
  };
  const run = async (now, random) => {
    const site = createSiteSetup({ env: {}, blocks, now: () => new Date(now), random: () => random });
    const page = await resolveDecoPage({ url: "https://shop.example/" }, site);
    return page.sections.map((s) => s.props.title);
  };
  assert.equal((await run("2026-11-28T12:00:00Z", 0.25))[0], "sale");
  assert.equal((await run("2026-12-01T00:00:00Z", 0.25))[0], "regular");
  const draws = [];
  for (const r of [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]) {
    const first = (await run("2026-01-01T00:00:00Z", r))[1];
    assert.equal((await run("2026-01-01T00:00:00Z", r))[1], first, "the same random() gives the same cohort");
    draws.push(first);
  }
  assert.ok(draws.includes("test") && draws.includes("control"), `both cohorts are reachable: ${draws}`);
});

test("random() returning an array scripts the draws: the sticky cohort shows in setCookies and page JSON keeps it", async () => {
  const blocks = {
    "pages-home": {
      path: "/",
      sections: [
        flag(variant({ __resolveType: "website/matchers/random.ts", traffic: 0.5 }, hero("test")), variant(always, hero("control"))),
      ],
    },
  };
  let draws = [];
  const site = createSiteSetup({ env: {}, blocks, random: () => draws });
  const visit = async (roll, cookies) => {
    draws = roll;
    const page = await resolveDecoPage({ url: "https://shop.example/", cookies }, site);
    const cookie = page.effects.setCookies?.find((c) => c.startsWith("platform_segment="));
    return { title: page.sections[0].props.title, cookie: cookie?.split(";")[0] };
  };
  const test04 = await visit([0.4]);
  assert.equal(test04.title, "test", "0.4 < traffic 0.5");
  assert.ok(test04.cookie, "the first roll sets the sticky cookie");
  const segment = (cookie) => JSON.parse(decodeURIComponent(Buffer.from(cookie.slice("platform_segment=".length), "base64").toString()));
  assert.deepEqual(segment(test04.cookie).active, ["website/matchers/random.ts"]);
  const control = await visit([0.6]);
  assert.equal(control.title, "control", "0.6 >= traffic 0.5");
  assert.deepEqual(segment(control.cookie).inactiveDrawn, ["website/matchers/random.ts"]);
  const value = test04.cookie.slice("platform_segment=".length);
  assert.deepEqual(await visit([0.6], { platform_segment: value }), { title: "test", cookie: undefined }, "the cookie wins over the roll");
  // Page JSON writes no Set-Cookie, but a request carrying the cookie gets the cookie's cohort.
  const { createDecoWorkerEntry } = require("sitefile");
  const worker = createDecoWorkerEntry({ fetch: () => assert.fail("page JSON never reaches the origin") }, {}, site);
  const pageJson = async (cookie) => {
    draws = [0.6];
    const response = await worker.fetch(
      new Request("https://shop.example/?renderJson", { headers: cookie ? { cookie } : {} }),
      {},
      { waitUntil: () => {} },
    );
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("set-cookie"), null);
    return (await response.json()).sections[0].props.title;
  };
  assert.equal(await pageJson(test04.cookie), "test");
  assert.equal(await pageJson(undefined), "control", "without the cookie, the scripted roll decides");
  for (const bad of [[1], ["0.4"], [0.2, -1]]) {
    draws = bad;
    await assert.rejects(
      resolveDecoPage({ url: "https://shop.example/" }, site),
      (e) => e.code === "INVALID_CONFIG" && /not a number in \[0, 1\)/.test(e.message),
    );
  }
});

test("bad input throws a SitefileError with the core's code", async () => {
  const site = createSiteSetup({ env: {}, blocks: { "pages-home": { path: "/", sections: [] } } });
  const revision = site.revision;
  const rejects = (fn, code) =>
    assert.throws(fn, (e) => e instanceof Error && e instanceof SitefileError && isSitefileError(e) && e.code === code);
  rejects(() => site.reload("{not json"), "INVALID_JSON");
  rejects(() => site.reload("[1, 2]"), "INVALID_CONTENT");
  assert.equal(site.revision, revision, "a refused reload leaves the content serving");
  await assert.rejects(resolveDecoPage({ url: "not a url" }, site), (e) => e instanceof SitefileError && e.code === "INVALID_REQUEST");
  await assert.rejects(resolveDecoPage({}, site), (e) => e.code === "INVALID_REQUEST");
  rejects(() => createSiteSetup({ blocksDir: path.join(__dirname, "no-such-site") }), "NOT_FOUND");
  rejects(() => createSiteSetup({ env: {}, blocks: [] }), "INVALID_JSON");
  rejects(() => createSiteSetup({ env: { PLATFORM_CACHE_DISABLE: "perhaps" }, blocks: {} }), "INVALID_CONFIG");
  rejects(() => createSiteSetup({ env: {}, blocks: {}, options: { geoCacheKey: "planet" } }), "INVALID_CONFIG");
  const badClock = createSiteSetup({ env: {}, blocks: {}, now: () => new Date("yesterday") });
  await assert.rejects(resolveDecoPage({ url: "https://shop.example/" }, badClock), (e) => e.code === "INVALID_CONFIG");
});

test("a reload changes the page and the revision", async () => {
  const site = createSiteSetup({
    env: {},
    blocks: { "pages-home": { path: "/", sections: [{ __resolveType: "Hero" }] }, Hero: hero("before") },
  });
  const before = await resolveDecoPage({ url: "https://shop.example/" }, site);
  assert.equal(before.sections[0].props.title, "before");
  const response = site.reload({ blocks: { Hero: hero("after") } });
  assert.equal(response.ok, true);
  assert.equal(response.mode, "delta");
  assert.equal(response.previousBlockCount, 2);
  assert.equal(response.newBlockCount, 2);
  assert.equal(response.kvWritten, false);
  assert.equal(response.revision, site.revision);
  assert.notEqual(response.revision, before.revision);
  const after = await resolveDecoPage({ url: "https://shop.example/" }, site);
  assert.equal(after.sections[0].props.title, "after");
  assert.equal(after.revision, response.revision);
  const full = site.reload(JSON.stringify({ "pages-other": { path: "/other", sections: [hero("x")] } }));
  assert.equal(full.mode, "full");
  assert.equal((await resolveDecoPage({ url: "https://shop.example/" }, site)).page, null);
});

test("blocks are laid over blocksDir; onDanglingReference answers unregistered loaders", async () => {
  const site = createSiteSetup({
    env: {},
    blocksDir: storefront,
    blocks: { "Shelf - Best sellers": { __resolveType: "site/loaders/missing.ts" } },
    onDanglingReference: (resolveType) => ({ dangling: resolveType }),
  });
  const page = await resolveDecoPage({ url: "https://storefront.example/" }, site);
  const shelf = page.sections.find((s) => s.component === "site/sections/Product/ProductShelf.tsx");
  assert.deepEqual(shelf.props.products, { dangling: "site/loaders/missing.ts" });
});

test("the package's error codes are the addon's", () => {
  const addon = require(path.join(__dirname, "..", "..", "node", "index.js"));
  assert.deepEqual([...ERROR_CODES], addon.errorCodes());
});

test("experiments: a loader's arm is drawn by weight, sticky through platform_segment", async () => {
  const { resolveExperimentVariant } = require("sitefile");
  const reads = [];
  const config = {
    version: 1,
    experiments: [
      {
        key: "hero-copy",
        variants: [
          { id: "a", weight: 0, payload: "A" },
          { id: "b", weight: 100, payload: { copy: "B" } },
        ],
      },
    ],
  };
  const site = createSiteSetup({
    env: {},
    blocks: { "pages-home": { path: "/", sections: [hero({ __resolveType: "site/loaders/copy.ts" })] } },
    loaders: { "site/loaders/copy.ts": async () => resolveExperimentVariant("hero-copy") },
    experiments: {
      get: async (hostname) => {
        reads.push(hostname);
        return JSON.stringify(config);
      },
    },
  });
  const first = await resolveDecoPage({ url: "https://shop.example/" }, site);
  assert.deepEqual(first.sections[0].props.title, { experimentKey: "hero-copy", variantId: "b", payload: { copy: "B" }, isFresh: true });
  assert.deepEqual(reads, ["shop.example"]);
  const cookie = first.effects.setCookies.find((c) => c.startsWith("platform_segment="));
  assert.ok(cookie, "the arm is kept in the segment cookie");
  const value = cookie.split(";")[0].slice("platform_segment=".length);
  const again = await resolveDecoPage({ url: "https://shop.example/", cookies: { platform_segment: decodeURIComponent(value) } }, site);
  assert.equal(again.sections[0].props.title.variantId, "b");
  assert.equal(again.sections[0].props.title.isFresh, false);
  assert.equal(await resolveExperimentVariant("hero-copy"), null, "outside a resolving page");
});

test("runSectionLoaders: module loaders replace props, nested sections follow, failures keep props", async () => {
  const { runSectionLoaders } = require("sitefile");
  const reported = [];
  const seen = [];
  const site = createSiteSetup({
    env: {},
    blocks: {
      "pages-home": {
        path: "/",
        sections: [
          { __resolveType: "site/sections/Shelf.tsx", title: "top" },
          { __resolveType: "site/sections/Tabs.tsx", tabs: [{ __resolveType: "site/sections/Shelf.tsx", title: "inner" }] },
          { __resolveType: "site/sections/Broken.tsx", x: 1 },
        ],
      },
    },
    sections: {
      "./sections/Shelf.tsx": async () => ({
        default: () => null,
        loader: async (props, request) => {
          seen.push([props.title, props.__pagePath, new URL(request.url).search]);
          return { ...props, products: [props.title.length] };
        },
      }),
      "./sections/Tabs.tsx": async () => ({ default: () => null }),
      "./sections/Broken.tsx": async () => ({
        default: () => null,
        loader: () => {
          throw new Error("no stock service");
        },
      }),
    },
    onResolveError: (error, resolveType, context) => reported.push([error.message, resolveType, context]),
  });
  const request = { url: "https://shop.example/?q=1" };
  const page = await resolveDecoPage(request, site);
  const sections = await runSectionLoaders(page.sections, request, site);
  assert.deepEqual(sections[0].props.products, [3]);
  assert.deepEqual(sections[1].props.tabs[0].props.products, [5], "the nested section's loader ran");
  assert.deepEqual(sections[2].props, { x: 1 });
  assert.deepEqual(seen.sort(), [
    ["inner", "/", "?q=1"],
    ["top", "/", "?q=1"],
  ]);
  assert.deepEqual(reported, [["no stock service", "site/sections/Broken.tsx", "Section loader"]]);

  const { runSectionLoadersWithEffects } = require("sitefile");
  const { sections: again, effects } = await runSectionLoadersWithEffects(page.sections, request, site);
  assert.deepEqual(again, sections);
  assert.equal(effects.degraded, true, "a failed loader degrades the page");
  assert.deepEqual(
    effects.errors.map((e) => e.message),
    ["no stock service"],
  );
  const whole = await runSectionLoadersWithEffects(page.sections.slice(0, 2), request, site);
  assert.equal(whole.effects.degraded, undefined);
});

test("section loaders: the Site block's globals get theirs, each gets ctx {device} third, a non-critical section's failure does not degrade", async () => {
  const { runSectionLoadersWithEffects, registerNonCriticalSections } = require("sitefile");
  const seen = [];
  const site = createSiteSetup({
    env: {},
    blocks: {
      Site: { global: [{ __resolveType: "site/sections/Menu.tsx", items: 0 }] },
      "pages-home": { path: "/", sections: [{ __resolveType: "site/sections/Reviews.tsx", sku: "1" }] },
    },
    sections: {
      "./sections/Menu.tsx": async () => ({
        default: () => null,
        loader: (_props, _request, ctx) => {
          seen.push(ctx);
          return { items: 3, device: ctx.device };
        },
      }),
      "./sections/Reviews.tsx": async () => ({
        default: () => null,
        loader: () => {
          throw new Error("reviews down");
        },
      }),
    },
    customMatchers: [() => registerNonCriticalSections(["site/sections/Reviews.tsx"])],
  });
  const request = { url: "https://shop.example/", headers: { "user-agent": MOBILE } };
  const page = await resolveDecoPage(request, site);
  assert.deepEqual(
    page.sections.map((s) => s.component),
    ["site/sections/Menu.tsx", "site/sections/Reviews.tsx"],
    "globals first",
  );
  const { sections, effects } = await runSectionLoadersWithEffects(page.sections, request, site);
  assert.deepEqual(sections[0].props, { items: 3, device: "mobile" }, "a global's loader runs");
  assert.deepEqual(seen, [{ device: "mobile" }], "the third argument");
  assert.deepEqual(sections[1].props, { sku: "1" });
  assert.equal(effects.degraded, undefined, "a non-critical section's failure does not degrade the page");
  assert.deepEqual(
    effects.errors.map((e) => e.message),
    ["reviews down"],
  );
  assert.throws(() => registerNonCriticalSections("site/sections/Reviews.tsx"), { code: "INVALID_CONFIG" });
});

test("initPlatform sees the content at setup and after every reload; layout sections are cached", async () => {
  const { registerLayoutSections, handleAdminRequest } = require("sitefile");
  const seen = [];
  let menuCalls = 0;
  const options = (layout) => ({
    env: { NODE_ENV: "development" },
    blocks: {
      "pages-home": { path: "/", sections: [{ __resolveType: "Header" }] },
      "pages-other": { path: "/other", sections: [{ __resolveType: "Header" }] },
      Header: { __resolveType: "site/sections/Header.tsx", menu: { __resolveType: "site/loaders/menu.ts" } },
    },
    loaders: {
      "site/loaders/menu.ts": () => {
        menuCalls += 1;
        return ["home"];
      },
    },
    customMatchers: layout ? [() => registerLayoutSections(["site/sections/Header.tsx"])] : [],
    initPlatform: (blocks) => seen.push(Object.keys(blocks).sort().join(",")),
  });
  const site = createSiteSetup(options(true));
  assert.deepEqual(seen, ["Header,pages-home,pages-other"]);
  site.reload({ blocks: { Extra: { a: 1 } } });
  assert.equal(seen.at(-1), "Extra,Header,pages-home,pages-other");
  const response = await handleAdminRequest(
    new Request("https://shop.example/.sitefile", { method: "POST", body: JSON.stringify({ blocks: { Extra: null } }) }),
    site,
  );
  assert.equal(response.status, 200);
  assert.equal(seen.at(-1), "Header,pages-home,pages-other");
  await resolveDecoPage({ url: "https://shop.example/" }, site);
  await resolveDecoPage({ url: "https://shop.example/other" }, site);
  assert.equal(menuCalls, 1, "the layout section resolved once for both pages");
  const plain = createSiteSetup(options(false));
  await resolveDecoPage({ url: "https://shop.example/" }, plain);
  await resolveDecoPage({ url: "https://shop.example/other" }, plain);
  assert.equal(menuCalls, 3);
});

test("the function-composition flag API builds flag objects", () => {
  const { Flag, Audience, Everyone, multivariate, SectionVariants } = require("sitefile");
  const vip = (ctx) => ctx.cookies.tier === "gold";
  const flag = Flag({ matcher: vip, name: "vip", true: "A", false: "B" });
  assert.equal(flag.matcher({ cookies: { tier: "gold" } }), true);
  assert.deepEqual({ ...flag, matcher: undefined }, { matcher: undefined, name: "vip", true: "A", false: "B" });
  assert.deepEqual(Audience({ matcher: vip, name: "vips", routes: ["/x"] }).true, ["/x"]);
  assert.deepEqual(Audience({ matcher: vip, name: "none" }).false, []);
  const everyone = Everyone({});
  assert.equal(everyone.name, "Everyone");
  assert.equal(everyone.matcher({}), true);
  const variants = [{ value: "a", weight: 1 }, { value: "b" }];
  assert.deepEqual(multivariate({ variants }), { variants });
  assert.deepEqual(SectionVariants({ variants }), { variants });
});

test("page text crosses the boundary intact: ASCII, Latin-1 and beyond", async () => {
  const latin1 = ["°C «x» ¿ \u00a0\u0080", "Promoção até às 23h ".repeat(20), "ascii run of more than eight bytes é"];
  // Characters past U+00FF cross as JSON escapes: each must come back as itself, an escape
  // written as text must stay text, and keys carry them as values do.
  const beyond = ["日本語 😀 \u2028 end", "→ \u0100 \uffff \u{10ffff} ÿ→é“quoted”", "\\u2192 is text, → is not", "\\\u2192"];
  for (const title of ["plain", "Sofá-cama çã ÿ", ...latin1, ...beyond, '\u0000\u001f "quoted" \\']) {
    const site = createSiteSetup({ env: {}, blocks: { "pages-home": { path: "/", sections: [hero(title)] } } });
    const page = await resolveDecoPage({ url: "https://shop.example/" }, site);
    assert.equal(page.sections[0].props.title, title);
  }
  const keys = { "seta→": 1, "😀": [2], ok: { "“x”": "→" } };
  const site = createSiteSetup({ env: {}, blocks: { "pages-home": { path: "/", sections: [{ ...hero("k"), extra: keys }] } } });
  const page = await resolveDecoPage({ url: "https://shop.example/" }, site);
  assert.deepEqual(page.sections[0].props.extra, keys);
});

test("pageMetadata: the head of a resolved page from its SEO, with the host's defaults", async () => {
  const { pageMetadata } = require("sitefile");
  const site = createSiteSetup({
    env: {},
    blocks: {
      "pages-sale": {
        path: "/sale",
        sections: [],
        seo: { __resolveType: "website/sections/Seo/SeoV2.tsx", title: "Sale", canonical: "https://shop.example/sale", noIndexing: true },
      },
      "pages-plain": { path: "/plain", sections: [] },
    },
  });
  const sale = await resolveDecoPage({ url: "https://shop.example/sale" }, site);
  assert.deepEqual(pageMetadata(sale, { defaultTitle: "Shop", defaultDescription: "Shoes" }), {
    title: "Sale",
    description: "Shoes",
    canonical: "https://shop.example/sale",
    robots: { index: false, follow: false },
  });
  const plain = await resolveDecoPage({ url: "https://shop.example/plain" }, site);
  assert.deepEqual(pageMetadata(plain, { siteName: "Shop" }), { title: "Shop", description: null, canonical: null, robots: null });
  assert.throws(() => pageMetadata(plain, { colour: "red" }), { code: "INVALID_CONFIG" });
});

test("x-platform-matchers-override forces a saved matcher's variant, as a header or a query parameter", async () => {
  const site = createSiteSetup({
    env: {},
    blocks: {
      Mobile: { __resolveType: "website/matchers/device.ts", mobile: true },
      "Summer Sale": { __resolveType: "website/matchers/never.ts" },
      "pages-home": {
        path: "/",
        sections: [
          flag(variant({ __resolveType: "Mobile" }, hero("phone")), variant(always, hero("desktop"))),
          flag(variant({ __resolveType: "Summer Sale" }, hero("sale")), variant(always, hero("regular"))),
        ],
      },
    },
  });
  const titles = async (request) => (await resolveDecoPage(request, site)).sections.map((s) => s.props.title);
  const OVERRIDE = "x-platform-matchers-override";
  assert.deepEqual(await titles({ url: "https://shop.example/" }), ["desktop", "regular"]);
  assert.deepEqual(await titles({ url: "https://shop.example/", headers: { [OVERRIDE]: "Mobile=1" } }), ["phone", "regular"]);
  assert.deepEqual(
    await titles({ url: "https://shop.example/", headers: { "user-agent": MOBILE, [OVERRIDE]: "Mobile=0" } }),
    ["desktop", "regular"],
    "=0 forces false for a visitor the rule matches",
  );
  assert.deepEqual(await titles({ url: `https://shop.example/?${OVERRIDE}=Mobile%3D1` }), ["phone", "regular"], "query form");
  const both = `https://shop.example/?${OVERRIDE}=Mobile%3D1&${OVERRIDE}=${encodeURIComponent("Summer Sale=1")}`;
  assert.deepEqual(await titles({ url: both }), ["phone", "sale"], "repeated pairs; a name with a space");
  assert.deepEqual(await titles(new Request("https://shop.example/", { headers: { [OVERRIDE]: "Mobile=1" } })), ["phone", "regular"]);
});

test("sitefile/sdk/experiments: a three-arm experiment splits visitors 20/30/50, each kept on their arm", async () => {
  const { resolveExperimentVariant } = require("sitefile/sdk/experiments");
  assert.equal(resolveExperimentVariant, require("sitefile").resolveExperimentVariant, "one module, one scope");
  const config = {
    version: 2,
    experiments: [
      {
        key: "layout",
        variants: [
          { id: "a", weight: 20, payload: 1 },
          { id: "b", weight: 30, payload: 2 },
          { id: "c", weight: 50, payload: 3 },
        ],
      },
    ],
  };
  let draw = 0;
  const site = createSiteSetup({
    env: {},
    blocks: { "pages-home": { path: "/", sections: [hero({ __resolveType: "site/loaders/layout.ts" })] } },
    loaders: { "site/loaders/layout.ts": () => resolveExperimentVariant("layout") },
    experiments: { get: () => config },
    random: () => draw,
  });
  const visit = async (cookies) => {
    const page = await resolveDecoPage({ url: "https://shop.example/", cookies }, site);
    const cookie = page.effects.setCookies?.find((c) => c.startsWith("platform_segment="));
    return {
      arm: page.sections[0].props.title,
      cookie: cookie && decodeURIComponent(cookie.split(";")[0].slice("platform_segment=".length)),
    };
  };
  const visitors = 600;
  const counts = { a: 0, b: 0, c: 0 };
  const kept = [];
  for (let i = 0; i < visitors; i += 1) {
    draw = (i + 0.5) / visitors;
    const { arm, cookie } = await visit({});
    assert.equal(arm.isFresh, true);
    assert.equal(arm.payload, { a: 1, b: 2, c: 3 }[arm.variantId]);
    counts[arm.variantId] += 1;
    if (i % 60 === 0) kept.push([arm.variantId, cookie]);
  }
  const share = (id) => counts[id] / visitors;
  assert.ok(
    Math.abs(share("a") - 0.2) < 0.05 && Math.abs(share("b") - 0.3) < 0.05 && Math.abs(share("c") - 0.5) < 0.05,
    JSON.stringify(counts),
  );
  for (const [id, cookie] of kept) {
    for (const other of [0, 0.5, 0.999]) {
      draw = other;
      const again = await visit({ platform_segment: cookie });
      assert.equal(again.arm.variantId, id, "sticky whatever the new draw");
      assert.equal(again.arm.isFresh, false);
    }
  }
});
