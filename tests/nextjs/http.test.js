// examples/nextjs served by `next start`, checked over HTTP. Run by scripts/nextjs.sh, which
// builds the app, starts it (analytics on, drafts allowed on the test address) and sets
// SITEFILE_NEXT_URL and PLATFORM_RELEASE_RELOAD_TOKEN.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");

const BASE = process.env.SITEFILE_NEXT_URL;
const TOKEN = process.env.PLATFORM_RELEASE_RELOAD_TOKEN;
if (!BASE || !TOKEN) throw new Error("SITEFILE_NEXT_URL and PLATFORM_RELEASE_RELOAD_TOKEN must be set (run scripts/nextjs.sh)");

const get = (path, init = {}) => fetch(`${BASE}${path}`, { redirect: "manual", ...init });
const post = (path, body, headers = {}) =>
  get(path, {
    method: "POST",
    body: typeof body === "string" ? body : JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
  });
/** A GET sent with another `Host` header (fetch sends the URL's): `{status, headers, body}`. */
const getWithHost = (path, host, headers = {}) =>
  new Promise((resolve, reject) => {
    require("node:http")
      .get(`${BASE}${path}`, { headers: { ...headers, host } }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body }));
      })
      .on("error", reject);
  });
const mainOf = (html) => {
  const match = /<main[^>]*>[\s\S]*<\/main>/.exec(html);
  assert.ok(match, "the page has its <main>");
  return match[0];
};

test("pages render their sections in order, with loader data, a client component and the layout section", async () => {
  const response = await get("/");
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type"), /text\/html/);
  const html = await response.text();
  assert.match(html, /<title>sitefile on Next\.js<\/title>/, "title from the page's SEO");
  const main = mainOf(html);
  assert.match(main, /data-page="pages-home"/);
  const order = [...main.matchAll(/data-section="(\w+)"/g)].map((m) => m[1]);
  assert.deepEqual(order, ["hero", "shelf", "counter", "features", "greeting", "footer"]);
  assert.match(main, /<h1>Welcome to the example store<\/h1>/);
  assert.equal((main.match(/<li>/g) ?? []).length, 3, "the products loader ran with count 3");
  assert.match(main, /<button type="button">Add one<\/button>/, "the client component is server-rendered");
  assert.match(main, /© sitefile example/);
  assert.match(
    main,
    /<article data-feature="Fast delivery">Fast delivery<\/article><article data-feature="Free returns">/,
    "nested sections render as components",
  );
  assert.match(main, /Hello <!-- -->visitor<!-- -->, this is <!-- -->\//, "the section loader ran");

  const about = mainOf(await (await get("/about")).text());
  assert.match(about, /data-page="pages-about"/);
  assert.match(about, /<h1>About us<\/h1>/);
});

test("createDecoPage's metadata: title, description, canonical and robots from the page's SEO, with the defaults", async () => {
  // In the document (Next 15 streams metadata into the body for browsers; Next 16 into the head).
  let html = await (await get("/")).text();
  assert.match(html, /<meta name="description" content="The example home page"\/>/);
  assert.match(html, /<link rel="canonical" href="https:\/\/example.sitefile.dev\/"\/>/);
  assert.doesNotMatch(html, /name="robots"/);
  html = await (await get("/private")).text();
  assert.match(html, /<title>Members only<\/title>/);
  assert.match(html, /<meta name="robots" content="noindex, nofollow"\/>/);
  html = await (await get("/about")).text();
  assert.match(html, /<title>sitefile example<\/title>/, "siteName when the page has no title");
  assert.match(html, /<meta name="description" content="A Next.js site served by sitefile"\/>/, "defaultDescription");
});

test("the root layout: the analytics tag (scripts/nextjs.sh enables it), the live controls and the editor's frame-ancestors on every page", async () => {
  for (const path of ["/", "/about", "/reviews"]) {
    const response = await get(path);
    assert.equal(
      response.headers.get("content-security-policy"),
      "frame-ancestors 'self' https://studio.platformcms.com https://*.platform.studio",
      "the editor may frame the page",
    );
    const html = await response.text();
    assert.match(html, /<html lang="en">/);
    const tags = html.match(/<script defer="" src="[^"]*\/_platform\/analytics.js"[^>]*>/g) ?? [];
    assert.deepEqual(tags, [`<script defer="" src="${BASE}/_platform/analytics.js" data-site-key="example-key">`], path);
    assert.match(
      html,
      /<script data-platform-live-controls="">[^<]*const editor="https:\/\/studio.platformcms.com\/sites\/sitefile-example"/,
      path,
    );
  }
});

/** The id of the example's Server Action `loadDeferredSection`, read from the client chunks the
 * page at `path` loads (the client calls it by that id). */
async function deferredActionId(html) {
  const chunks = [...html.matchAll(/<script src="([^"]+\.js)"/g)].map((m) => m[1]);
  for (const chunk of new Set(chunks)) {
    const code = await (await get(chunk.startsWith("http") ? new URL(chunk).pathname : chunk)).text();
    const found = /"([0-9a-f]{40,})"[^"]{0,200}"loadDeferredSection"/.exec(code);
    if (found) return found[1];
  }
  throw new Error("no client chunk of the page names loadDeferredSection");
}

test("a deferred section: the first response holds its fallback only; the Server Action loads the section; a bot gets the whole page", async () => {
  const browser = { "user-agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36" };
  const html = await (await get("/reviews", { headers: browser })).text();
  const main = mainOf(html);
  assert.match(
    main,
    /<platform-deferred style="display:block" data-component="site\/sections\/Reviews.tsx"><p data-testid="reviews-loading">Loading <!-- -->What customers say<!-- -->…<\/p><\/platform-deferred><platform-deferred style="display:block" data-component="site\/sections\/Counter.tsx"><\/platform-deferred>/,
  );
  // Not in the HTML nor in the RSC payload: neither the section nor its loader's output.
  assert.doesNotMatch(html, /data-section=\\?"reviews|Loaded for|Great|Helpful/);

  // The separate load: the Server Action the client component calls, as the browser calls it.
  const id = await deferredActionId(html);
  const action = (ref, headers = {}) =>
    fetch(`${BASE}/reviews`, {
      method: "POST",
      headers: {
        ...browser,
        accept: "text/x-component",
        "next-action": id,
        "content-type": "text/plain;charset=UTF-8",
        "sec-fetch-dest": "empty",
        ...headers,
      },
      body: JSON.stringify([ref]),
    });
  const response = await action({ path: "/reviews", index: 2, component: "site/sections/Reviews.tsx" });
  assert.equal(response.status, 200);
  let body = await response.text();
  assert.match(body, /What customers say/);
  assert.match(body, /"Great"/);
  assert.match(body, /Loaded for /, "its section loader ran for this request");
  assert.match(body, /"\/reviews"/);
  body = await (await action({ path: "/reviews", index: 3, component: "site/sections/Counter.tsx" })).text();
  assert.match(body, /"Helpful"/, "the client section, as a client reference with its props");
  for (const ref of [
    { path: "/reviews", index: 0, component: "site/sections/Hero.tsx" },
    { path: "/", index: 2, component: "site/sections/Reviews.tsx" },
    { path: "/reviews", index: 9, component: "site/sections/Reviews.tsx" },
  ]) {
    body = await (await action(ref)).text();
    assert.doesNotMatch(body, /What customers say|Welcome to the example store|data-section/, JSON.stringify(ref));
  }

  const bot = mainOf(
    await (
      await get("/reviews", { headers: { "user-agent": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" } })
    ).text(),
  );
  assert.doesNotMatch(bot, /<platform-deferred/);
  assert.doesNotMatch(bot, /reviews-loading/);
  assert.match(bot, /<div data-section="spacer" style="height:2400px"><\/div><section data-section="reviews"><h2>What customers say<\/h2>/);
  assert.match(bot, /Loaded for <!-- -->\/reviews/, "the section loader ran for the bot's page");
  assert.match(bot, /<section data-section="counter"><button type="button">Helpful<\/button>/);
});

test("preview GETs redirect (307) to the preview page, which renders the section with the site's components", async () => {
  const props = encodeURIComponent(JSON.stringify({ label: "Preview me", start: 5 }));
  let response = await get(`/live/previews/site%2Fsections%2FCounter.tsx?props=${props}`);
  assert.equal(response.status, 307);
  const location = response.headers.get("location");
  assert.equal(new URL(location, BASE).pathname, "/platform/preview/site%2Fsections%2FCounter.tsx");
  response = await get(location);
  assert.equal(response.status, 200);
  const html = await response.text();
  assert.match(html, /<div data-theme="light" data-platform-preview="">/);
  assert.match(
    html,
    /<section data-manifest-key="site\/sections\/Counter.tsx"><section data-section="counter"><button type="button">Preview me<\/button><output data-testid="count">5<\/output>/,
  );
  // The render shell's stylesheet is linked, and the app serves it.
  assert.match(html, /<link(?=[^>]*rel="stylesheet")[^>]*href="\/styles.css"/);
  const css = await get("/styles.css");
  assert.equal(css.status, 200);
  assert.match(css.headers.get("content-type"), /^text\/css/);

  // A page preview: its sections, each wrapped, its section loaders run for the previewed path.
  response = await get(`/platform/preview/Footer`);
  assert.match(await response.text(), /<section data-manifest-key="site\/sections\/Footer.tsx"><footer data-section="footer">/);
  const page = encodeURIComponent(JSON.stringify({ sections: [{ __resolveType: "site/sections/Greeting.tsx", name: "editor" }] }));
  response = await get(`/live/previews/website%2Fpages%2FPage.tsx?path=%2Fsale&props=${page}`);
  assert.equal(response.status, 307);
  assert.match(await (await get(response.headers.get("location"))).text(), /Hello <!-- -->editor<!-- -->, this is <!-- -->\/sale/);

  // POST previews (the editor's props in the body) are rendered by the admin route.
  response = await post("/live/previews/site%2Fsections%2FHero.tsx", { props: { title: "Posted" } });
  assert.equal(response.status, 200);
  assert.match(await response.text(), /<h1>Posted<\/h1>/);
});

test("POST /platform/render and a POST preview of the client component, through the Next route", async () => {
  let response = await post("/platform/render", { __props: { __resolveType: "site/sections/Hero.tsx", title: "Rendered by the route" } });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type"), /text\/html/);
  let html = await response.text();
  assert.match(
    html,
    /<section data-manifest-key="site\/sections\/Hero.tsx"><section data-section="hero" style="text-align:left"><h1>Rendered by the route<\/h1>/,
  );

  // The route's bundle holds only a reference to a client component: the section is the
  // preview page showing it with the posted props, in an iframe.
  response = await post("/live/previews/site%2Fsections%2FCounter.tsx?deviceHint=mobile", { props: { label: "Posted counter", start: 2 } });
  assert.equal(response.status, 200);
  html = await response.text();
  const frame =
    /<section data-manifest-key="site\/sections\/Counter.tsx"><iframe src="([^"]+)" title="site\/sections\/Counter.tsx" data-platform-client-preview=""/.exec(
      html,
    );
  assert.ok(frame, html);
  const src = frame[1].replaceAll("&amp;", "&");
  assert.equal(new URL(src, BASE).pathname, "/platform/preview/site%2Fsections%2FCounter.tsx");
  assert.equal(new URL(src, BASE).searchParams.get("deviceHint"), "mobile");
  response = await get(src);
  assert.equal(response.status, 200);
  assert.match(
    await response.text(),
    /<section data-manifest-key="site\/sections\/Counter.tsx"><section data-section="counter"><button type="button">Posted counter<\/button><output data-testid="count">2<\/output>/,
  );
});

test("a path without a page is the site's not-found page, with status 404", async () => {
  for (const path of ["/no/such/page", "/404"]) {
    const response = await get(path);
    assert.equal(response.status, 404, path);
    // app/not-found.tsx renders the block with "notFound": true (in the RSC payload too:
    // notFound() from generateMetadata streams it).
    const html = await response.text();
    assert.match(html, /We could not find that page/, path);
    assert.doesNotMatch(html, /No page here/, "the app's fallback is for sites without one");
  }
});

test("/live/_meta and /platform/meta: the schema with an ETag, 304 on a match, GET only", async () => {
  let response = await get("/live/_meta");
  assert.equal(response.status, 200);
  const etag = response.headers.get("etag");
  assert.ok(etag, "an ETag");
  const meta = await response.json();
  assert.ok(meta.manifest.blocks.sections["site/sections/Hero.tsx"]);
  response = await get("/platform/meta", { headers: { "if-none-match": etag } });
  assert.equal(response.status, 304);
  response = await get("/live/_meta", { headers: { "if-none-match": etag } });
  assert.equal(response.status, 304);
  response = await post("/platform/meta", {});
  assert.equal(response.status, 405);
  assert.equal(response.headers.get("allow"), "GET, OPTIONS");
  response = await get("/platform/meta", { method: "OPTIONS", headers: { origin: "https://editor.example" } });
  assert.equal(response.status, 204);
  assert.equal(response.headers.get("access-control-allow-origin"), "https://editor.example");
});

test("invoke: a loader by key and in a batch, POST only", async () => {
  let response = await post("/platform/invoke/site/loaders/products.ts", { count: 2 });
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), [
    { name: "Product 1", price: 10 },
    { name: "Product 2", price: 20 },
  ]);
  response = await post("/platform/invoke", { one: { __resolveType: "site/loaders/products.ts", count: 1 } });
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { one: [{ name: "Product 1", price: 10 }] });
  response = await get("/platform/invoke/site/loaders/products.ts");
  assert.equal(response.status, 405);
  assert.equal(response.headers.get("allow"), "POST, OPTIONS");
});

test("draft renders are kept out of shared caches and search indexes", async () => {
  const response = await get("/?__draft=localhost%2F%40v1");
  assert.equal(response.headers.get("x-robots-tag"), "noindex, nofollow");
  assert.match(response.headers.get("cache-control"), /no-store/);
  assert.match(response.headers.get("cache-control"), /private/);
  assert.equal((await get("/")).headers.get("x-robots-tag"), null);
});

test("draft middleware: ?__draft enters preview on an allowed host, the cookie keeps it, off leaves it; another host is inert", async () => {
  // scripts/nextjs.sh allows drafts on the test address (PLATFORM_ALLOWED_PREVIEW_HOSTS).
  const pointer = encodeURIComponent(`${new URL(BASE).host}/drafts/home@v1`);
  let response = await get(`/?__draft=${pointer}`);
  assert.equal(response.status, 200);
  const cookie = response.headers.get("set-cookie");
  assert.match(cookie, /^__platform_draft=[^;]+; Path=\/; HttpOnly; Secure; SameSite=None; Partitioned; Max-Age=1800/);
  assert.equal(response.headers.get("x-robots-tag"), "noindex, nofollow");
  assert.match(response.headers.get("cache-control"), /no-store/);
  const jar = cookie.split(";")[0];
  response = await get("/about", { headers: { cookie: jar } });
  assert.equal(response.headers.get("set-cookie"), null);
  assert.equal(response.headers.get("x-robots-tag"), "noindex, nofollow", "the cookie keeps the preview");
  assert.match(response.headers.get("cache-control"), /no-store/);
  response = await get("/?__draft=off", { headers: { cookie: jar } });
  assert.match(response.headers.get("set-cookie"), /^__platform_draft=; .*Max-Age=0/, "off clears the cookie");
  // Another host: the middleware does nothing (the config wrapper's static rules still mark any
  // ?__draft or draft-cookie request no-store and noindex, as they cannot see the host).
  const other = await getWithHost(`/?__draft=${pointer}`, "other.example");
  assert.equal(other.status, 200);
  assert.equal(other.headers["set-cookie"], undefined, "another host: no draft cookie");
});

test("a multivariate flag on a saved matcher: the variant switches by its cookie and by x-platform-matchers-override", async () => {
  // pages-offers.json: the first variant's rule is the saved matcher block `Members`
  // (website/matchers/cookie.ts, cookie member=yes), the second always.ts.
  const title = async (init) => /<h1>([^<]*)<\/h1>/.exec(mainOf(await (await get("/offers", init)).text()))[1];
  assert.equal(await title(), "Join to save 20%");
  assert.equal(await title({ headers: { cookie: "member=yes" } }), "Members save 20%", "the saved matcher reads the cookie");
  assert.equal(await title({ headers: { cookie: "member=no" } }), "Join to save 20%");
  assert.equal(await title({ headers: { "x-platform-matchers-override": "Members=1" } }), "Members save 20%", "forced true by the header");
  assert.equal(
    await title({ headers: { cookie: "member=yes", "x-platform-matchers-override": "Members=0" } }),
    "Join to save 20%",
    "forced false by the header over the cookie",
  );
  assert.equal(
    /<h1>([^<]*)<\/h1>/.exec(
      mainOf(await (await get(`/offers?x-platform-matchers-override=${encodeURIComponent("Members=1")}`)).text()),
    )[1],
    "Members save 20%",
    "forced by the query parameter",
  );
});

test("a custom matcher registered with customMatchers decides a variant", async () => {
  // matchers/language.ts: site/matchers/language.ts is true when Accept-Language prefers `pt`.
  const greeting = async (language) => {
    const headers = language === undefined ? {} : { "accept-language": language };
    const main = mainOf(await (await get("/offers", { headers })).text());
    return /Hello <!-- -->(\w+)<!-- -->, this is/.exec(main)[1];
  };
  assert.equal(await greeting("pt-BR,pt;q=0.9,en;q=0.8"), "visitante");
  assert.equal(await greeting("pt"), "visitante");
  assert.equal(await greeting("en-US,pt;q=0.5"), "visitor", "only the preferred language counts");
  assert.equal(await greeting(undefined), "visitor");
});

test("draft content: an allowed draft renders the blocks the draft server serves, for the draft request only", async (t) => {
  // A draft server on loopback (scripts/nextjs.sh sets PLATFORM_PREVIEW_API_DOMAINS=127.0.0.1):
  // the draft is the whole content, so it holds the page it changes.
  const fetched = [];
  const server = require("node:http").createServer((req, res) => {
    fetched.push(req.url);
    const blocks = {
      "pages-about": { path: "/about", sections: [{ __resolveType: "site/sections/Hero.tsx", title: "Drafted about page" }] },
    };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(blocks));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const pointer = `127.0.0.1:${server.address().port}/drafts/about@v7`;
  const heading = (html) => /<h1>([^<]*)<\/h1>/.exec(mainOf(html))[1];

  const response = await get(`/about?__draft=${encodeURIComponent(pointer)}`);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("x-robots-tag"), "noindex, nofollow");
  assert.equal(heading(await response.text()), "Drafted about page", "the draft's blocks are rendered");
  assert.deepEqual(fetched, ["/drafts/about?v=v7"], "fetched from the pointer's origin with its version");
  const jar = response.headers.get("set-cookie").split(";")[0];
  assert.equal(
    heading(await (await get("/about", { headers: { cookie: jar } })).text()),
    "Drafted about page",
    "the cookie keeps the draft",
  );
  assert.equal(heading(await (await get("/about")).text()), "About us", "other requests see published content");
  const forged = { "x-platform-draft": pointer, cookie: jar };
  assert.equal(
    heading(await (await get("/about", { headers: { "x-platform-draft": pointer } })).text()),
    "About us",
    "a client's own pointer header is ignored",
  );
  const other = await getWithHost(`/about?__draft=${encodeURIComponent(pointer)}`, "other.example", forged);
  assert.equal(other.status, 200);
  assert.equal(heading(other.body), "About us", "another host sees published content");
  assert.equal(heading(await (await get("/about?__draft=off", { headers: { cookie: jar } })).text()), "About us", "off leaves the draft");
});

test("/.sitefile: read with its revision, 401 without the token, a delta reload changes the page", async () => {
  let response = await get("/.sitefile");
  assert.equal(response.status, 200);
  const etag = response.headers.get("etag");
  assert.ok(etag);
  const content = await response.json();
  assert.ok(content["pages-about"]);

  const delta = {
    blocks: {
      "pages-about": { path: "/about", sections: [{ __resolveType: "site/sections/Hero.tsx", title: "Reloaded at runtime" }] },
    },
  };
  response = await post("/.sitefile", delta);
  assert.equal(response.status, 401);
  response = await post("/.sitefile", delta, { authorization: "wrong" });
  assert.equal(response.status, 401);
  assert.match(mainOf(await (await get("/about")).text()), /About us/, "a refused reload changes nothing");

  response = await post("/.sitefile", delta, { authorization: TOKEN });
  assert.equal(response.status, 200);
  const body = await response.json();
  assert.equal(body.ok, true);
  assert.equal(body.mode, "delta");
  assert.notEqual(`"${body.revision}"`, etag);
  const about = mainOf(await (await get("/about")).text());
  assert.match(about, /<h1>Reloaded at runtime<\/h1>/, "the page serves the reloaded content");
  assert.doesNotMatch(about, /About us/);
  response = await get("/platform/sitefile");
  assert.equal((await response.json())["pages-about"].sections[0].title, "Reloaded at runtime");
});
