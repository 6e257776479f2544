// The Next.js binding's server pieces, called as Next calls them: `createNextSetup`
// (`sitefile/setup`), the catch-all admin route (`sitefile/route-handlers`), the config
// wrapper (`sitefile/config`), the page and the preview page (`sitefile/page`).
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
let names = 0;
const uniq = () => `site-${++names}`;

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
      name: uniq(),
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

test("createNextSetup: nonCriticalSections are taken, and their loaders' failures do not degrade the page", async () => {
  const { runSectionLoadersWithEffects } = require("sitefile");
  const site = await createNextSetup({
    name: uniq(),
    blocks: { "pages-home": { path: "/", sections: [{ __resolveType: "site/sections/Reviews.tsx" }] } },
    sections: {
      "./sections/Reviews.tsx": async () => ({
        default: () => null,
        loader: () => {
          throw new Error("reviews down");
        },
      }),
    },
    nonCriticalSections: ["site/sections/Reviews.tsx"],
  })();
  const page = await resolveDecoPage({ url: `${ORIGIN}/` }, site);
  const { effects } = await runSectionLoadersWithEffects(page.sections, { url: `${ORIGIN}/` }, site);
  assert.deepEqual(
    effects.errors.map((e) => e.message),
    ["reviews down"],
  );
  assert.equal(effects.degraded, undefined, "a non-critical section's failure does not degrade the page");
});

test("createNextSetup: blocks laid over blocksDir; blocks alone read no directory", async () => {
  const root = siteDir({
    "pages-home": { path: "/", sections: [hero("disk")] },
    "pages-about": { path: "/about", sections: [hero("about")] },
  });
  const site = await createNextSetup({
    name: uniq(),
    sections,
    blocksDir: path.join(root, ".platform/blocks"),
    blocks: { "pages-home": { path: "/", sections: [hero("over")] } },
  })();
  assert.equal((await resolveDecoPage({ url: `${ORIGIN}/` }, site)).sections[0].props.title, "over");
  assert.equal((await resolveDecoPage({ url: `${ORIGIN}/about` }, site)).sections[0].props.title, "about");

  const cwd = process.cwd();
  process.chdir(os.tmpdir()); // no .platform/blocks here
  try {
    const only = await createNextSetup({ name: uniq(), sections, blocks: { "pages-home": { path: "/", sections: [hero("only")] } } })();
    assert.equal((await resolveDecoPage({ url: `${ORIGIN}/` }, only)).sections[0].props.title, "only");
  } finally {
    process.chdir(cwd);
  }
});

/** Resolves `path` on `site` until its first section's title is `want` (a watcher's reload
 * lands within a moment), or gives up after `ms` and returns the last title. */
async function titleBecomes(site, path, want, ms = 5000) {
  const until = Date.now() + ms;
  let title;
  for (;;) {
    title = (await resolveDecoPage({ url: `${ORIGIN}${path}` }, site)).sections[0]?.props.title;
    if (title === want || Date.now() > until) return title;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

test("createNextSetup under next dev: an edited block file is served without a restart; a bad save keeps the content", async () => {
  const root = siteDir({
    "pages-home": { path: "/", sections: [hero("before")] },
    "pages-about": { path: "/about", sections: [hero("about")] },
  });
  const dir = path.join(root, ".platform/blocks");
  const site = await createNextSetup({
    name: uniq(),
    sections,
    blocksDir: dir,
    blocks: { "pages-about": { path: "/about", sections: [hero("laid over")] } },
    env: { NODE_ENV: "development" },
  })();
  const errors = [];
  const error = console.error;
  console.error = (...args) => errors.push(args.join(" "));
  try {
    fs.writeFileSync(path.join(dir, "pages-home.json"), JSON.stringify({ path: "/", sections: [hero("after")] }));
    assert.equal(await titleBecomes(site, "/", "after"), "after");
    assert.equal(await titleBecomes(site, "/about", "laid over"), "laid over", "blocks stay laid over the directory");
    fs.writeFileSync(path.join(dir, "pages-new.json"), JSON.stringify({ path: "/new", sections: [hero("new page")] }));
    assert.equal(await titleBecomes(site, "/new", "new page"), "new page", "a new file is a new block");

    const revision = site.revision;
    fs.writeFileSync(path.join(dir, "pages-home.json"), '{"path": "/", "sections": [');
    const until = Date.now() + 5000;
    while (!errors.some((e) => e.includes("was not served")) && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
    assert.ok(
      errors.some((e) => e.includes("changed but was not served")),
      errors.join("\n"),
    );
    assert.equal(site.revision, revision, "a bad save changes nothing");
    assert.equal(await titleBecomes(site, "/", "after", 0), "after");
  } finally {
    console.error = error;
  }

  // Outside development nothing is watched.
  const production = siteDir({ "pages-home": { path: "/", sections: [hero("built")] } });
  const built = await createNextSetup({
    name: uniq(),
    sections,
    blocksDir: path.join(production, ".platform/blocks"),
    env: { NODE_ENV: "production" },
  })();
  fs.writeFileSync(path.join(production, ".platform/blocks/pages-home.json"), JSON.stringify({ path: "/", sections: [hero("edited")] }));
  assert.equal(await titleBecomes(built, "/", "edited", 500), "built");
});

test("createNextSetup: a rejected set-up is not remembered; the next call tries again", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "sitefile-next-"));
  const dir = path.join(root, "blocks");
  let extendFails = true;
  const ensureSetup = createNextSetup({
    name: uniq(),
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

test("createNextSetup: conventions.meta layout sections are cached by the core across pages", async () => {
  let calls = 0;
  const setup = (conventions) =>
    createNextSetup({
      name: uniq(),
      sections: { "./sections/Footer.tsx": async () => ({ default: () => null }) },
      blocks: {
        Footer: { __resolveType: "site/sections/Footer.tsx", n: { __resolveType: "site/loaders/count.ts" } },
        "pages-a": { path: "/", sections: [{ __resolveType: "Footer" }] },
        "pages-b": { path: "/b", sections: [{ __resolveType: "Footer" }] },
      },
      loaders: { "site/loaders/count.ts": () => ++calls },
      conventions,
    })();
  for (const [conventions, expected] of [
    [undefined, 3],
    [{ meta: { "./sections/Footer.tsx": { layout: true } } }, 1],
  ]) {
    calls = 0;
    const site = await setup(conventions);
    for (const p of ["/", "/b", "/"]) await resolveDecoPage({ url: `${ORIGIN}${p}` }, site);
    assert.equal(calls, expected, `layout convention ${conventions ? "on" : "off"}`);
  }
});

test("createNextSetup: options are checked", async () => {
  assert.throws(() => createNextSetup({ name: uniq() }), { code: "INVALID_CONFIG" });
  assert.throws(() => createNextSetup({ name: uniq(), sections, blocks: {}, bogus: 1 }), { code: "INVALID_CONFIG" });
  assert.throws(() => createNextSetup({ name: uniq(), sections, meta: {} }), { code: "INVALID_CONFIG" });
  assert.throws(() => createNextSetup({ name: uniq(), sections, blocksDir: "" }), { code: "INVALID_CONFIG" });
  assert.throws(() => createNextSetup({ name: uniq(), sections, getCommerceLoaders: {} }), { code: "INVALID_CONFIG" });
});

test("createNextSetup: set-ups of one name share the first one's content; each renders and runs its own modules (Next evaluates the module per bundle)", async () => {
  const blocks = (title) => ({
    "pages-home": { path: "/", sections: [{ ...hero(title), by: { __resolveType: "site/loaders/who.ts" } }] },
  });
  // Each bundle has its own copy of the app's modules: here, components and loaders that say
  // whose they are.
  const layer = (who, extra = {}) => ({
    sections: {
      "./sections/Hero.tsx": async () => ({ default: ({ title, by }) => React.createElement("h1", { "data-by": by }, `${who} ${title}`) }),
    },
    loaders: { "site/loaders/who.ts": () => who },
    previewWrapper: ({ children }) => React.createElement("div", { "data-wrapper": who }, children),
    getCommerceLoaders: () => ({ "site/actions/whose.ts": () => who }),
    ...extra,
  });
  const name = uniq();
  // The middleware's bundle is asked first (a fresh server's first request is a page).
  const middlewareLayer = createNextSetup({ name, ...layer("middleware"), blocks: blocks("first") });
  const pageLayer = createNextSetup({ name, ...layer("page"), blocks: blocks("second") });
  const first = await middlewareLayer();
  const site = await pageLayer();
  assert.notEqual(site, first, "the page's bundle gets a site of its own");
  assert.equal(await pageLayer(), site, "and the same one afterwards");
  assert.equal(site.revision, first.revision, "over the first set-up's content");

  const page = createDecoPage({ siteName: "Shop", setup: pageLayer, fullRequest: true });
  assert.match(
    (await renderPage(page, `${ORIGIN}/`)).html,
    /<h1 data-by="page">page first<\/h1>/,
    "the page's components and loaders, the shared content",
  );
  first.reload({ blocks: { "pages-home": { path: "/", sections: [hero("reloaded")] } } });
  assert.match((await renderPage(page, `${ORIGIN}/`)).html, /<h1>page reloaded<\/h1>/, "a reload through one is seen by the other");

  const preview = createDecoPreviewPage({ setup: pageLayer });
  nextRequestHeaders = new Headers({ host: "shop.example" });
  const shown = renderToStaticMarkup(
    await preview({
      params: Promise.resolve({ path: ["site/sections/Hero.tsx"] }),
      searchParams: Promise.resolve({ props: JSON.stringify({ title: "x" }) }),
    }),
  );
  assert.match(shown, /<div data-wrapper="page"><h1>page x<\/h1><\/div>/, "the page bundle's wrapper");
  const { POST } = createDecoRouteHandlers({ setup: pageLayer });
  const invoked = await POST(
    request("/platform/invoke", {
      method: "POST",
      body: JSON.stringify({ a: { __resolveType: "site/loaders/who.ts" }, b: { __resolveType: "site/actions/whose.ts" } }),
    }),
  );
  assert.deepEqual(await invoked.json(), { a: "page", b: "page" }, "the route bundle's loaders and commerce loaders");
  const posted = await POST(
    request("/live/previews/site%2Fsections%2FHero.tsx", { method: "POST", body: JSON.stringify({ props: { title: "posted" } }) }),
  );
  assert.match(await posted.text(), /<div data-wrapper="page"><h1>page posted<\/h1><\/div>/);

  const other = await createNextSetup({ name: uniq(), sections, blocks: blocks("other") })();
  assert.notEqual(other.revision, site.revision, "another name is another site");
  assert.throws(() => createNextSetup({ name: "", sections, blocks: {} }), { code: "INVALID_CONFIG" });
});

test("createNextSetup: conventions.syncComponents render without importing the section's module", async () => {
  const imported = [];
  const Sync = ({ title }) => React.createElement("h2", null, `sync ${title}`);
  const ensureSetup = createNextSetup({
    name: uniq(),
    sections: {
      "./sections/Hero.tsx": async () => {
        imported.push("Hero");
        return { default: Hero };
      },
      "./sections/Card.tsx": async () => {
        imported.push("Card");
        return { default: Card };
      },
    },
    blocks: { "pages-home": { path: "/", sections: [hero("a"), { __resolveType: "site/sections/Card.tsx", label: "lazy" }] } },
    conventions: { syncComponents: { "./sections/Hero.tsx": Sync } },
  });
  const page = createDecoPage({ siteName: "Shop", setup: ensureSetup });
  const { html } = await renderPage(page, `${ORIGIN}/`);
  assert.match(html, /<h2>sync a<\/h2><b>lazy<\/b>/);
  assert.deepEqual(imported, ["Card"], "the synchronous component's module was not imported");
});

test("createNextSetup: the pass-through options (previewWrapper, productionOrigins, onResolveError, onDanglingReference, getCommerceLoaders, blocksDir: false, resolveGlobals)", async () => {
  const root = siteDir({ "pages-home": { path: "/", sections: [hero("from the directory")] } });
  const errors = [];
  const dangling = [];
  const blocks = {
    site: { __resolveType: "site/apps/site.ts", global: [hero("global")] },
    "pages-home": {
      path: "/",
      sections: [
        {
          __resolveType: "site/sections/Link.tsx",
          href: "https://shop.example/p/1",
          other: "https://elsewhere.example/p/1",
          label: { __resolveType: "site/loaders/missing.ts" },
        },
        { __resolveType: "site/sections/Failing.tsx" },
      ],
    },
  };
  const Link = ({ href, other, label }) => React.createElement("a", { href, "data-other": other }, label);
  const setup = (extra) =>
    createNextSetup({
      name: uniq(),
      sections: {
        ...sections,
        "./sections/Link.tsx": async () => ({ default: Link }),
        "./sections/Failing.tsx": async () => ({
          default: () => React.createElement("i", null, "kept"),
          loader: () => {
            throw new Error("loader down");
          },
        }),
      },
      blocks,
      blocksDir: false,
      previewWrapper: ({ children }) => React.createElement("div", { "data-w": "" }, children),
      productionOrigins: ["https://shop.example"],
      onResolveError: (error, resolveType, context) => errors.push([error.message, resolveType, context]),
      onDanglingReference: (resolveType) => {
        dangling.push(resolveType);
        return `dangling ${resolveType}`;
      },
      getCommerceLoaders: () => ({ "commerce/loaders/price.ts": (props) => ({ price: props.sku * 10 }) }),
      ...extra,
    });
  const cwd = process.cwd();
  process.chdir(root); // a .platform/blocks that blocksDir: false leaves unread
  try {
    const ensureSetup = setup({});
    const { html } = await renderPage(createDecoPage({ siteName: "Shop", setup: ensureSetup, fullRequest: true }), `${ORIGIN}/`);
    assert.equal(
      html,
      `<main data-page="pages-home"><h1>global</h1><a href="/p/1" data-other="https://elsewhere.example/p/1">dangling site/loaders/missing.ts</a><i>kept</i></main>`,
      "globals merged, the production origin made relative, the dangling loader's answer, the failing section kept",
    );
    assert.deepEqual(dangling, ["site/loaders/missing.ts"]);
    assert.deepEqual(errors, [["loader down", "site/sections/Failing.tsx", "Section loader"]]);

    const preview = createDecoPreviewPage({ setup: ensureSetup });
    nextRequestHeaders = new Headers({ host: "shop.example" });
    const shown = renderToStaticMarkup(
      await preview({
        params: Promise.resolve({ path: ["site/sections/Hero.tsx"] }),
        searchParams: Promise.resolve({ props: JSON.stringify({ title: "w" }) }),
      }),
    );
    assert.match(
      shown,
      /<section data-manifest-key="site\/sections\/Hero.tsx"><div data-w=""><h1>w<\/h1><\/div><\/section>/,
      "the preview wrapper",
    );
    const { POST } = createDecoRouteHandlers({ setup: ensureSetup });
    const invoked = await POST(request("/platform/invoke/commerce/loaders/price.ts", { method: "POST", body: JSON.stringify({ sku: 4 }) }));
    assert.deepEqual(await invoked.json(), { price: 40 }, "a commerce loader is invokable");

    const noGlobals = setup({ resolveGlobals: false });
    assert.doesNotMatch(
      (await renderPage(createDecoPage({ siteName: "Shop", setup: noGlobals }), `${ORIGIN}/`)).html,
      /global/,
      "resolveGlobals: false",
    );
  } finally {
    process.chdir(cwd);
  }
});

test("a POST preview of a client component (a reference in the route's bundle) is the preview page showing it, in an iframe", async () => {
  const Client = Object.assign(
    () => {
      throw new Error("a client component cannot be called on the server");
    },
    { $$typeof: Symbol.for("react.client.reference") },
  );
  const ensureSetup = createNextSetup({
    name: uniq(),
    sections: { ...sections, "./sections/Client.tsx": async () => ({ default: Client }) },
    blocks: {},
  });
  const { POST } = createDecoRouteHandlers({ setup: ensureSetup });
  const body = JSON.stringify({ path: "/", sections: [hero("server"), { __resolveType: "site/sections/Client.tsx", label: "a & b" }] });
  const response = await POST(
    request("/live/previews/website%2Fpages%2FPage.tsx?path=%2Fabout&deviceHint=mobile&other=1", { method: "POST", body }),
  );
  const html = await response.text();
  assert.match(
    html,
    /<section data-manifest-key="site\/sections\/Hero.tsx"><h1>server<\/h1><\/section>/,
    "server components render inline",
  );
  const src =
    /<section data-manifest-key="site\/sections\/Client.tsx"><iframe src="([^"]+)" title="site\/sections\/Client.tsx" data-platform-client-preview="" style="width:100%;border:0"><\/iframe><\/section>/.exec(
      html,
    )?.[1];
  assert.ok(src, html);
  const url = new URL(src.replaceAll("&amp;", "&"), ORIGIN);
  assert.equal(url.pathname, "/platform/preview/site%2Fsections%2FClient.tsx");
  assert.deepEqual(Object.fromEntries(url.searchParams), {
    path: "/about",
    deviceHint: "mobile",
    props: JSON.stringify({ label: "a & b" }),
  });
  const huge = JSON.stringify({ props: { label: "x".repeat(9000) } });
  const refused = await (await POST(request("/live/previews/site%2Fsections%2FClient.tsx", { method: "POST", body: huge }))).text();
  assert.match(
    refused,
    /Error rendering site\/sections\/Client.tsx: site\/sections\/Client.tsx is a client component, shown by the preview page, and its props are too large/,
  );
});

test("a hand-written page: resolveDecoPageWithDraft, runSectionLoaders and renderDecoSections from sitefile/page", async (t) => {
  const { runSectionLoaders } = require("sitefile");
  const { renderDecoSections, resolveDecoPageWithDraft } = require("sitefile/page");
  const fetched = [];
  const server = require("node:http").createServer((req, res) => {
    fetched.push(req.url);
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ "pages-home": { path: "/", sections: [hero("drafted")] } }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const lazy = (section) => ({ __resolveType: "website/sections/Rendering/Lazy.tsx", section });
  const Loading = () => React.createElement("hr");
  const ensureSetup = pageSite(
    {
      site: { __resolveType: "site/apps/site.ts", previewHosts: ["shop.example"] },
      "pages-home": {
        path: "/",
        sections: [
          { __resolveType: "site/sections/Greeting.tsx", who: "you" },
          { __resolveType: "site/sections/Grid.tsx", items: [{ __resolveType: "site/sections/Card.tsx", label: "nested" }] },
          lazy({ __resolveType: "site/sections/Card.tsx", label: "later" }),
        ],
      },
    },
    { env: { PLATFORM_PREVIEW_API_DOMAINS: "127.0.0.1" }, conventions: { loadingFallbacks: { "./sections/Card.tsx": Loading } } },
  );
  const site = await ensureSetup();
  const browser = { "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/120", host: "shop.example" };
  // What the app's "use client" deferred-section component renders on the server: the fallback.
  const Deferred = ({ section, fallback }) =>
    React.createElement("platform-deferred", { "data-index": section.index, "data-path": section.path }, fallback);
  const render = async (headers, options = {}) => {
    const request = { url: `${ORIGIN}/`, headers: new Headers(headers) };
    const page = await resolveDecoPageWithDraft(request, site);
    const sections = await runSectionLoaders(page.sections, request, site);
    return renderToStaticMarkup(
      React.createElement("main", null, ...(await renderDecoSections(sections, { setup: ensureSetup, ...options }))),
    );
  };
  assert.equal(
    await render(browser, { deferredSection: Deferred, path: "/" }),
    '<main><p>hello you via /</p><div data-grid=""><b>nested</b></div><platform-deferred data-index="2" data-path="/"><hr/></platform-deferred></main>',
    "section loaders, nested sections as components, a deferred section as its fallback in the deferred-section component",
  );
  assert.equal(
    await render(browser),
    '<main><p>hello you via /</p><div data-grid=""><b>nested</b></div><b>later</b></main>',
    "without one, at once",
  );
  const pointer = `127.0.0.1:${server.address().port}/drafts/home@v1`;
  assert.equal(await render({ ...browser, "x-platform-draft": pointer }), "<main><h1>drafted</h1></main>", "the draft the request carries");
  assert.equal(await render({ ...browser, "x-platform-draft": pointer }), "<main><h1>drafted</h1></main>");
  assert.deepEqual(fetched, ["/drafts/home?v=v1"], "the core keeps the draft: fetched once");
  assert.match(
    await render({ ...browser, host: "other.example", "x-platform-draft": pointer }),
    /hello you/,
    "not on a host that may not preview",
  );
  await assert.rejects(resolveDecoPageWithDraft({ url: `${ORIGIN}/` }, site), { code: "INVALID_REQUEST" });
  await assert.rejects(renderDecoSections([], {}), { code: "INVALID_CONFIG" });
});

function routeSetup(env = {}, extra = {}) {
  let runs = 0;
  const ensureSetup = createNextSetup({
    name: uniq(),
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
  const response = await handlers.OPTIONS(request("/platform/meta", { method: "OPTIONS", headers: { origin: "https://editor.example" } }));
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
      return createNextSetup({ name: uniq(), sections, blocks: {} })();
    },
  });
  await assert.rejects(handlers.GET(request("/platform/_liveness")), /no content yet/);
  fail = false;
  assert.equal((await handlers.GET(request("/platform/_liveness"))).status, 200);
  assert.throws(() => createDecoRouteHandlers({}), { code: "INVALID_CONFIG" });
});

const { withSitefile, SITEFILE_REWRITES, SITEFILE_DRAFT_HEADERS } = require("sitefile/config");

test("config: the three rewrites before the app's, array and object forms", async () => {
  assert.deepEqual(
    SITEFILE_REWRITES.map((r) => [r.source, r.destination]),
    [
      ["/.sitefile", "/platform/sitefile"],
      ["/live/_meta", "/platform/meta"],
      ["/live/previews/:path*", "/platform/previews/:path*"],
    ],
  );
  assert.deepEqual(await withSitefile().rewrites(), SITEFILE_REWRITES);
  const own = { source: "/old", destination: "/new" };
  assert.deepEqual(await withSitefile({ rewrites: async () => [own] }).rewrites(), [...SITEFILE_REWRITES, own]);
  const object = await withSitefile({ rewrites: () => ({ beforeFiles: [own], fallback: [own] }) }).rewrites();
  assert.deepEqual(object, { beforeFiles: [...SITEFILE_REWRITES, own], fallback: [own] });
});

test("config: the editor may frame pages; draft renders kept out of shared caches and indexes; before the app's headers", async () => {
  const config = withSitefile({ headers: async () => [{ source: "/x", headers: [{ key: "X-Own", value: "1" }] }] });
  const rules = await config.headers();
  assert.equal(rules.length, 4);
  assert.deepEqual(rules[0], {
    source: "/:path*",
    headers: [{ key: "Content-Security-Policy", value: "frame-ancestors 'self' https://studio.platformcms.com https://*.platform.studio" }],
  });
  assert.equal(rules[3].source, "/x");
  const drafts = rules.slice(1, 3);
  assert.deepEqual(
    drafts.map((r) => r.has),
    [[{ type: "query", key: "__draft" }], [{ type: "cookie", key: "__platform_draft" }]],
  );
  for (const rule of drafts) {
    assert.equal(rule.source, "/:path*");
    const headers = Object.fromEntries(rule.headers.map((h) => [h.key, h.value]));
    assert.deepEqual(headers, { "Cache-Control": "no-store, private", Vary: "Cookie", "X-Robots-Tag": "noindex, nofollow" });
  }
  assert.deepEqual(SITEFILE_DRAFT_HEADERS, drafts);
});

test("config: the package stays external (webpack and Turbopack), other settings kept", async () => {
  const userWebpack = (config, ctx) => ({ ...config, seen: ctx.isServer });
  const config = withSitefile({
    reactStrictMode: true,
    transpilePackages: ["ui", "sitefile", "ui"],
    serverExternalPackages: ["sharp"],
    webpack: userWebpack,
  });
  assert.equal(config.reactStrictMode, true);
  assert.deepEqual(config.transpilePackages, ["ui", "ui"], "a package both transpiled and external is refused by Next");
  assert.deepEqual(config.serverExternalPackages, ["sharp", "sitefile"]);
  assert.deepEqual(config.turbopack, {}, "Next 16 refuses a webpack hook without a turbopack key");
  assert.deepEqual(withSitefile({ turbopack: { root: "/app" } }).turbopack, { root: "/app" });

  const server = config.webpack({ externals: ["fs"] }, { isServer: true });
  assert.equal(server.seen, true);
  const [externalize, rest] = server.externals;
  assert.equal(rest, "fs");
  const ask = (request) => new Promise((resolve) => externalize({ request }, (_err, result) => resolve(result)));
  assert.equal(await ask("sitefile"), "commonjs sitefile");
  assert.equal(await ask("sitefile/route-handlers"), "commonjs sitefile/route-handlers");
  assert.equal(await ask("sitefiles"), undefined);
  assert.equal(await ask("react"), undefined);
  const client = withSitefile().webpack({ externals: undefined }, { isServer: false });
  assert.equal(client.externals, undefined, "client bundles untouched");

  const fromFunction = await withSitefile(async (phase) => ({ env: { phase } }))("phase-production-build", { defaultConfig: {} });
  assert.deepEqual(fromFunction.env, { phase: "phase-production-build" });
  assert.deepEqual(fromFunction.serverExternalPackages, ["sitefile"]);
});

test("config: the content is traced into the server output; fastDeploy (true, or auto with PLATFORM_SEEDED_DEPLOY) keeps it out", async (t) => {
  const { SITEFILE_CONTENT_FILES } = require("sitefile/config");
  const seeded = process.env.PLATFORM_SEEDED_DEPLOY;
  t.after(() => {
    if (seeded === undefined) delete process.env.PLATFORM_SEEDED_DEPLOY;
    else process.env.PLATFORM_SEEDED_DEPLOY = seeded;
  });
  delete process.env.PLATFORM_SEEDED_DEPLOY;
  const kept = withSitefile({ outputFileTracingIncludes: { "/**": ["data/**"], "/api": ["x"] } });
  assert.deepEqual(kept.outputFileTracingIncludes, { "/**": ["data/**", ...SITEFILE_CONTENT_FILES], "/api": ["x"] });
  assert.equal(kept.outputFileTracingExcludes, undefined);
  assert.deepEqual(withSitefile({}, { fastDeploy: "auto" }).outputFileTracingIncludes, { "/**": [...SITEFILE_CONTENT_FILES] });
  assert.deepEqual(withSitefile({}, { fastDeploy: true }).outputFileTracingExcludes, { "/**": [...SITEFILE_CONTENT_FILES] });
  assert.equal(withSitefile({}, { fastDeploy: true }).outputFileTracingIncludes, undefined, "the content is not traced in");

  process.env.PLATFORM_SEEDED_DEPLOY = "1";
  const stripped = withSitefile({ outputFileTracingExcludes: { "/**": [".platform/blocks/**"] } });
  assert.deepEqual(stripped.outputFileTracingExcludes, { "/**": [...SITEFILE_CONTENT_FILES] }, "auto, seeded: out, each file once");
  assert.equal(stripped.outputFileTracingIncludes, undefined);
  assert.deepEqual(withSitefile({}, { fastDeploy: false }).outputFileTracingIncludes, { "/**": [...SITEFILE_CONTENT_FILES] });
  const fromFunction = await withSitefile(() => ({}), { fastDeploy: "auto" })("phase-production-build", { defaultConfig: {} });
  assert.deepEqual(fromFunction.outputFileTracingExcludes, { "/**": [...SITEFILE_CONTENT_FILES] });

  assert.throws(
    () => withSitefile({}, { fastDeploy: "yes" }),
    (e) => e.code === "INVALID_CONFIG" && /fastDeploy="yes"/.test(e.message),
  );
});

test("getSection: the component a resolved section names, from the set-up's modules", async () => {
  const { getSection } = require("sitefile");
  const Raw = () => null;
  const site = await createNextSetup({
    name: uniq(),
    sections: { ...sections, "./sections/Raw.tsx": () => Raw },
    blocks: { "pages-home": { path: "/", sections: [hero("x"), { __resolveType: "site/sections/Raw.tsx" }] } },
  })();
  const page = await resolveDecoPage({ url: `${ORIGIN}/` }, site);
  const components = await Promise.all(page.sections.map(({ component }) => getSection(component, site)));
  assert.deepEqual(components, [Hero, Raw], "the default export, or the module itself");
  assert.equal(await getSection("site/sections/Missing.tsx", site), undefined);
});

// `sitefile/page` reads the request through `next/headers` and ends with `notFound()` of
// `next/navigation`; Next is not installed here, so both are stand-ins with Next's behaviour
// (one headers object per request; notFound throws its 404 digest).
const Module = require("node:module");
const { renderToStaticMarkup } = require("react-dom/server");
const nextStandIns = {
  "next/headers": { headers: async () => nextRequestHeaders },
  "next/server": {
    NextResponse: {
      // What the middleware hands on: the request headers the app sees, on the response.
      next: ({ request }) => Object.assign(new Response(null, { headers: { "x-middleware-next": "1" } }), { forwarded: request.headers }),
    },
  },
  "next/navigation": {
    notFound() {
      throw Object.assign(new Error("NEXT_HTTP_ERROR_FALLBACK;404"), { digest: "NEXT_HTTP_ERROR_FALLBACK;404" });
    },
  },
};
let nextRequestHeaders = new Headers();
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return Object.hasOwn(nextStandIns, request) ? request : resolveFilename.call(this, request, ...rest);
};
for (const [id, exports] of Object.entries(nextStandIns)) require.cache[id] = { id, filename: id, loaded: true, exports };
const { createDecoPage, createDecoPreviewPage } = require("sitefile/page");

/** Renders `page` for a request to `url` (a new request: new headers). */
async function renderPage(page, url, headers = {}) {
  const { pathname, searchParams, host } = new URL(url);
  nextRequestHeaders = new Headers({ host, ...headers });
  const props = {
    params: Promise.resolve(pathname === "/" ? {} : { slug: pathname.slice(1).split("/").map(decodeURIComponent) }),
    searchParams: Promise.resolve(Object.fromEntries(searchParams)),
  };
  const metadata = await page.generateMetadata(props);
  return { metadata, html: renderToStaticMarkup(await page.default(props)) };
}

const Card = ({ label }) => React.createElement("b", null, label);
const Grid = ({ items }) =>
  React.createElement(
    "div",
    { "data-grid": "" },
    items.map((item, i) => React.createElement(item.Component, { key: i, ...item.props })),
  );
const Greeting = ({ who }) => React.createElement("p", null, `hello ${who}`);
const pageSections = {
  ...sections,
  "./sections/Card.tsx": async () => ({ default: Card }),
  "./sections/Grid.tsx": async () => ({ default: Grid }),
  "./sections/Greeting.tsx": async () => ({
    default: Greeting,
    loader: (props, req) => ({ who: `${props.who} via ${new URL(req.url).pathname}` }),
  }),
};
/** A Next set-up of `blocks` with `pageSections`. */
const pageSite = (blocks, options = {}) => createNextSetup({ name: uniq(), sections: pageSections, blocks, ...options });

test("createDecoPage: renders the path's page, nested sections as components, and its metadata from the core", async () => {
  const ensureSetup = pageSite({
    "pages-home": {
      path: "/",
      seo: { title: "Home", description: "The home page", canonical: "https://shop.example/" },
      sections: [
        hero("Welcome"),
        {
          __resolveType: "site/sections/Grid.tsx",
          items: [
            { __resolveType: "site/sections/Card.tsx", label: "one" },
            { __resolveType: "site/sections/Card.tsx", label: "two" },
          ],
        },
      ],
    },
    "pages-hidden": { path: "/hidden/:id", seo: { noIndexing: true }, sections: [hero("hidden")] },
  });
  const page = createDecoPage({ siteName: "Shop", defaultDescription: "A shop", setup: ensureSetup });
  let { metadata, html } = await renderPage(page, `${ORIGIN}/`);
  assert.deepEqual(metadata, { title: "Home", description: "The home page", alternates: { canonical: "https://shop.example/" } });
  assert.equal(html, `<main data-page="pages-home"><h1>Welcome</h1><div data-grid=""><b>one</b><b>two</b></div></main>`);

  ({ metadata, html } = await renderPage(page, `${ORIGIN}/hidden/a%20b`));
  assert.deepEqual(metadata, { title: "Shop", description: "A shop", robots: { index: false, follow: false } });
  assert.match(html, /data-page="pages-hidden"/);
  const titled = createDecoPage({ siteName: "Shop", defaultTitle: "Shop home", setup: ensureSetup });
  assert.equal((await renderPage(titled, `${ORIGIN}/hidden/1`)).metadata.title, "Shop home");

  await assert.rejects(renderPage(page, `${ORIGIN}/no/such/page`), (e) => e.digest === "NEXT_HTTP_ERROR_FALLBACK;404");
  assert.throws(() => createDecoPage({}), /createDecoPage takes \{ siteName \}/);
});

test("createDecoPage: the site's not-found page is Next's 404, and page.NotFound renders it in app/not-found.tsx", async () => {
  const blocks = {
    "pages-home": { path: "/", sections: [hero("Welcome")] },
    "pages-missing": { path: "/404", notFound: true, sections: [hero("We could not find that page")] },
  };
  const page = createDecoPage({ siteName: "Shop", setup: pageSite(blocks) });
  for (const url of [`${ORIGIN}/no/such/page`, `${ORIGIN}/404`]) {
    await assert.rejects(renderPage(page, url), (e) => e.digest === "NEXT_HTTP_ERROR_FALLBACK;404", url);
  }
  nextRequestHeaders = new Headers({ host: new URL(ORIGIN).host });
  const fallback = React.createElement("h1", null, "No page here");
  assert.equal(
    renderToStaticMarkup(await page.NotFound({ children: fallback })),
    '<main data-page="pages-missing"><h1>We could not find that page</h1></main>',
  );
  const without = createDecoPage({ siteName: "Shop", setup: pageSite({ "pages-home": blocks["pages-home"] }) });
  assert.equal(
    renderToStaticMarkup(await without.NotFound({ children: fallback })),
    "<h1>No page here</h1>",
    "a site without one: the app's fallback",
  );
  assert.equal((await renderPage(page, `${ORIGIN}/`)).html, '<main data-page="pages-home"><h1>Welcome</h1></main>');
});

test("createDecoPage: the path and user agent only by default; fullRequest passes cookies and the query and runs section loaders", async () => {
  const ensureSetup = pageSite({
    "pages-home": {
      path: "/",
      sections: {
        __resolveType: "website/flags/multivariate.ts",
        variants: [
          { rule: { __resolveType: "website/matchers/cookie.ts", name: "vip", value: "1" }, value: [hero("vip")] },
          { rule: { __resolveType: "website/matchers/device.ts", mobile: true }, value: [hero("mobile")] },
          {
            rule: { __resolveType: "website/matchers/always.ts" },
            value: [{ __resolveType: "site/sections/Greeting.tsx", who: "everyone" }],
          },
        ],
      },
    },
  });
  const plain = createDecoPage({ siteName: "Shop", setup: ensureSetup });
  const full = createDecoPage({ siteName: "Shop", setup: ensureSetup, fullRequest: true });
  const phone = { "user-agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148" };
  assert.match((await renderPage(plain, `${ORIGIN}/`, phone)).html, /<h1>mobile<\/h1>/, "the user agent reaches matchers");
  assert.match(
    (await renderPage(plain, `${ORIGIN}/`, { cookie: "vip=1" })).html,
    /<p>hello everyone<\/p>/,
    "no cookies, no section loaders",
  );
  assert.match((await renderPage(full, `${ORIGIN}/`, { cookie: "vip=1" })).html, /<h1>vip<\/h1>/);
  assert.match((await renderPage(full, `${ORIGIN}/?x=1`)).html, /<p>hello everyone via \/<\/p>/, "the section loader ran");
});

test("createNextSetup: customMatchers register a matcher for that set-up, once, and it decides a variant", async () => {
  const { registerMatcher } = require("sitefile");
  const blocks = {
    "pages-home": {
      path: "/",
      sections: {
        __resolveType: "website/flags/multivariate.ts",
        variants: [
          { rule: { __resolveType: "site/matchers/language.ts", language: "pt" }, value: [hero("Olá")] },
          { rule: { __resolveType: "website/matchers/always.ts" }, value: [hero("Hello")] },
        ],
      },
    },
  };
  let registered = 0;
  const rules = [];
  const registerLanguage = () => {
    registered += 1;
    registerMatcher("site/matchers/language.ts", (rule, ctx) => {
      rules.push(rule.language);
      return (ctx.headers["accept-language"] ?? "").startsWith(String(rule.language));
    });
  };
  const page = createDecoPage({ siteName: "Shop", setup: pageSite(blocks, { customMatchers: [registerLanguage] }), fullRequest: true });
  assert.equal(registered, 0, "nothing is registered before the set-up runs");
  const heading = async (language) =>
    /<h1>([^<]*)<\/h1>/.exec((await renderPage(page, `${ORIGIN}/`, language ? { "accept-language": language } : {})).html)[1];
  assert.equal(await heading("pt-BR,pt;q=0.9"), "Olá", "the matcher is true: its variant");
  assert.equal(await heading("en-US"), "Hello", "the matcher is false: the next variant");
  assert.equal(await heading(undefined), "Hello");
  assert.deepEqual(rules, ["pt", "pt", "pt"], "called with the rule, once per request");
  assert.equal(registered, 1, "customMatchers run once, at the set-up");
  // Registered for that set-up only: the same content set up without it never picks the variant.
  const without = createDecoPage({ siteName: "Shop", setup: pageSite(blocks), fullRequest: true });
  assert.match((await renderPage(without, `${ORIGIN}/`, { "accept-language": "pt" })).html, /<h1>Hello<\/h1>/);
  assert.equal(rules.length, 3);
});

test("preview GETs redirect (307) to the preview page, which renders the previewed section, block or page", async () => {
  const ensureSetup = pageSite(
    {
      Hello: { __resolveType: "site/sections/Greeting.tsx", who: "block" },
      "pages-about": { path: "/about", sections: [hero("About"), { __resolveType: "Hello" }] },
    },
    { renderShell: { css: "/styles.css", fonts: ["/font.css"] } },
  );
  let setups = 0;
  const setup = Object.assign(() => {
    setups += 1;
    return ensureSetup();
  }, ensureSetup);
  const { GET, POST } = createDecoRouteHandlers({ setup });
  for (const path of ["/live/previews/site%2Fsections%2FHero.tsx", "/platform/previews/site%2Fsections%2FHero.tsx"]) {
    const response = await GET(
      request(`${path}?props=${encodeURIComponent(JSON.stringify({ title: "Hi" }))}&path=%2Fabout`, {
        headers: { origin: "https://editor.example" },
      }),
    );
    assert.equal(response.status, 307);
    assert.equal(
      response.headers.get("location"),
      `/platform/preview/site%2Fsections%2FHero.tsx?props=%7B%22title%22%3A%22Hi%22%7D&path=%2Fabout`,
    );
    assert.equal(response.headers.get("access-control-allow-origin"), "https://editor.example");
  }
  assert.equal(setups, 0, "the redirect needs no set-up");
  const posted = await POST(
    request("/live/previews/site%2Fsections%2FHero.tsx", { method: "POST", body: JSON.stringify({ props: { title: "Posted" } }) }),
  );
  assert.equal(posted.status, 200, "POST previews are rendered by the route");
  assert.match(await posted.text(), /<h1>Posted<\/h1>/);
  assert.equal((await GET(request("/live/previews"))).status, 200, "the empty preview frame is not redirected");

  const preview = createDecoPreviewPage({ setup });
  const show = async (segments, query) => {
    nextRequestHeaders = new Headers({ host: "shop.example" });
    return renderToStaticMarkup(await preview({ params: Promise.resolve({ path: segments }), searchParams: Promise.resolve(query) }));
  };
  assert.equal(
    await show(["site/sections/Hero.tsx"], { props: JSON.stringify({ title: "Hi" }) }),
    '<div data-theme="light" data-platform-preview=""><link rel="stylesheet" href="/font.css"/><link rel="stylesheet" href="/styles.css"/>' +
      '<section data-manifest-key="site/sections/Hero.tsx"><h1>Hi</h1></section></div>',
  );
  assert.match(
    await show(["Hello"], {}),
    /<section data-manifest-key="site\/sections\/Greeting.tsx"><p>hello block via \/<\/p><\/section>/,
    "a saved block, its section loader run",
  );
  const whole = await show(["website", "pages", "Page.tsx"], {
    path: "/about",
    props: JSON.stringify({ sections: [hero("Whole"), { __resolveType: "Hello" }] }),
  });
  assert.match(
    whole,
    /<section data-manifest-key="site\/sections\/Hero.tsx"><h1>Whole<\/h1><\/section><section data-manifest-key="site\/sections\/Greeting.tsx"><p>hello block via \/about<\/p><\/section>/,
  );
  const broken = createDecoPreviewPage({
    setup: createNextSetup({
      name: uniq(),
      sections: { "./sections/Broken.tsx": async () => Promise.reject(new Error("boom")) },
      blocks: {},
    }),
  });
  nextRequestHeaders = new Headers({ host: "shop.example" });
  const failed = renderToStaticMarkup(await broken({ params: Promise.resolve({ path: ["site/sections/Broken.tsx"] }) }));
  assert.match(failed, /<div class="platform-render-error" role="alert">Render error: boom<\/div>/, "errors render inline");
  assert.throws(() => createDecoPreviewPage({}), /createDecoPreviewPage takes \{ setup: ensureSetup \}/);
});

test("DecoRootLayout: html and body, the analytics tag exactly when PLATFORM_ANALYTICS_ENABLED=true, live controls", () => {
  const { DecoRootLayout } = require("sitefile/layout");
  const render = (props) => renderToStaticMarkup(React.createElement(DecoRootLayout, props, React.createElement("main", null, "page")));
  const enabled = {
    PLATFORM_ANALYTICS_ENABLED: "true",
    PLATFORM_ANALYTICS_ORIGIN: "https://analytics.example",
    PLATFORM_ANALYTICS_SITE_KEY: "key-1",
  };
  const html = render({ siteName: "my-store", lang: "pt-BR", theme: "light", bodyClassName: "site", env: enabled });
  const controls = /<script data-platform-live-controls="">(.*?)<\/script>/.exec(html);
  assert.ok(controls, html);
  assert.equal(
    html,
    '<html lang="pt-BR" data-theme="light"><head><script defer="" src="https://analytics.example/_platform/analytics.js" data-site-key="key-1"></script></head>' +
      `<body class="site"><main>page</main>${controls[0]}</body></html>`,
  );
  assert.match(controls[1], /const editor="https:\/\/studio.platformcms.com\/sites\/my-store"/);
  assert.match(
    render({ siteName: "s", env: { PLATFORM_ANALYTICS_ENABLED: "true" } }),
    /<head><script defer="" src="\/_platform\/analytics.js"><\/script><\/head>/,
    "same origin, no key",
  );
  for (const value of ["TRUE", "1", "false", undefined]) {
    assert.match(
      render({ siteName: "s", env: { ...enabled, PLATFORM_ANALYTICS_ENABLED: value } }),
      /<head><\/head>/,
      `PLATFORM_ANALYTICS_ENABLED=${value}`,
    );
  }
  assert.match(render({ env: { PLATFORM_SITE_NAME: "from-env" } }), /sites\/from-env/, "PLATFORM_SITE_NAME names the site");
  assert.equal(render({ env: {} }), '<html lang="en"><head></head><body><main>page</main></body></html>', "no site name: no live controls");
});

test("draft middleware: the spec's state table, the core's decision, the pointer forwarded", async () => {
  const { createDraftMiddleware } = require("sitefile/middleware");
  const middleware = createDraftMiddleware({
    setup: createNextSetup({
      name: uniq(),
      sections,
      blocks: { site: { __resolveType: "site/apps/site.ts", previewHosts: ["shop.example"] } },
      env: {},
    }),
  });
  const pointer = "shop.example/drafts/home@v1";
  // normal → draft preview: allowed host, ?__draft=<pointer>.
  let response = await middleware(request(`/?__draft=${encodeURIComponent(pointer)}`, { headers: { "x-platform-draft": "forged" } }));
  const cookie = response.headers.get("set-cookie");
  assert.match(cookie, /^__platform_draft=[^;]+; Path=\/; HttpOnly; Secure; SameSite=None; Partitioned; Max-Age=1800$/);
  assert.equal(response.headers.get("cache-control"), "no-store, private");
  assert.equal(response.headers.get("vary"), "Cookie");
  assert.equal(response.headers.get("x-robots-tag"), "noindex, nofollow");
  assert.equal(response.forwarded.get("x-platform-draft"), pointer, "the page gets the pointer, not the client's header");
  // draft preview continues with the cookie.
  response = await middleware(request("/about", { headers: { cookie: cookie.split(";")[0] } }));
  assert.equal(response.headers.get("set-cookie"), null);
  assert.equal(response.headers.get("x-robots-tag"), "noindex, nofollow");
  assert.equal(response.forwarded.get("x-platform-draft"), pointer);
  // draft preview → normal: ?__draft=off clears the cookie.
  response = await middleware(request("/?__draft=off", { headers: { cookie: cookie.split(";")[0] } }));
  assert.match(response.headers.get("set-cookie"), /^__platform_draft=; .*Max-Age=0$/);
  assert.equal(response.headers.get("x-robots-tag"), null);
  assert.equal(response.headers.get("cache-control"), "no-store, private", "an answer that clears the cookie is no shared copy");
  assert.equal(response.forwarded.get("x-platform-draft"), null);
  // A host that may not preview: nothing happens, a client's pointer header is dropped.
  response = await middleware(
    new Request(`https://other.example/?__draft=${encodeURIComponent(pointer)}`, { headers: { "x-platform-draft": pointer } }),
  );
  assert.equal(response.headers.get("set-cookie"), null);
  assert.equal(response.headers.get("x-robots-tag"), null);
  assert.equal(response.headers.get("cache-control"), null);
  assert.equal(response.forwarded.get("x-platform-draft"), null);
  assert.throws(() => createDraftMiddleware({}), /createDraftMiddleware takes \{ setup: ensureSetup \}/);
});

test("createDecoPage: an allowed draft pointer renders the draft's blocks, fetched from the preview API domains", async (t) => {
  // A draft server on loopback: /drafts/<name>?v=<version> answers that draft, counting fetches.
  const fetched = [];
  const server = require("node:http").createServer((req, res) => {
    const url = new URL(req.url, "http://draft");
    fetched.push(`${url.pathname}@${url.searchParams.get("v")}`);
    if (url.pathname === "/drafts/broken") return res.writeHead(500).end("{}");
    if (url.pathname === "/drafts/garbled") return res.writeHead(200, { "content-type": "application/json" }).end("{not json");
    if (url.pathname === "/drafts/list") return res.writeHead(200, { "content-type": "application/json" }).end("[]");
    if (url.pathname === "/drafts/stalled") {
      // The draft's first bytes, then nothing; the rest would be a valid draft.
      res.writeHead(200, { "content-type": "application/json" }).write(`{"pages-home":`);
      return setTimeout(() => res.end(`${JSON.stringify({ path: "/", sections: [hero("draft stalled")] })}}`), 8000).unref();
    }
    if (url.pathname === "/drafts/huge") {
      // 65 MiB of JSON, streamed without a Content-Length: more than a draft may hold.
      res.writeHead(200, { "content-type": "application/json" });
      const filler = JSON.stringify("x".repeat(1024 * 1024 - 16));
      let i = 0;
      const more = () => {
        while (i < 65) if (!res.write(`${i === 0 ? "{" : ","}"k${i++}":${filler}`)) return res.once("drain", more);
        res.end(`,"pages-home":${JSON.stringify({ path: "/", sections: [hero("draft huge")] })}}`);
      };
      return more();
    }
    const blocks = { "pages-home": { path: "/", sections: [hero(`draft ${url.searchParams.get("v")}`)] } };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(blocks));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const drafts = `127.0.0.1:${server.address().port}/drafts`;
  const ensureSetup = pageSite(
    {
      site: { __resolveType: "site/apps/site.ts", previewHosts: ["shop.example"] },
      "pages-home": { path: "/", sections: [hero("published")] },
    },
    { env: { PLATFORM_PREVIEW_API_DOMAINS: "127.0.0.1" } },
  );
  const page = createDecoPage({ siteName: "Shop", setup: ensureSetup });
  const title = async (pointer, origin = ORIGIN) =>
    /<h1>([^<]*)<\/h1>/.exec((await renderPage(page, `${origin}/`, pointer === undefined ? {} : { "x-platform-draft": pointer })).html)[1];

  assert.equal(await title(undefined), "published");
  assert.equal(await title(`${drafts}/home@v1`), "draft v1", "the draft's blocks, fetched with ?v=<version>");
  assert.deepEqual(fetched, ["/drafts/home@v1"]);
  assert.equal(await title(undefined), "published", "other requests see published content");
  assert.equal(await title(`${drafts}/home@v1`), "draft v1");
  assert.deepEqual(fetched, ["/drafts/home@v1"], "a fetched draft is kept");
  for (const v of ["v2", "v3", "v4"]) assert.equal(await title(`${drafts}/home@${v}`), `draft ${v}`);
  assert.equal(await title(`${drafts}/home@v1`), "draft v1");
  assert.deepEqual(fetched.slice(-1), ["/drafts/home@v1"], "only the last three drafts are kept: v1 is fetched again");
  const count = fetched.length;

  // No draft: the page renders published content.
  assert.equal(await title(`${drafts}/broken@v1`), "published", "a non-2xx answer");
  assert.equal(await title(`${drafts}/garbled@v1`), "published", "a body that is not JSON");
  assert.equal(await title(`${drafts}/list@v1`), "published", "JSON that is not an object of blocks");
  assert.equal(await title(`127.0.0.1:1/drafts/home@v1`), "published", "a network failure");
  assert.equal(await title(`${drafts}/huge@v1`), "published", "a draft over 64 MiB");
  assert.equal(await title(`${drafts}/stalled@v1`), "published", "a draft that stops arriving (given up after 5 s)");
  assert.equal(fetched.length, count + 5);
  assert.equal(await title("api.elsewhere.example/drafts/home@v1"), "published", "an authority no API domain admits");
  assert.equal(await title("not a pointer"), "published");
  assert.equal(await title(`${drafts}/home@v9`, "https://other.example"), "published", "a host that may not preview");
  assert.equal(fetched.length, count + 5, "nothing fetched for those");
});

test("createDecoPage: a deferred section's first response is its fallback (its loader not run); page.section loads it, bounded to the page's deferred sections", async () => {
  let loads = 0;
  const Reviews = ({ stars, seen }) => React.createElement("p", null, `${stars} stars (${seen})`);
  const ReviewsLoading = ({ stars }) => React.createElement("i", null, `loading ${stars}`);
  const reviewsModule = {
    default: Reviews,
    LoadingFallback: ReviewsLoading,
    loader: (props, req) => {
      loads += 1;
      return { ...props, seen: `${new URL(req.url).pathname} ${req.headers.get?.("cookie") ?? ""}` };
    },
  };
  const lazy = (section) => ({ __resolveType: "website/sections/Rendering/Lazy.tsx", section });
  const blocks = {
    "pages-home": {
      path: "/",
      sections: [
        hero("Top"),
        lazy({ __resolveType: "site/sections/Reviews.tsx", stars: 5 }),
        lazy({ __resolveType: "site/sections/Card.tsx", label: "no fallback" }),
      ],
    },
    "pages-other": { path: "/other", sections: [hero("Other"), { __resolveType: "site/sections/Reviews.tsx", stars: 1 }] },
    "pages-member": {
      path: "/member",
      sections: [
        hero("Member"),
        lazy({
          __resolveType: "website/flags/multivariate.ts",
          variants: [
            {
              rule: { __resolveType: "website/matchers/cookie.ts", name: "vip", value: "1" },
              value: [{ __resolveType: "site/sections/Card.tsx", label: "vip only" }],
            },
            {
              rule: { __resolveType: "website/matchers/always.ts" },
              value: [{ __resolveType: "site/sections/Card.tsx", label: "everyone" }],
            },
          ],
        }),
      ],
    },
  };
  const sectionsWith = { ...pageSections, "./sections/Reviews.tsx": async () => reviewsModule };
  // What the app's "use client" component renders on the server: the fallback it is given.
  const Deferred = ({ section, fallback }) => React.createElement("platform-deferred", { "data-ref": JSON.stringify(section) }, fallback);
  const setup = createNextSetup({ name: uniq(), sections: sectionsWith, blocks });
  const page = createDecoPage({ siteName: "Shop", setup, fullRequest: true, deferredSection: Deferred });
  const visitor = { "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/120", cookie: "vip=1" };
  const ref = (path, index, component) => JSON.stringify({ path, index, component }).replaceAll('"', "&quot;");

  let { html } = await renderPage(page, `${ORIGIN}/?q=1`, visitor);
  assert.equal(
    html,
    '<main data-page="pages-home"><h1>Top</h1>' +
      `<platform-deferred data-ref="${ref("/?q=1", 1, "site/sections/Reviews.tsx")}"><i>loading 5</i></platform-deferred>` +
      `<platform-deferred data-ref="${ref("/?q=1", 2, "site/sections/Card.tsx")}"></platform-deferred></main>`,
  );
  assert.equal(loads, 0, "the deferred section's loader did not run for the first response");

  // The Server Action's request: a programmatic fetch (Sec-Fetch-Dest: empty) with the visitor's cookies.
  const section = async (target, headers = visitor) => {
    nextRequestHeaders = new Headers({ host: "shop.example", "sec-fetch-dest": "empty", ...headers });
    const element = await page.section(target);
    return element === null ? null : renderToStaticMarkup(element);
  };
  assert.equal(
    await section({ path: "/?q=1", index: 1, component: "site/sections/Reviews.tsx" }),
    "<p>5 stars (/ vip=1)</p>",
    "the section, its loader run with the request",
  );
  assert.equal(loads, 1);
  assert.equal(await section({ path: "/", index: 2, component: "site/sections/Card.tsx" }), "<b>no fallback</b>");
  assert.equal(
    await section({ path: "/member", index: 1, component: "site/sections/Card.tsx" }),
    "<b>vip only</b>",
    "the request's cookies reach matchers",
  );
  assert.equal(await section({ path: "/member", index: 1, component: "site/sections/Card.tsx" }, {}), "<b>everyone</b>");

  // Bounded: only a deferred section of the page the path names, of the key given.
  for (const bad of [
    { path: "/", index: 0, component: "site/sections/Hero.tsx" }, // rendered at once, not deferred
    { path: "/", index: 3, component: "site/sections/Card.tsx" },
    { path: "/", index: 1, component: "site/sections/Card.tsx" }, // another key at that place
    { path: "/other", index: 1, component: "site/sections/Reviews.tsx" }, // not deferred on that page
    { path: "/no/such/page", index: 1, component: "site/sections/Reviews.tsx" },
    { path: "//evil.example/", index: 1, component: "site/sections/Reviews.tsx" },
    { path: "/", index: -1, component: "site/sections/Reviews.tsx" },
    { path: "/", index: 1.5, component: "site/sections/Reviews.tsx" },
    { path: "/", index: "1", component: "site/sections/Reviews.tsx" },
    null,
  ]) {
    assert.equal(await section(bad), null, JSON.stringify(bad));
  }
  assert.equal(loads, 1, "no loader ran for a refused reference");

  // A bot (or ?__bot=1) gets the whole page, loaders run.
  ({ html } = await renderPage(page, `${ORIGIN}/`, { "user-agent": "Mozilla/5.0 (compatible; Googlebot/2.1)" }));
  assert.equal(html, '<main data-page="pages-home"><h1>Top</h1><p>5 stars (/ )</p><b>no fallback</b></main>', "a bot gets the full page");
  assert.equal(loads, 2);
  assert.doesNotMatch((await renderPage(page, `${ORIGIN}/?__bot=1`, visitor)).html, /platform-deferred/);
  assert.doesNotMatch((await renderPage(page, `${ORIGIN}/?__platform_ssr=1`, visitor)).html, /platform-deferred/);
  // A fetch (Sec-Fetch-Dest: empty) is a visit to the page: the App Router's navigations are fetches.
  assert.match((await renderPage(page, `${ORIGIN}/`, { ...visitor, "sec-fetch-dest": "empty" })).html, /<platform-deferred/);

  // A fallback from the set-up's conventions wins over the module's.
  const Skeleton = () => React.createElement("hr");
  const conventional = createDecoPage({
    siteName: "Shop",
    deferredSection: Deferred,
    setup: createNextSetup({
      name: uniq(),
      sections: sectionsWith,
      blocks,
      conventions: { loadingFallbacks: { "./sections/Reviews.tsx": Skeleton } },
    }),
  });
  assert.match(
    (await renderPage(conventional, `${ORIGIN}/`, visitor)).html,
    /<platform-deferred data-ref="[^"]*"><hr\/><\/platform-deferred>/,
  );
  // Without a deferred-section component, or with asyncRendering: false, nothing is deferred.
  const without = createDecoPage({ siteName: "Shop", setup, fullRequest: true });
  assert.equal(
    (await renderPage(without, `${ORIGIN}/`, visitor)).html,
    '<main data-page="pages-home"><h1>Top</h1><p>5 stars (/ vip=1)</p><b>no fallback</b></main>',
  );
  assert.equal(await without.section({ path: "/", index: 1, component: "site/sections/Reviews.tsx" }), null);
  const eager = createDecoPage({
    siteName: "Shop",
    deferredSection: Deferred,
    setup: createNextSetup({ name: uniq(), sections: sectionsWith, blocks, asyncRendering: false }),
  });
  assert.doesNotMatch((await renderPage(eager, `${ORIGIN}/`, visitor)).html, /<platform-deferred/);
});

test("deferredSectionComponent: the fallback until the element nears the viewport, then the section the action loads", async () => {
  const { deferredSectionComponent, DEFERRED_ELEMENT } = require("sitefile/deferred");
  assert.equal(DEFERRED_ELEMENT, "platform-deferred");
  const calls = [];
  const load = async (ref) => {
    calls.push(ref);
    return React.createElement("p", null, `section ${ref.index}`);
  };
  const DeferredSection = deferredSectionComponent(React, load);
  const section = { path: "/", index: 2, component: "site/sections/Reviews.tsx" };
  const html = renderToStaticMarkup(React.createElement(DeferredSection, { section, fallback: React.createElement("i", null, "loading") }));
  assert.equal(
    html,
    '<platform-deferred style="display:block" data-component="site/sections/Reviews.tsx"><i>loading</i></platform-deferred>',
  );
  assert.deepEqual(calls, [], "the server render loads nothing");
});
