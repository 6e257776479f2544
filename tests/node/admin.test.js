// The admin protocol through the package's fetch-style handlers, called as a host calls them.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const React = require("react");
const {
  createSiteSetup,
  createAdminSetup,
  setRenderShell,
  resolveDecoPage,
  handleAdminRequest,
  handleMeta,
  handleDecofileRead,
  handleDecofileReload,
  handleRender,
  handleInvoke,
  corsHeaders,
} = require("sitefile");

const ORIGIN = "https://shop.example";
const hero = (title) => ({ __resolveType: "site/sections/Hero.tsx", title });

function Hero({ title, items }) {
  return React.createElement("h1", { className: "hero" }, title, items ? ` (${items.length})` : "");
}
function Broken() {
  throw new Error("the banner broke");
}

function setup(env = {}, extra = {}) {
  return createSiteSetup({
    env,
    blocks: {
      "pages-home": { path: "/", sections: [hero("hello")] },
      Promo: {
        __resolveType: "website/flags/multivariate.ts",
        variants: [
          { rule: { __resolveType: "website/matchers/device.ts", mobile: true }, value: "on the go" },
          { rule: { __resolveType: "website/matchers/always.ts" }, value: "at home" },
        ],
      },
    },
    sections: {
      "./sections/Hero.tsx": async () => ({ default: Hero }),
      "./sections/Broken.tsx": () => ({ default: Broken }),
    },
    loaders: {
      "site/loaders/items.ts": (props) => Array.from({ length: props.count }, (_, i) => i),
    },
    ...extra,
  });
}

const request = (path, init = {}) => new Request(`${ORIGIN}${path}`, init);
const json = (body) => ({ method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });

test("reload: the auth table, delta and full, the page changing after it", async () => {
  const site = setup({ PLATFORM_RELEASE_RELOAD_TOKEN: "s3cret" });
  const before = site.revision;
  const delta = { blocks: { "pages-home": { path: "/", sections: [hero("reloaded")] } } };
  let response = await handleDecofileReload(request("/.sitefile", json(delta)));
  assert.equal(response.status, 401);
  response = await handleDecofileReload(request("/.sitefile", { ...json(delta), headers: { authorization: "Bearer s3cret" } }));
  assert.equal(response.status, 401, "the whole header is the token");
  assert.equal(site.revision, before);
  response = await handleDecofileReload(request("/.sitefile", { ...json(delta), headers: { authorization: "s3cret" } }));
  assert.equal(response.status, 200);
  const body = await response.json();
  assert.equal(body.mode, "delta");
  assert.equal(body.kvWritten, false);
  assert.equal(body.revision, site.revision);
  assert.notEqual(site.revision, before);
  const page = await resolveDecoPage({ url: `${ORIGIN}/` }, site);
  assert.equal(page.sections[0].props.title, "reloaded");

  const full = { "pages-home": { path: "/", sections: [hero("replaced")] } };
  response = await handleDecofileReload(request("/.sitefile", { ...json(full), headers: { authorization: "s3cret" } }));
  assert.equal((await response.json()).mode, "full");
  assert.equal((await resolveDecoPage({ url: `${ORIGIN}/` }, site)).sections[0].props.title, "replaced");

  // Bad bodies: 400 with a JSON message, content unchanged.
  const serving = site.revision;
  for (const bad of ["{not json", "[1,2]", '{"blocks": [1]}']) {
    response = await handleDecofileReload(request("/.sitefile", { method: "POST", body: bad, headers: { authorization: "s3cret" } }));
    assert.equal(response.status, 400, bad);
    assert.equal(typeof (await response.json()).error.message, "string");
    assert.equal(site.revision, serving);
  }

  setup({});
  response = await handleDecofileReload(request("/.sitefile", { ...json(delta), headers: { authorization: "" } }));
  assert.equal(response.status, 401, "no token configured: every reload is refused");
  setup({ NODE_ENV: "development" });
  response = await handleDecofileReload(request("/.sitefile", json(delta)));
  assert.equal(response.status, 200, "development needs no token");
});

test("reload bodies past the limit are 413 and read no further", async () => {
  const site = setup({ NODE_ENV: "development" }, { options: undefined });
  const serving = site.revision;
  let pulled = 0;
  const chunk = new Uint8Array(1024 * 1024).fill(32);
  const body = new ReadableStream({
    pull(controller) {
      pulled += 1;
      controller.enqueue(chunk);
      if (pulled > 200) controller.close();
    },
  });
  const response = await handleDecofileReload(request("/.sitefile", { method: "POST", body, duplex: "half" }));
  assert.equal(response.status, 413);
  assert.ok(pulled < 200, `stopped reading early (${pulled} MiB pulled)`);
  assert.equal(site.revision, serving);
});

test("the token and a declared Content-Length are checked before any body byte is read", async () => {
  const site = setup({ PLATFORM_RELEASE_RELOAD_TOKEN: "s3cret" });
  const serving = site.revision;
  // A body that records whether it was ever pulled (no read-ahead: highWaterMark 0).
  const recorded = () => {
    const seen = { pulled: 0 };
    seen.body = new ReadableStream(
      {
        pull(controller) {
          seen.pulled += 1;
          controller.enqueue(new Uint8Array(1024 * 1024).fill(32));
        },
      },
      { highWaterMark: 0 },
    );
    return seen;
  };
  const post = (path, body, headers) => request(path, { method: "POST", body, duplex: "half", headers });
  const errorOf = async (response) => (await response.json()).error.code;

  for (const auth of [{}, { authorization: "wrong" }, { authorization: "Bearer s3cret" }]) {
    const sent = recorded();
    const response = await handleDecofileReload(post("/.sitefile", sent.body, { "content-length": String(64 * 1024 ** 3), ...auth }));
    assert.equal(response.status, 401, JSON.stringify(auth));
    assert.equal(await errorOf(response), "UNAUTHORIZED");
    assert.equal(sent.pulled, 0, `no body byte read without the token (${JSON.stringify(auth)})`);
  }
  let sent = recorded();
  let response = await handleDecofileReload(
    post("/.sitefile", sent.body, { authorization: "s3cret", "content-length": String(64 * 1024 * 1024 + 1) }),
  );
  assert.equal(response.status, 413);
  assert.equal(await errorOf(response), "BODY_TOO_LARGE");
  assert.equal(sent.pulled, 0, "a declared length over the reload limit is refused unread");
  sent = recorded();
  response = await handleInvoke(
    post("/platform/invoke/site/loaders/items.ts", sent.body, {
      "content-type": "application/json",
      "content-length": String(16 * 1024 * 1024 + 1),
    }),
  );
  assert.equal(response.status, 413);
  assert.equal(await errorOf(response), "BODY_TOO_LARGE");
  assert.equal(sent.pulled, 0, "a declared length over the invoke limit is refused unread");
  assert.equal(site.revision, serving);

  // Admitted, the body is read as before.
  const delta = JSON.stringify({ blocks: { "pages-home": { path: "/", sections: [hero("after")] } } });
  response = await handleDecofileReload(
    request("/.sitefile", { method: "POST", body: delta, headers: { authorization: "s3cret", "content-length": String(delta.length) } }),
  );
  assert.equal(response.status, 200);
  assert.notEqual(site.revision, serving);
});

test("content read: ETag is the revision, 304 on a match", async () => {
  const site = setup();
  let response = await handleDecofileRead(request("/.sitefile"));
  assert.equal(response.status, 200);
  const etag = response.headers.get("etag");
  assert.ok(etag.includes(site.revision));
  assert.deepEqual(Object.keys(await response.json()).sort(), ["Promo", "pages-home"]);
  response = await handleDecofileRead(request("/.sitefile", { headers: { "if-none-match": etag } }));
  assert.equal(response.status, 304);
  assert.equal(await response.text(), "");
});

test("meta: 503 without a schema; the schema loads once, with its ETag and 304", async () => {
  setup();
  let response = await handleMeta(request("/live/_meta"));
  assert.equal(response.status, 503);
  let loads = 0;
  createAdminSetup({
    meta: async () => {
      loads += 1;
      return { schema: { definitions: {}, root: {} }, manifest: { blocks: {} }, version: "1" };
    },
    css: "/styles.css",
  });
  response = await handleMeta(request("/live/_meta"));
  assert.equal(response.status, 200);
  const etag = response.headers.get("etag");
  assert.equal((await response.json()).etag, etag);
  response = await handleMeta(request("/live/_meta", { headers: { "if-none-match": etag } }));
  assert.equal(response.status, 304);
  await handleMeta(request("/platform/meta"));
  assert.equal(loads, 1);
  response = await handleMeta(request("/live/_meta", { method: "POST" }));
  assert.equal(response.status, 405);
  assert.equal(response.headers.get("allow"), "GET, OPTIONS");
});

test("registerMatcherSchema makes a custom matcher selectable in the served schema", async () => {
  const { registerMatcher, registerMatcherSchema } = require("sitefile");
  setup(
    {},
    {
      customMatchers: [
        () => {
          registerMatcher("site/matchers/vip.ts", () => true);
          registerMatcherSchema({
            key: "site/matchers/vip.ts",
            title: "VIP",
            namespace: "site",
            propsSchema: { type: "object", properties: { tier: { type: "string" } } },
          });
        },
      ],
    },
  );
  createAdminSetup({ meta: () => ({ schema: { definitions: {} }, manifest: { blocks: {} } }) });
  const body = await (await handleMeta(request("/live/_meta"))).json();
  const ref = body.manifest.blocks.matchers["site/matchers/vip.ts"].$ref;
  const definition = body.schema.definitions[ref.slice("#/definitions/".length)];
  assert.equal(definition.title, "VIP");
  assert.equal(definition.properties.tier.type, "string");
  assert.throws(() => registerMatcherSchema({ key: "x" }), { code: "INVALID_CONFIG" });
});

test("a schema that fails to load is tried again at the next request", async () => {
  setup();
  let calls = 0;
  const errors = [];
  const original = console.error;
  console.error = (line) => errors.push(line);
  try {
    createAdminSetup({
      meta: () => {
        calls += 1;
        if (calls === 1) throw new Error("not generated yet");
        return { schema: {}, manifest: {} };
      },
    });
    assert.equal((await handleMeta(request("/live/_meta"))).status, 503);
    assert.equal((await handleMeta(request("/live/_meta"))).status, 200);
  } finally {
    console.error = original;
  }
  assert.equal(calls, 2);
  assert.match(errors[0], /not generated yet/);
});

test("invoke: single, unknown, failing, batch, select, headers the loader wrote", async () => {
  setup({ NODE_ENV: "production" });
  createAdminSetup({
    getCommerceLoaders: () => ({
      "vtex/actions/cart/addItem.ts": (props, req, ctx) => {
        ctx.responseHeaders.append("set-cookie", "cart=1");
        ctx.responseHeaders.append("set-cookie", "session=2");
        return { added: props.sku, via: new URL(req.url).pathname };
      },
      "vtex/loaders/fails.ts": () => {
        throw new Error("upstream down");
      },
    }),
  });
  let response = await handleInvoke(request("/platform/invoke/site/loaders/items.ts", json({ count: 3 })));
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), [0, 1, 2]);

  response = await handleInvoke(request("/platform/invoke/vtex/actions/cart/addItem.ts", json({ sku: "42" })));
  assert.deepEqual(await response.json(), { added: "42", via: "/platform/invoke/vtex/actions/cart/addItem.ts" });
  assert.deepEqual(response.headers.getSetCookie(), ["cart=1", "session=2"]);

  response = await handleInvoke(request("/platform/invoke/nothing/here.ts", json({})));
  assert.equal(response.status, 404);
  assert.deepEqual((await response.json()).error, { code: "UNKNOWN_HANDLER", message: "Unknown handler: nothing/here.ts" });

  response = await handleInvoke(request("/platform/invoke/vtex/loaders/fails.ts", json({})));
  assert.equal(response.status, 500);
  const failure = await response.json();
  assert.deepEqual(failure, { error: { code: "INVOKE_FAILED", message: "upstream down" } }, "no stack outside development");

  response = await handleInvoke(
    request(
      "/platform/invoke?select=added",
      json({
        items: { __resolveType: "site/loaders/items.ts", count: 2 },
        cart: { __resolveType: "vtex/actions/cart/addItem.ts", sku: "7" },
        broken: { __resolveType: "vtex/loaders/fails.ts" },
      }),
    ),
  );
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), {
    items: [0, 1],
    cart: { added: "7" },
    broken: { error: { code: "INVOKE_FAILED", message: "upstream down" } },
  });

  setup({ NODE_ENV: "development" }, { loaders: { "site/loaders/fails.ts": () => Promise.reject(new Error("dev failure")) } });
  response = await handleInvoke(request("/platform/invoke/site/loaders/fails.ts", json({})));
  assert.equal(response.status, 500);
  assert.match((await response.json()).error.stack, /dev failure/, "development shows the stack");

  response = await handleInvoke(request("/platform/invoke/site/loaders/items.ts"));
  assert.equal(response.status, 405);
  assert.equal(response.headers.get("allow"), "POST, OPTIONS");
  response = await handleInvoke(request("/platform/invoke", { method: "POST", body: "{oops" }));
  assert.equal(response.status, 400);
});

test("previews render React sections in the render shell, errors inline", async () => {
  setup();
  function Frame({ children }) {
    return React.createElement("div", { className: "frame" }, children);
  }
  createAdminSetup({ css: "/styles.css", fonts: ["/fonts.css"], previewWrapper: Frame });
  setRenderShell({ css: "/styles.css", theme: "light", lang: "pt" });
  const props = { title: { __resolveType: "Promo" }, items: { __resolveType: "site/loaders/items.ts", count: 2 } };
  let response = await handleRender(request(`/live/previews/site/sections/Hero.tsx?props=${encodeURIComponent(JSON.stringify(props))}`));
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type"), /text\/html/);
  let html = await response.text();
  assert.match(html, /^<!DOCTYPE html><html lang="pt" data-theme="light">/);
  assert.match(html, /<link rel="stylesheet" href="\/styles.css">/);
  assert.match(
    html,
    /<section[^>]*data-manifest-key="site\/sections\/Hero.tsx"[^>]*><div class="frame"><h1 class="hero">at home<!-- --> \(2\)<\/h1><\/div><\/section>/,
  );

  response = await handleRender(
    request(`/live/previews/site/sections/Hero.tsx?deviceHint=mobile&props=${encodeURIComponent(JSON.stringify(props))}`),
  );
  assert.match(await response.text(), /on the go/);

  response = await handleRender(request("/platform/render", json({ __props: { __resolveType: "site/sections/Broken.tsx" } })));
  html = await response.text();
  assert.equal(response.status, 200);
  assert.match(html, /data-manifest-key="site\/sections\/Broken.tsx"/);
  assert.match(html, /Error rendering site\/sections\/Broken.tsx: the banner broke/);

  response = await handleRender(request("/live/previews/site/sections/Nobody.tsx"));
  html = await response.text();
  assert.equal(response.status, 200, "a section key no module is registered for does not fail the request");
  assert.match(
    html,
    /data-manifest-key="site\/sections\/Nobody.tsx"><div class="platform-render-error" role="alert">Error rendering site\/sections\/Nobody.tsx: no section module is registered for site\/sections\/Nobody.tsx<\/div>/,
    "and shows why inline, as with no modules registered",
  );

  response = await handleRender(request("/live/previews/website/pages/Page.tsx", json({ path: "/", sections: [hero("a page")] })));
  assert.match(await response.text(), /<h1 class="hero">a page<\/h1>/);

  response = await handleRender(request("/live/previews"));
  assert.match(await response.text(), /Loading preview/);
});

test("setRenderShell sets only the fields it is given: createAdminSetup's fonts survive", async () => {
  setup();
  createAdminSetup({ css: "/styles.css", fonts: ["https://fonts.example/a.css", "/fonts/b.css"] });
  setRenderShell({ theme: "dark", bodyClass: "bg-base-100", lang: "pt-BR" });
  const preview = async () =>
    (
      await handleRender(request(`/live/previews/site/sections/Hero.tsx?props=${encodeURIComponent(JSON.stringify({ title: "x" }))}`))
    ).text();
  let html = await preview();
  assert.match(html, /^<!DOCTYPE html><html lang="pt-BR" data-theme="dark">/);
  assert.match(
    html,
    /<link rel="stylesheet" href="https:\/\/fonts.example\/a.css"><link rel="stylesheet" href="\/fonts\/b.css"><link rel="stylesheet" href="\/styles.css"><\/head>/,
    "fonts, then the stylesheet, as createAdminSetup set them",
  );
  assert.match(html, /<body class="bg-base-100">/);

  setRenderShell({ css: "/v2.css" });
  html = await preview();
  assert.match(html, /<link rel="stylesheet" href="\/fonts\/b.css"><link rel="stylesheet" href="\/v2.css"><\/head>/);
  assert.match(html, /data-theme="dark"/, "the theme set before is kept");
  assert.match(
    await (await handleRender(request("/live/previews"))).text(),
    /<body class="bg-base-100">.*Loading preview/s,
    "the empty frame too",
  );
});

test("liveness, OPTIONS, CORS, unknown routes", async () => {
  setup();
  let response = await handleAdminRequest(request("/platform/_liveness"));
  assert.equal(response.status, 200);
  assert.equal(await response.text(), "OK");
  response = await handleAdminRequest(request("/.sitefile", { method: "OPTIONS", headers: { origin: "https://admin.example" } }));
  assert.equal(response.status, 204);
  assert.equal(response.headers.get("access-control-allow-origin"), "https://admin.example");
  assert.equal(response.headers.get("access-control-allow-credentials"), "true");
  assert.equal(await handleAdminRequest(request("/products/shoes")), null);
  response = await handleMeta(request("/not-admin"));
  assert.equal(response.status, 404);
  assert.deepEqual((await response.json()).error, { code: "UNKNOWN_ROUTE", message: "Unknown admin route: /not-admin" });
  assert.equal(response.headers.get("access-control-allow-origin"), "*");
  assert.equal(corsHeaders(request("/", { headers: { origin: "https://a.example" } }))["Access-Control-Allow-Origin"], "https://a.example");
  assert.equal(corsHeaders(request("/"))["Access-Control-Allow-Origin"], "*");
});

test("purge-loaders takes the purge token", async () => {
  setup({ PURGE_TOKEN: "p" });
  let response = await handleAdminRequest(request("/_cache/purge-loaders", { method: "POST" }));
  assert.equal(response.status, 401);
  assert.equal(response.headers.get("www-authenticate"), "Bearer");
  response = await handleAdminRequest(request("/_cache/purge-loaders", { method: "POST", headers: { authorization: "Bearer p" } }));
  assert.equal(response.status, 200);
});
