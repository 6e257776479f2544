// createDecoWorkerEntry's options, each driven through the public API in front of a loopback
// origin: every test compares the option's effect with what the entry does without it.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const http = require("node:http");
const { createSiteSetup, createAdminSetup, createDecoWorkerEntry, createMemoryCacheStorage } = require("sitefile");

/** A loopback origin recording each request it gets (path with query, headers). `answer(path)`
 * may give `{status, headers, body}`; the default is a small HTML page counting its hits. */
async function startOrigin(answer = () => null) {
  const seen = [];
  const hits = new Map();
  const server = http.createServer((req, res) => {
    const path = req.url.split("?")[0];
    hits.set(path, (hits.get(path) ?? 0) + 1);
    seen.push({ url: req.url, headers: req.headers });
    const custom = answer(path);
    res.writeHead(custom?.status ?? 200, custom?.headers ?? { "content-type": "text/html; charset=utf-8" });
    res.end(custom?.body ?? `<html><body>page ${path} #${hits.get(path)}</body></html>`);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  const serverEntry = {
    fetch: (request) => {
      const url = new URL(request.url);
      return fetch(base + url.pathname + url.search, { headers: request.headers, method: request.method });
    },
  };
  return { seen, hits, serverEntry, close: () => new Promise((resolve) => server.close(resolve)) };
}

function site(env = {}, extra = {}) {
  return createSiteSetup({
    env: { BUILD_HASH: "b1", PURGE_TOKEN: "purge-me", ...env },
    now: () => new Date("2026-11-24T12:00:00Z"),
    blocks: { "pages-home": { name: "Home", path: "/", sections: [{ __resolveType: "site/sections/Hero.tsx", title: "hi" }] } },
    ...extra,
  });
}

const get = async (worker, url, init) => {
  const response = await worker.fetch(new Request(`https://shop.example${url}`, init), {}, { waitUntil() {} });
  // Read the body so the response is whole before the next request.
  const body = await response.text();
  return { status: response.status, headers: response.headers, body };
};
const cache = (response) => response.headers.get("x-cache");

/** A worker over a fresh origin; `t.after` closes the origin. */
async function setUp(t, options, s = site(), answer) {
  const origin = await startOrigin(answer);
  t.after(origin.close);
  return { origin, worker: createDecoWorkerEntry(origin.serverEntry, options, s) };
}

test("safeCookies: a response setting only a listed cookie is stored, without the cookie", async (t) => {
  const answer = (path) =>
    path === "/lang" ? { headers: { "content-type": "text/html", "set-cookie": "lang=pt; Path=/" }, body: "<html>lang</html>" } : null;
  const plain = await setUp(t, {}, site(), answer);
  assert.equal(cache(await get(plain.worker, "/lang")), "BYPASS", "lang is not a safe cookie by default");
  assert.equal(cache(await get(plain.worker, "/lang")), "BYPASS");
  assert.equal(plain.origin.hits.get("/lang"), 2);

  const safe = await setUp(t, { safeCookies: ["lang"] }, site(), answer);
  const first = await get(safe.worker, "/lang");
  assert.equal(cache(first), "MISS");
  assert.equal(first.headers.get("set-cookie"), "lang=pt; Path=/", "the visitor who caused it gets the cookie");
  const second = await get(safe.worker, "/lang");
  assert.equal(cache(second), "HIT");
  assert.equal(second.headers.get("set-cookie"), null, "the stored copy carries no cookie");
  assert.equal(safe.origin.hits.get("/lang"), 1);
});

test("stripTrackingParams: false keeps tracking parameters in the key; trackingParams adds names", async (t) => {
  const strip = await setUp(t, {});
  await get(strip.worker, "/?utm_source=a");
  assert.equal(cache(await get(strip.worker, "/?utm_source=b")), "HIT");

  const keep = await setUp(t, { stripTrackingParams: false });
  assert.equal(cache(await get(keep.worker, "/?utm_source=a")), "MISS");
  assert.equal(cache(await get(keep.worker, "/?utm_source=b")), "MISS", "another campaign is another key");
  assert.equal(cache(await get(keep.worker, "/?utm_source=a")), "HIT");
  assert.equal(keep.origin.hits.get("/"), 2);

  const more = await setUp(t, { trackingParams: ["ref"] });
  assert.equal(cache(await get(more.worker, "/?ref=mail")), "MISS");
  assert.equal(cache(await get(more.worker, "/?REF=ads&utm_medium=x")), "HIT", "names compare ignoring case");
  assert.equal(cache(await get(more.worker, "/?page=2")), "MISS", "other parameters still split the key");
  assert.equal(cache(await get(strip.worker, "/?ref=mail")), "MISS", "ref is no tracking parameter by default");
});

test("bypassPaths: the site's entries are added to the built-in ones, at segment boundaries", async (t) => {
  const { origin, worker } = await setUp(t, { bypassPaths: ["/preview"] });
  for (const path of ["/preview", "/preview/a", "/live/x"]) {
    const response = await get(worker, path);
    assert.equal(cache(response), "BYPASS", path);
    assert.equal(response.headers.get("x-cache-reason"), "bypass-path", path);
  }
  assert.equal(cache(await get(worker, "/previews")), "MISS", "not below /preview");
  assert.equal(cache(await get(worker, "/previews")), "HIT");
  await get(worker, "/preview/a");
  assert.equal(origin.hits.get("/preview/a"), 2);

  const plain = await setUp(t, {});
  assert.equal(cache(await get(plain.worker, "/preview/a")), "MISS", "cached without the option");
});

const assets = (path) => ({
  headers: { "content-type": path.endsWith(".js") ? "text/javascript" : "application/octet-stream" },
  body: `asset ${path}`,
});
const IMMUTABLE = "public, max-age=31536000, immutable";

test("staticPaths: the prefixes given (and no longer /fonts/) are long-lived immutable files", async (t) => {
  const { worker } = await setUp(t, { staticPaths: ["/media/"] }, site(), assets);
  const media = await get(worker, "/media/logo.png");
  assert.equal(media.status, 200);
  assert.equal(media.headers.get("cache-control"), IMMUTABLE);
  const font = await get(worker, "/fonts/inter.woff2");
  assert.notEqual(font.headers.get("cache-control"), IMMUTABLE, "the default list is replaced");

  const plain = await setUp(t, {}, site(), assets);
  assert.notEqual((await get(plain.worker, "/media/logo.png")).headers.get("cache-control"), IMMUTABLE);
  assert.equal((await get(plain.worker, "/fonts/inter.woff2")).headers.get("cache-control"), IMMUTABLE);
});

test("fingerprintedAssetPattern: a RegExp, flags included, decides which files are cached for a year", async (t) => {
  const { worker } = await setUp(t, { fingerprintedAssetPattern: /^\/static\/.+\.[0-9a-f]{6}\.js$/ }, site(), assets);
  assert.equal((await get(worker, "/static/app.abc123.js")).headers.get("cache-control"), IMMUTABLE);
  assert.notEqual((await get(worker, "/static/app.js")).headers.get("cache-control"), IMMUTABLE);
  assert.notEqual(
    (await get(worker, "/assets/app-3f9a1b2c.js")).headers.get("cache-control"),
    IMMUTABLE,
    "the default pattern is replaced",
  );

  const caseless = await setUp(t, { fingerprintedAssetPattern: /^\/STATIC\/.+\.JS$/i }, site(), assets);
  assert.equal((await get(caseless.worker, "/static/app.js")).headers.get("cache-control"), IMMUTABLE, "the i flag");
  const source = await setUp(t, { fingerprintedAssetPattern: "^/bundle/" }, site(), assets);
  assert.equal((await get(source.worker, "/bundle/x.js")).headers.get("cache-control"), IMMUTABLE, "a source string");

  const plain = await setUp(t, {}, site(), assets);
  assert.notEqual((await get(plain.worker, "/static/app.abc123.js")).headers.get("cache-control"), IMMUTABLE);
  assert.throws(() => createDecoWorkerEntry(plain.origin.serverEntry, { fingerprintedAssetPattern: /(?<=\/)static\// }, site()), {
    code: "INVALID_CONFIG",
  });
});

test("securityHeaders: an object merged over the defaults; false sends none", async (t) => {
  const plain = await setUp(t, {});
  const defaults = (await get(plain.worker, "/")).headers;
  assert.equal(defaults.get("x-content-type-options"), "nosniff");
  assert.equal(defaults.get("referrer-policy"), "strict-origin-when-cross-origin");
  assert.equal(defaults.get("x-frame-options"), null);

  const custom = await setUp(t, { securityHeaders: { "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer" } });
  const merged = (await get(custom.worker, "/")).headers;
  assert.equal(merged.get("x-frame-options"), "DENY");
  assert.equal(merged.get("referrer-policy"), "no-referrer", "a default is replaced");
  assert.equal(merged.get("x-content-type-options"), "nosniff", "the other defaults stay");

  const off = await setUp(t, { securityHeaders: false });
  const none = (await get(off.worker, "/")).headers;
  for (const name of ["x-content-type-options", "referrer-policy", "strict-transport-security", "content-security-policy"]) {
    assert.equal(none.get(name), null, name);
  }
});

test("cdnCacheControl as a policy name", async (t) => {
  const plain = await setUp(t, {});
  assert.equal((await get(plain.worker, "/")).headers.get("cdn-cache-control"), "no-store", "serverfn-segment: documents never");
  const match = await setUp(t, { cdnCacheControl: "match-profile" });
  assert.equal((await get(match.worker, "/")).headers.get("cdn-cache-control"), "public, max-age=900", "the static profile's edge time");
  assert.equal((await get(match.worker, "/camisetas")).headers.get("cdn-cache-control"), "public, max-age=120", "listing");
  assert.equal((await get(match.worker, "/cart")).headers.get("cdn-cache-control"), null, "never on a private answer");
  assert.throws(() => createDecoWorkerEntry(plain.origin.serverEntry, { cdnCacheControl: "sometimes" }, site()), {
    code: "INVALID_CONFIG",
  });
});

test("renderJson: false passes ?renderJson to the origin; ?asJson is still served", async (t) => {
  const { origin, worker } = await setUp(t, { renderJson: false });
  const page = await get(worker, "/?renderJson");
  assert.match(page.body, /^<html>/);
  assert.equal(origin.hits.get("/"), 1);
  const legacy = await get(worker, "/?asJson");
  assert.equal(JSON.parse(legacy.body).props.sections.length, 1);
  assert.equal(origin.hits.get("/"), 1);

  const plain = await setUp(t, {});
  assert.equal(JSON.parse((await get(plain.worker, "/?renderJson")).body).name, "Home");
  assert.equal(plain.origin.hits.size, 0);
});

test("buildSegment: called with each request; its answer keys the cache and shows in X-Cache-Segment", async (t) => {
  const asked = [];
  const buildSegment = async (request) => {
    asked.push(request.url);
    const channel = request.headers.get("x-channel");
    return { salesChannel: channel, loggedIn: request.headers.get("cookie") === "session=1" };
  };
  const { origin, worker } = await setUp(t, { buildSegment });
  const one = await get(worker, "/", { headers: { "x-channel": "1" } });
  assert.equal(cache(one), "MISS");
  assert.equal(one.headers.get("x-cache-segment"), "sc=1");
  assert.deepEqual(asked, ["https://shop.example/"]);
  const two = await get(worker, "/", { headers: { "x-channel": "2" } });
  assert.equal(cache(two), "MISS", "another segment, another copy");
  assert.equal(two.headers.get("x-cache-segment"), "sc=2");
  assert.equal(cache(await get(worker, "/", { headers: { "x-channel": "1" } })), "HIT");
  const mobile = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148";
  const phone = await get(worker, "/", { headers: { "x-channel": "1", "user-agent": mobile } });
  assert.equal(cache(phone), "HIT", "the segment replaces the device part of the key");
  const member = await get(worker, "/", { headers: { "x-channel": "1", cookie: "session=1" } });
  assert.equal(cache(member), "BYPASS");
  assert.equal(member.headers.get("x-cache-reason"), "logged-in");
  assert.equal(asked.length, 5);
  assert.equal(origin.hits.get("/"), 3);
});

const PHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148";

test("deviceSpecificKeys: false shares one copy between phones and desktops", async (t) => {
  const split = await setUp(t, {});
  await get(split.worker, "/");
  assert.equal(cache(await get(split.worker, "/", { headers: { "user-agent": PHONE } })), "MISS");

  const shared = await setUp(t, { deviceSpecificKeys: false });
  await get(shared.worker, "/");
  assert.equal(cache(await get(shared.worker, "/", { headers: { "user-agent": PHONE } })), "HIT");
  assert.equal(shared.origin.hits.get("/"), 1);
});

const locationBlocks = {
  "pages-home": {
    path: "/",
    sections: [
      {
        __resolveType: "website/flags/multivariate.ts",
        variants: [
          {
            rule: { __resolveType: "website/matchers/location.ts", includeLocations: [{ country: "BR" }] },
            value: { __resolveType: "site/sections/Hero.tsx" },
          },
        ],
      },
    ],
  },
};

test("geoCacheKey: country keeps one copy per country; auto without a location rule keeps one", async (t) => {
  const from = (country) => ({ headers: { "cf-ipcountry": country } });
  const country = await setUp(t, { geoCacheKey: "country" });
  assert.equal(cache(await get(country.worker, "/", from("BR"))), "MISS");
  assert.equal(cache(await get(country.worker, "/", from("AR"))), "MISS");
  assert.equal(cache(await get(country.worker, "/", from("BR"))), "HIT");

  const auto = await setUp(t, {});
  await get(auto.worker, "/", from("BR"));
  assert.equal(cache(await get(auto.worker, "/", from("AR"))), "HIT");
  const off = await setUp(t, { geoCacheKey: "off" }, site({}, { blocks: locationBlocks }));
  await get(off.worker, "/", from("BR"));
  assert.equal(cache(await get(off.worker, "/", from("AR"))), "HIT", "off, even with a location rule");
  const located = await setUp(t, {}, site({}, { blocks: locationBlocks }));
  await get(located.worker, "/", from("BR"));
  assert.equal(cache(await get(located.worker, "/", from("AR"))), "MISS", "auto with a location rule");
});

test("cacheVersionEnv: the variable named versions the key; false leaves the version out", async (t) => {
  const storage = createMemoryCacheStorage();
  const keys = [];
  const recording = {
    ...storage,
    put: (key, response, options) => {
      keys.push(key);
      return storage.put(key, response, options);
    },
  };
  const env = { DEPLOY_ID: "d7" };
  const named = await setUp(t, { cacheVersionEnv: "DEPLOY_ID", cacheStorage: () => recording }, site(env));
  assert.equal((await get(named.worker, "/")).headers.get("x-cache-version"), "d7");
  assert.match(keys[0], /#v=d7&/);

  const plain = await setUp(t, {}, site(env));
  assert.equal((await get(plain.worker, "/")).headers.get("x-cache-version"), "b1");

  const off = await setUp(t, { cacheVersionEnv: false, cacheStorage: () => recording }, site(env));
  const unversioned = await get(off.worker, "/camisetas");
  assert.equal(cache(unversioned), "MISS");
  assert.equal(unversioned.headers.get("x-cache-version"), null);
  assert.doesNotMatch(keys[1], /v=/);
});

test("purgeTokenEnv: the variable named holds the token; false disables purging", async (t) => {
  const purge = (worker, token) =>
    get(worker, "/_cache/purge", { method: "POST", headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ paths: ["/"] }) });
  const named = await setUp(t, { purgeTokenEnv: "MY_PURGE" }, site({ MY_PURGE: "secret" }));
  assert.equal((await purge(named.worker, "purge-me")).status, 401, "PURGE_TOKEN no longer counts");
  assert.equal((await purge(named.worker, "secret")).status, 200);

  const off = await setUp(t, { purgeTokenEnv: false });
  await get(off.worker, "/");
  const refused = await purge(off.worker, "purge-me");
  assert.equal(refused.status, 404);
  assert.equal(JSON.parse(refused.body).error.code, "PURGE_DISABLED");
  assert.equal(cache(await get(off.worker, "/")), "HIT", "nothing was purged");
});

test("pageJsonCors: a list reflects allowed origins with credentials; false adds no CORS", async (t) => {
  const from = (origin) => ({ headers: { origin } });
  const plain = await setUp(t, {});
  assert.equal((await get(plain.worker, "/?renderJson", from("https://app.example"))).headers.get("access-control-allow-origin"), "*");

  const listed = await setUp(t, { pageJsonCors: ["https://app.example"] });
  const allowed = await get(listed.worker, "/?renderJson", from("https://app.example"));
  assert.equal(allowed.headers.get("access-control-allow-origin"), "https://app.example");
  assert.equal(allowed.headers.get("access-control-allow-credentials"), "true");
  assert.match(allowed.headers.get("vary"), /Origin/);
  const other = await get(listed.worker, "/?renderJson", from("https://evil.example"));
  assert.equal(other.status, 200);
  assert.equal(other.headers.get("access-control-allow-origin"), null);
  const asJson = await get(listed.worker, "/?asJson", from("https://app.example"));
  assert.equal(asJson.headers.get("access-control-allow-origin"), "https://app.example", "?asJson too");

  const off = await setUp(t, { pageJsonCors: false });
  assert.equal((await get(off.worker, "/?renderJson", from("https://app.example"))).headers.get("access-control-allow-origin"), null);
});

test("previewShell: the empty preview frame is the site's HTML", async (t) => {
  const shell = '<!DOCTYPE html><html><body id="frame">waiting for the editor</body></html>';
  const s = site();
  createAdminSetup({ css: "/styles.css" }, s);
  const custom = await setUp(t, { admin: {}, previewShell: shell }, s);
  const frame = await get(custom.worker, "/live/previews");
  assert.equal(frame.status, 200);
  assert.equal(frame.body, shell);

  const built = await setUp(t, { admin: {} }, s);
  const plain = await get(built.worker, "/live/previews");
  assert.notEqual(plain.body, shell);
  assert.match(plain.body, /<link rel="stylesheet" href="\/styles.css">/, "built from the render shell");
});
