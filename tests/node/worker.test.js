// createDecoWorkerEntry in front of a small origin server on loopback, called as a fetch host
// calls it.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const http = require("node:http");
const { createSiteSetup, createDecoWorkerEntry, createMemoryCacheStorage, createWebCacheStorage } = require("sitefile");

/** A loopback origin: counts requests per path; `/slow` waits, `/fail` answers 500 when told. */
async function startOrigin() {
  const hits = new Map();
  const state = { failing: false, delayMs: 0, sent: 0 };
  const server = http.createServer((req, res) => {
    const path = req.url.split("?")[0];
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    const send = () => {
      state.sent += 1;
      if (path === "/echo") {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end(`echo:${Buffer.concat(chunks).toString()}`);
        return;
      }
      if (state.failing) {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end("origin down");
        return;
      }
      const headers = { "content-type": "text/html; charset=utf-8" };
      if (path === "/account/login") headers["set-cookie"] = "session=s1; Path=/; HttpOnly";
      if (path === "/bucket") headers["set-cookie"] = `_platform_bucket=visitor${hits.get(path)}; Path=/`;
      res.writeHead(200, headers);
      res.end(`<html><body>page ${path} #${hits.get(path)}</body></html>`);
    };
    req.on("end", () => (state.delayMs > 0 ? setTimeout(send, state.delayMs) : send()));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  const serverEntry = {
    fetch: async (request) =>
      fetch(base + new URL(request.url).pathname + new URL(request.url).search, {
        headers: request.headers,
        method: request.method,
        body: request.body ? await request.arrayBuffer() : undefined,
      }),
  };
  return { hits, state, serverEntry, close: () => new Promise((resolve) => server.close(resolve)) };
}

function site(extraEnv = {}, clock = { now: Date.parse("2026-11-24T12:00:00Z") }) {
  return createSiteSetup({
    env: { BUILD_HASH: "b1", PURGE_TOKEN: "purge-me", ...extraEnv },
    now: () => new Date(clock.now),
    blocks: {
      site: { __resolveType: "site/apps/site.ts", previewHosts: ["preview.shop.example"] },
      "pages-home": { path: "/", sections: [] },
      "old-page": { __resolveType: "website/loaders/redirect.ts", redirect: { from: "/old", to: "/new", type: "permanent" } },
    },
  });
}

/** A request through `worker`, answered once the work it left running (keeping the copy as it
 * streams, a background refresh) is done, so the next request sees what it stored. */
const get = async (worker, url, init) => {
  const background = [];
  const response = await worker.fetch(new Request(`https://shop.example${url}`, init), {}, { waitUntil: (work) => background.push(work) });
  await Promise.all(background);
  return response;
};

test("MISS, then HIT from the cache; the origin answers once", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const worker = createDecoWorkerEntry(origin.serverEntry, {}, site());
  const first = await get(worker, "/");
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("x-cache"), "MISS");
  const body = await first.text();
  assert.match(body, /page \/ #1/);
  const second = await get(worker, "/?utm_source=mail");
  assert.equal(second.headers.get("x-cache"), "HIT");
  assert.equal(await second.text(), body, "tracking parameters do not split the key");
  assert.equal(second.headers.get("x-sitefile-stored-at"), null);
  assert.equal(origin.hits.get("/"), 1);
});

test("bypass paths, matcher overrides and private answers go to the origin every time", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const worker = createDecoWorkerEntry(origin.serverEntry, { extraBypassPaths: ["/blog/"] }, site());
  for (let i = 0; i < 2; i += 1) {
    const bypassed = await get(worker, "/blog/post");
    assert.equal(bypassed.headers.get("x-cache"), "BYPASS");
    assert.equal(bypassed.headers.get("x-cache-reason"), "bypass-path");
    const live = await get(worker, "/live/anything");
    assert.equal(live.headers.get("x-cache"), "BYPASS", "admin paths pass to the origin without `admin`");
    const override = await get(worker, "/", { headers: { "x-platform-matchers-override": "Mobile=1" } });
    assert.equal(override.headers.get("x-cache-reason"), "matcher-override");
    const login = await get(worker, "/account/login");
    assert.equal(login.headers.get("x-cache"), "BYPASS");
    assert.equal(login.headers.get("set-cookie"), "session=s1; Path=/; HttpOnly");
  }
  assert.equal(origin.hits.get("/blog/post"), 2);
  assert.equal(origin.hits.get("/live/anything"), 2);
  assert.equal(origin.hits.get("/"), 2);
  assert.equal(origin.hits.get("/account/login"), 2);
});

test("a draft preview bypasses the cache and sets the draft cookie", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const worker = createDecoWorkerEntry(origin.serverEntry, {}, site());
  const draft = await worker.fetch(new Request("https://preview.shop.example/?__draft=api.platformcms.com/drafts/x@v1"));
  assert.equal(draft.headers.get("cache-control"), "no-store, private");
  assert.equal(draft.headers.get("x-robots-tag"), "noindex, nofollow");
  assert.match(draft.headers.get("set-cookie"), /^__platform_draft=/);
  await worker.fetch(new Request("https://preview.shop.example/?__draft=api.platformcms.com/drafts/x@v1"));
  assert.equal(origin.hits.get("/"), 2);
});

test("redirects come from content; the origin is not asked", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const worker = createDecoWorkerEntry(origin.serverEntry, {}, site());
  const response = await get(worker, "/old?x=1");
  assert.equal(response.status, 301);
  assert.equal(response.headers.get("location"), "/new?x=1", "the query is kept");
  assert.equal(origin.hits.size, 0);
});

test("cspMode enforce: a fresh nonce on each uncached HTML response", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  // The renderer is told each nonce, to stamp it on its scripts.
  const told = [];
  const renderer = {
    fetch: (request) => {
      told.push([request.headers.get("x-nonce"), request.headers.get("content-security-policy")]);
      return origin.serverEntry.fetch(request);
    },
  };
  const worker = createDecoWorkerEntry(renderer, { csp: ["default-src 'self'"], cspMode: "enforce" }, site());
  const nonces = [];
  for (const path of ["/blog-a", "/blog-b"]) {
    const csp = (await get(worker, path, { method: "POST" })).headers.get("content-security-policy");
    const nonce = /'nonce-([^']+)'/.exec(csp);
    assert.ok(nonce, csp);
    nonces.push(nonce[1]);
    assert.deepEqual(told.at(-1), [nonce[1], csp]);
  }
  assert.notEqual(nonces[0], nonces[1]);
});

test("purge deletes the stored keys with the purge token; the next request is a MISS", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const storage = createMemoryCacheStorage();
  const worker = createDecoWorkerEntry(origin.serverEntry, { cacheStorage: () => storage }, site());
  await get(worker, "/");
  assert.equal((await get(worker, "/")).headers.get("x-cache"), "HIT");
  const purge = (auth) =>
    get(worker, "/_cache/purge", { method: "POST", headers: { authorization: auth }, body: JSON.stringify({ paths: ["/"] }) });
  assert.equal((await purge("Bearer wrong")).status, 401);
  const purged = await purge("Bearer purge-me");
  assert.equal(purged.status, 200);
  const body = await purged.json();
  assert.equal(body.total, 1);
  assert.equal(await storage.match(body.purged[0]), undefined);
  assert.equal((await get(worker, "/")).headers.get("x-cache"), "MISS");
  assert.equal(origin.hits.get("/"), 2);
});

test("concurrent misses for one key are one origin request", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  origin.state.delayMs = 100;
  const worker = createDecoWorkerEntry(origin.serverEntry, {}, site());
  const responses = await Promise.all(Array.from({ length: 5 }, () => get(worker, "/")));
  const bodies = await Promise.all(responses.map((r) => r.text()));
  assert.equal(origin.hits.get("/"), 1);
  assert.ok(bodies.every((b) => b === bodies[0]));
});

test("stale-while-revalidate, then stale-if-error, by the profile's edge window", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const clock = { now: Date.parse("2026-11-24T12:00:00Z") };
  const pending = [];
  const ctx = { waitUntil: (p) => pending.push(p) };
  const worker = createDecoWorkerEntry(origin.serverEntry, { detectProfile: () => "static" }, site({}, clock));
  const at = (url) => worker.fetch(new Request(`https://shop.example${url}`), {}, ctx);
  await at("/");
  // The copy is kept as the answer streams; the flight lands once it is.
  await Promise.all(pending.splice(0));
  clock.now += 1000 * 1000; // past `fresh` (900 s), within `swr`
  const stale = await at("/");
  assert.equal(stale.headers.get("x-cache"), "STALE");
  assert.match(await stale.text(), /#1/);
  await Promise.all(pending);
  assert.equal(origin.hits.get("/"), 2, "revalidated in the background");
  assert.equal((await at("/")).headers.get("x-cache"), "HIT");

  clock.now += 10_000 * 1000; // past fresh + swr, within stale-if-error
  origin.state.failing = true;
  const rescued = await at("/");
  assert.equal(rescued.status, 200);
  assert.equal(rescued.headers.get("x-cache"), "STALE-ERROR");
  assert.match(await rescued.text(), /#2/);
});

test("a hanging origin: a copy within stale-if-error answers at staleIfErrorDeadlineMs, not after the origin", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const clock = { now: Date.parse("2026-11-24T12:00:00Z") };
  const options = { detectProfile: () => "static", staleIfErrorDeadlineMs: 200 };
  const worker = createDecoWorkerEntry(origin.serverEntry, options, site({}, clock));
  await (await get(worker, "/")).text();
  clock.now += 10_000 * 1000; // past fresh + swr, within stale-if-error
  origin.state.delayMs = 2_000;
  const sent = origin.state.sent;
  const rescued = await get(worker, "/");
  assert.equal(origin.state.sent, sent, "answered before the origin did");
  assert.equal(rescued.headers.get("x-cache"), "STALE-ERROR");
  assert.match(await rescued.text(), /#1/);
  origin.state.delayMs = 0;
});

test("admin routes are served only with the admin option; proxyHandler answers first", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const withAdmin = createDecoWorkerEntry(
    origin.serverEntry,
    {
      admin: {},
      proxyHandler: (_request, url) => (url.pathname.startsWith("/api/") ? new Response("proxied") : null),
    },
    site(),
  );
  const live = await get(withAdmin, "/platform/_liveness");
  assert.equal(await live.text(), "OK");
  assert.equal(await (await get(withAdmin, "/api/x")).text(), "proxied");
  assert.equal(origin.hits.size, 0);
  assert.throws(() => createDecoWorkerEntry({}, {}, site()), { code: "INVALID_CONFIG" });
  assert.throws(() => createDecoWorkerEntry(origin.serverEntry, { cspMode: "strict" }, site()), { code: "INVALID_CONFIG" });
});

test("a cdnCacheControl function is asked once per profile", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const asked = [];
  const worker = createDecoWorkerEntry(
    origin.serverEntry,
    {
      cdnCacheControl: (profile) => {
        asked.push(profile);
        return profile === "static" ? "public, max-age=30" : null;
      },
      detectProfile: () => "static",
    },
    site(),
  );
  assert.equal(asked.length, 7);
  assert.equal((await get(worker, "/")).headers.get("cdn-cache-control"), "public, max-age=30");
});

test("page JSON on a preview host renders the request's draft, fetched once, with the draft's headers and cookie", async (t) => {
  const fetched = [];
  const api = http.createServer((req, res) => {
    fetched.push(req.url);
    const draft = {
      "pages-home": { name: "Home (draft)", path: "/", sections: [{ __resolveType: "site/sections/Hero.tsx", title: `draft ${req.url}` }] },
    };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(draft));
  });
  await new Promise((resolve) => api.listen(0, "127.0.0.1", resolve));
  t.after(() => api.close());
  const origin = await startOrigin();
  t.after(origin.close);
  const s = createSiteSetup({
    env: { BUILD_HASH: "b1", PLATFORM_PREVIEW_API_DOMAINS: "127.0.0.1" },
    blocks: {
      site: { __resolveType: "site/apps/site.ts", previewHosts: ["preview.shop.example"] },
      "pages-home": { name: "Home", path: "/", sections: [{ __resolveType: "site/sections/Hero.tsx", title: "published" }] },
    },
  });
  const worker = createDecoWorkerEntry(origin.serverEntry, {}, s);
  const at = (url, headers = {}) => worker.fetch(new Request(`https://preview.shop.example${url}`, { headers }), {}, { waitUntil() {} });
  const pointer = `127.0.0.1:${api.address().port}/drafts/home@v1`;

  const entered = await at(`/?renderJson&__draft=${encodeURIComponent(pointer)}`);
  assert.equal(entered.status, 200);
  assert.equal(entered.headers.get("cache-control"), "no-store, private");
  assert.equal(entered.headers.get("x-robots-tag"), "noindex, nofollow");
  assert.match(entered.headers.get("vary"), /Cookie/);
  const cookie = entered.headers.get("set-cookie");
  assert.match(cookie, /^__platform_draft=[^;]+;.*Max-Age=1800/);
  const page = await entered.json();
  assert.equal(page.name, "Home (draft)");
  assert.equal(page.sections[0].props.title, "draft /drafts/home?v=v1");

  const next = await at("/?asJson", { cookie: cookie.split(";")[0] });
  assert.equal(next.headers.get("set-cookie"), null, "the cookie carries the preview on");
  assert.equal((await next.json()).props.name, "Home (draft)");
  assert.deepEqual(fetched, ["/drafts/home?v=v1"], "a kept draft is not fetched again");

  const left = await at("/?renderJson&__draft=off", { cookie: cookie.split(";")[0] });
  assert.match(left.headers.get("set-cookie"), /^__platform_draft=;.*Max-Age=0/);
  assert.equal((await left.json()).name, "Home");

  const elsewhere = await get(worker, `/?renderJson&__draft=${encodeURIComponent(pointer.replace("home", "other"))}`);
  assert.equal(elsewhere.headers.get("set-cookie"), null);
  assert.equal((await elsewhere.json()).name, "Home", "a host that may not preview never sees a draft");
  assert.equal(fetched.length, 1);
  assert.equal(origin.hits.size, 0, "page JSON never reaches the origin");
});

test("?asJson and ?renderJson are answered from the resolved page, before the cache", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const s = createSiteSetup({
    env: { BUILD_HASH: "b1" },
    blocks: {
      "pages-home": {
        name: "Home",
        path: "/",
        sections: [
          { __resolveType: "site/sections/Hero.tsx", title: "hi", products: { __resolveType: "site/loaders/products.ts" } },
          { __resolveType: "site/sections/Hidden.tsx" },
        ],
      },
    },
    sections: {
      "./sections/Hero.tsx": async () => ({ default: () => null, loader: (props) => ({ ...props, loaded: true }) }),
      "./sections/Hidden.tsx": async () => ({ default: () => null, renderJson: false }),
    },
    loaders: { "site/loaders/products.ts": () => ["shoe"] },
  });
  const worker = createDecoWorkerEntry(origin.serverEntry, {}, s);
  const render = await get(worker, "/?renderJson");
  assert.equal(render.status, 200);
  const etag = render.headers.get("etag");
  assert.match(etag, /^"rj-/);
  assert.deepEqual(await render.json(), {
    name: "Home",
    path: "/",
    sections: [{ component: "site/sections/Hero.tsx", props: { title: "hi", products: ["shoe"], loaded: true } }],
  });
  assert.equal((await get(worker, "/?renderJson", { headers: { "if-none-match": etag } })).status, 304);
  const legacy = await get(worker, "/?asJson");
  assert.equal(legacy.status, 200);
  assert.equal((await legacy.json()).props.sections.length, 2);
  assert.equal((await get(worker, "/nothing?asJson")).status, 404);
  assert.equal(origin.hits.size, 0, "page JSON never reaches the origin");
  const closed = createDecoWorkerEntry(origin.serverEntry, { asJson: false }, s);
  await get(closed, "/?asJson");
  assert.equal(origin.hits.get("/"), 1, "asJson off: an ordinary page request");
});

test("outgoing fetches without a User-Agent get the outbound one", async (t) => {
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers["user-agent"]);
    res.end("ok");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  const upstream = `http://127.0.0.1:${server.address().port}/`;
  const entry = { fetch: async () => new Response(await (await fetch(upstream)).text()) };
  const worker = createDecoWorkerEntry(entry, { outboundUserAgent: "shop-bot/1" }, site());
  await get(worker, "/blog/x", { method: "POST" });
  await fetch(upstream, { headers: { "user-agent": "mine" } });
  assert.deepEqual(seen, ["shop-bot/1", "mine"]);
  const defaults = createDecoWorkerEntry(entry, {}, site());
  await get(defaults, "/blog/y", { method: "POST" });
  assert.match(seen[2], /^sitefile\/\d+\.\d+\.\d+$/, "the default names the runtime, never a visitor's Host");
  const off = createDecoWorkerEntry(entry, { outboundUserAgent: false }, site());
  await get(off, "/blog/z", { method: "POST" });
  assert.equal(seen[3], "node", "off: fetch's own agent");
});

test("a request that passes on reaches the origin with its body", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const worker = createDecoWorkerEntry(origin.serverEntry, { admin: {} }, site());
  const response = await get(worker, "/echo", { method: "POST", body: "hello origin" });
  assert.equal(await response.text(), "echo:hello origin");
});

test("collapsed followers get the stored copy, never the leader's own cookies", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  origin.state.delayMs = 100;
  const worker = createDecoWorkerEntry(origin.serverEntry, {}, site());
  const responses = await Promise.all(Array.from({ length: 3 }, () => get(worker, "/bucket")));
  assert.equal(origin.hits.get("/bucket"), 1);
  const cookies = responses.map((r) => r.headers.get("set-cookie"));
  assert.equal(cookies.filter((c) => c === "_platform_bucket=visitor1; Path=/").length, 1, "the leader's own");
  assert.equal(cookies.filter((c) => c === null).length, 2, "followers get none");
});

test("stale-if-error also covers an origin that cannot be reached", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const clock = { now: Date.parse("2026-11-24T12:00:00Z") };
  let down = false;
  const entry = { fetch: (request) => (down ? Promise.reject(new Error("connection refused")) : origin.serverEntry.fetch(request)) };
  const worker = createDecoWorkerEntry(entry, { detectProfile: () => "static" }, site({}, clock));
  await get(worker, "/");
  clock.now += 10_000 * 1000;
  down = true;
  const rescued = await get(worker, "/");
  assert.equal(rescued.headers.get("x-cache"), "STALE-ERROR");
  clock.now += 100_000 * 1000;
  await assert.rejects(get(worker, "/"), /connection refused/, "past stale-if-error the failure is the answer");
});

test("speculationRules: pages name the rules in a header, and the edge serves them", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const options = { speculationRules: { mode: "prerender", exclude: ["/wishlist*"] } };
  const worker = createDecoWorkerEntry(origin.serverEntry, options, site());
  for (const path of ["/", "/"]) {
    const page = await get(worker, path);
    assert.equal(page.headers.get("speculation-rules"), '"/_cache/speculation-rules.json"', path);
    await page.text();
  }
  const rules = await get(worker, "/_cache/speculation-rules.json");
  assert.equal(rules.status, 200);
  assert.equal(rules.headers.get("content-type"), "application/speculationrules+json");
  const body = await rules.json();
  const conditions = body.prerender[0].where.and.map((c) => c.not?.href_matches ?? c.href_matches);
  assert.ok(conditions.includes("/wishlist*") && conditions.includes("/checkout*"), conditions.join(" "));
  assert.equal(origin.hits.get("/_cache/speculation-rules.json"), undefined, "the origin is not asked");

  const off = createDecoWorkerEntry(origin.serverEntry, {}, site());
  const page = await get(off, "/");
  assert.equal(page.headers.get("speculation-rules"), null);
  const passed = await get(off, "/_cache/speculation-rules.json");
  assert.equal(origin.hits.get("/_cache/speculation-rules.json"), 1, "without the option the path is the origin's");
  await passed.text();
});

test("autoInjectGeoCookies: the origin gets the visitor's location as __cf_geo_* cookies", async () => {
  const seen = [];
  const bodies = [];
  const serverEntry = {
    fetch: async (request) => {
      seen.push(request.headers.get("cookie"));
      if (request.method === "POST") bodies.push(await request.text());
      return new Response("<html></html>", { headers: { "content-type": "text/html" } });
    },
  };
  const withCf = (path, cf, init) => {
    const request = new Request(`https://shop.example${path}`, init);
    Object.defineProperty(request, "cf", { value: cf });
    return request;
  };
  const worker = createDecoWorkerEntry(serverEntry, {}, site());
  await worker.fetch(
    withCf("/", { country: "BR", city: "São Paulo", latitude: "-23.55", colo: "GRU" }, { headers: { cookie: "a=1" } }),
    {},
    {},
  );
  assert.equal(seen.at(-1), "a=1; __cf_geo_country=BR; __cf_geo_city=S%C3%A3o%20Paulo; __cf_geo_lat=-23.55");
  await worker.fetch(new Request("https://shop.example/p", { headers: { "cf-ipcountry": "AR" } }), {}, {});
  assert.equal(seen.at(-1), "__cf_geo_country=AR", "from the edge's geo headers too");
  const posted = await worker.fetch(withCf("/echo", { country: "BR" }, { method: "POST", body: "kept" }), {}, {});
  assert.equal(posted.status, 200);
  assert.deepEqual(bodies, ["kept"], "a request with a body is handed on with it");

  const off = createDecoWorkerEntry(serverEntry, { autoInjectGeoCookies: false }, site());
  await off.fetch(withCf("/x", { country: "BR" }, { headers: { cookie: "a=1" } }), {}, {});
  assert.equal(seen.at(-1), "a=1");
});

test("?renderJson runs the loaders and projection of the sections it writes, and only those", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const loaderCalls = [];
  const reported = [];
  const s = createSiteSetup({
    env: { BUILD_HASH: "b1" },
    asyncRendering: true,
    onResolveError: (error, resolveType, context) => reported.push([error.message, resolveType, context]),
    blocks: {
      "pages-home": {
        name: "Home",
        path: "/",
        sections: [
          { __resolveType: "site/sections/Hero.tsx", title: "hi", secret: "internal" },
          { __resolveType: "website/sections/Rendering/Lazy.tsx", section: { __resolveType: "site/sections/Footer.tsx", links: ["/a"] } },
          { __resolveType: "site/sections/Broken.tsx", title: "x" },
        ],
      },
    },
    sections: {
      "./sections/Hero.tsx": async () => ({
        default: () => null,
        loader: (props) => {
          loaderCalls.push("Hero");
          return { ...props, loaded: true };
        },
        renderJson: async (props) => ({ title: props.title, loaded: props.loaded }),
      }),
      "./sections/Footer.tsx": async () => ({
        default: () => null,
        loader: (props) => {
          loaderCalls.push("Footer");
          return { ...props, year: 2026 };
        },
      }),
      "./sections/Broken.tsx": async () => ({
        default: () => null,
        renderJson: () => {
          throw new Error("projection failed");
        },
      }),
    },
  });
  const worker = createDecoWorkerEntry(origin.serverEntry, {}, s);
  const whole = await (await get(worker, "/?renderJson")).json();
  assert.deepEqual(whole.sections, [
    { component: "site/sections/Hero.tsx", props: { title: "hi", loaded: true } },
    { component: "site/sections/Footer.tsx", lazyUrl: "/?renderJson&__section=1" },
    { component: "site/sections/Broken.tsx", props: {} },
  ]);
  assert.deepEqual(loaderCalls, ["Hero"], "a deferred section's loader waits for its own request");
  assert.deepEqual(
    reported,
    [["projection failed", "site/sections/Broken.tsx", "renderJson"]],
    "a failing projection fails closed, reported",
  );

  loaderCalls.length = 0;
  const one = await (await get(worker, "/?renderJson&__section=1")).json();
  assert.deepEqual(one, { component: "site/sections/Footer.tsx", props: { links: ["/a"], year: 2026 } });
  assert.deepEqual(loaderCalls, ["Footer"], "__section loads that section alone");

  loaderCalls.length = 0;
  const legacy = await (await get(worker, "/?asJson")).json();
  assert.equal(legacy.props.sections.length, 3);
  assert.deepEqual(loaderCalls.sort(), ["Footer", "Hero"], "?asJson writes every section");
});

/** A Web Cache as the Cache API behaves: keyed by URL without its fragment, a copy dropped once
 * its `Cache-Control` max-age has passed (by `clock`). */
function fakeWebCache(clock) {
  const entries = new Map();
  const keyOf = (url) => url.split("#")[0];
  return {
    entries,
    async match(url) {
      const entry = entries.get(keyOf(url));
      if (!entry || clock.now >= entry.expiresAt) return undefined;
      return new Response(entry.body, { status: entry.status, headers: entry.headers });
    },
    async put(url, response) {
      const maxAge = /max-age=(\d+)/.exec(response.headers.get("cache-control") ?? "");
      const expiresAt = maxAge ? clock.now + Number(maxAge[1]) * 1000 : clock.now;
      entries.set(keyOf(url), { status: response.status, headers: [...response.headers], body: await response.arrayBuffer(), expiresAt });
    },
    async delete(url) {
      return entries.delete(keyOf(url));
    },
  };
}

test("createWebCacheStorage: device variants stay apart, copies live as long as the edge serves them", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const clock = { now: Date.parse("2026-11-24T12:00:00Z") };
  const cache = fakeWebCache(clock);
  const options = { cacheStorage: () => createWebCacheStorage(cache), detectProfile: () => "static" };
  const worker = createDecoWorkerEntry(origin.serverEntry, options, site({}, clock));
  const mobile = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148";
  const desktop = await get(worker, "/");
  assert.equal(desktop.headers.get("x-cache"), "MISS");
  await desktop.text();
  const phone = await get(worker, "/", { headers: { "user-agent": mobile } });
  assert.equal(phone.headers.get("x-cache"), "MISS", "a phone does not get the desktop copy");
  await phone.text();
  assert.equal(cache.entries.size, 2);
  assert.ok([...cache.entries.keys()].every((k) => !k.includes("#") && k.includes("__platform_key=")));
  const hit = await get(worker, "/");
  assert.equal(hit.headers.get("x-cache"), "HIT");
  assert.equal(hit.headers.get("cache-control"), desktop.headers.get("cache-control"), "the copy's own Cache-Control is served");
  assert.equal(hit.headers.get("x-sitefile-cache-control"), null);
  await hit.text();

  clock.now += 1000 * 1000; // past the copy's own max-age and the edge's `fresh` (900 s)
  const stale = await worker.fetch(new Request("https://shop.example/"), {}, { waitUntil() {} });
  assert.equal(stale.headers.get("x-cache"), "STALE", "kept for the stale window, not the copy's own max-age");
  await stale.text();

  const purge = await worker.fetch(
    new Request("https://shop.example/_cache/purge", {
      method: "POST",
      headers: { authorization: "Bearer purge-me" },
      body: JSON.stringify({ paths: ["/"] }),
    }),
    {},
    { waitUntil() {} },
  );
  assert.equal(purge.status, 200);
  assert.equal(cache.entries.size, 0, "purge deletes through the adapter");
});

test("the memory storage drops a copy the edge can no longer serve", async () => {
  const clock = { now: 0 };
  const storage = createMemoryCacheStorage({ now: () => clock.now });
  await storage.put("k#device=desktop", new Response("a"), { maxAgeSeconds: 10 });
  await storage.put("forever#device=desktop", new Response("b"));
  clock.now = 9_999;
  assert.equal(await (await storage.match("k#device=desktop")).text(), "a");
  clock.now = 10_000;
  assert.equal(await storage.match("k#device=desktop"), undefined);
  assert.equal(await (await storage.match("forever#device=desktop")).text(), "b");
});

/** A KV namespace in memory, as workerd binds one; `failing` makes every call throw,
 * `refusing(key)` the puts of the keys it names; a put takes a tick, as a real one does. */
function memoryKv() {
  const values = new Map();
  const kv = {
    failing: false,
    refusing: () => false,
    values,
    async get(key, type) {
      if (kv.failing) throw new Error("KV is down");
      assert.equal(type, "arrayBuffer");
      const value = values.get(key);
      return value === undefined ? null : value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength);
    },
    async put(key, value) {
      await new Promise((resolve) => setImmediate(resolve));
      if (kv.failing || kv.refusing(key)) throw new Error("KV is down");
      values.set(key, new Uint8Array(value));
    },
  };
  return kv;
}

const text = (bytes) => new TextDecoder().decode(bytes);

test("Fast Deploy: reloads at once in one isolate land one after the other; a failed revision write puts the snapshot back", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const kv = memoryKv();
  const env = { PLATFORM_KV: kv };
  const editor = site({ PLATFORM_FAST_DEPLOY: "true", PLATFORM_DEPLOYMENT_ID: "d1", PLATFORM_RELEASE_RELOAD_TOKEN: "tok" });
  const worker = createDecoWorkerEntry(origin.serverEntry, { admin: {} }, editor);
  const reload = (body) =>
    worker.fetch(
      new Request("https://shop.example/.sitefile", { method: "POST", headers: { authorization: "tok" }, body: JSON.stringify(body) }),
      env,
    );
  const [a, b] = await Promise.all([
    reload({ blocks: { "pages-a": { path: "/a", sections: [] } } }),
    reload({ blocks: { "pages-b": { path: "/b", sections: [] } } }),
  ]);
  assert.deepEqual([a.status, b.status], [200, 200]);
  const blocks = JSON.parse(text(kv.values.get("sitefile:d1")));
  assert.ok(blocks["pages-a"] && blocks["pages-b"], "the second reload planned on the first");
  assert.equal(text(kv.values.get("index:revision:d1")), editor.revision);

  const before = editor.revision;
  const stored = kv.values.get("sitefile:d1");
  kv.refusing = (key) => key.startsWith("index:revision:");
  const refused = await reload({ blocks: { "pages-c": { path: "/c", sections: [] } } });
  assert.equal(refused.status, 503);
  assert.equal((await refused.json()).error.code, "KV_WRITE_FAILED");
  assert.equal(editor.revision, before, "the content did not change");
  assert.deepEqual(kv.values.get("sitefile:d1"), stored, "the serving snapshot was put back");
});

test("Fast Deploy on PLATFORM_KV: a reload is written before it serves, and another entry of the deployment loads it at its next read", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  const kv = memoryKv();
  const env = { PLATFORM_KV: kv };
  const clock = { now: Date.parse("2026-11-24T12:00:00Z") };
  const setup = () => site({ PLATFORM_FAST_DEPLOY: "true", PLATFORM_DEPLOYMENT_ID: "d1", PLATFORM_RELEASE_RELOAD_TOKEN: "tok" }, clock);
  const editor = setup();
  const editing = createDecoWorkerEntry(origin.serverEntry, { admin: {} }, editor);
  const reader = setup();
  const reading = createDecoWorkerEntry(origin.serverEntry, { admin: {} }, reader);
  const fetchWith = async (worker, url, init) => {
    const background = [];
    const response = await worker.fetch(new Request(`https://shop.example${url}`, init), env, {
      waitUntil: (work) => background.push(work),
    });
    await Promise.all(background);
    return response;
  };
  await fetchWith(reading, "/");
  const reload = (body) =>
    fetchWith(editing, "/.sitefile", { method: "POST", headers: { authorization: "tok" }, body: JSON.stringify(body) });
  const response = await reload({ blocks: { "pages-about": { path: "/about", sections: [] } } });
  assert.equal(response.status, 200);
  const { revision, kvWritten } = await response.json();
  assert.equal(kvWritten, true);
  assert.equal(editor.revision, revision);
  assert.equal(text(kv.values.get("index:revision:d1")), revision);
  assert.ok(JSON.parse(text(kv.values.get("sitefile:d1")))["pages-about"]);
  await fetchWith(reading, "/");
  assert.notEqual(reader.revision, revision, "read again only 10 s after the last read");
  clock.now += 10_000;
  await fetchWith(reading, "/");
  assert.equal(reader.revision, revision, "the poll loaded the reload");

  // The store down: a reload is 503 and changes nothing; after a failed read, reloads are refused
  // until a read succeeds.
  kv.failing = true;
  const refused = await reload({ blocks: { "pages-x": { path: "/x", sections: [] } } });
  assert.equal(refused.status, 503);
  assert.equal((await refused.json()).error.code, "KV_WRITE_FAILED");
  assert.equal(editor.revision, revision);
  clock.now += 10_000;
  await fetchWith(editing, "/");
  kv.failing = false;
  const unseen = await reload({ blocks: { "pages-x": { path: "/x", sections: [] } } });
  assert.equal(unseen.status, 503, "not read since the failed read");
  assert.match((await unseen.json()).error.message, /has not been read since its last read failed/);
  clock.now += 10_000;
  await fetchWith(editing, "/");
  assert.equal((await reload({ blocks: { "pages-x": { path: "/x", sections: [] } } })).status, 200, "read again: reloads write");
});

test("Fast Deploy stays off without a KV namespace binding, or with PLATFORM_FAST_DEPLOY off", async (t) => {
  const origin = await startOrigin();
  t.after(origin.close);
  for (const [extraEnv, env] of [
    [{ PLATFORM_FAST_DEPLOY: "true", PLATFORM_DEPLOYMENT_ID: "d1" }, {}],
    [{ PLATFORM_FAST_DEPLOY: "true", PLATFORM_DEPLOYMENT_ID: "d1" }, { PLATFORM_KV: "not a namespace" }],
    [{ PLATFORM_FAST_DEPLOY: "0", PLATFORM_DEPLOYMENT_ID: "d1" }, { PLATFORM_KV: memoryKv() }],
  ]) {
    const worker = createDecoWorkerEntry(origin.serverEntry, { admin: {} }, site({ ...extraEnv, PLATFORM_RELEASE_RELOAD_TOKEN: "tok" }));
    const response = await worker.fetch(
      new Request("https://shop.example/.sitefile", {
        method: "POST",
        headers: { authorization: "tok" },
        body: JSON.stringify({ blocks: {} }),
      }),
      env,
    );
    assert.equal(response.status, 200);
    assert.equal((await response.json()).kvWritten, false, JSON.stringify(extraEnv));
  }
});
