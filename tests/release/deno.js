// The release rehearsal's Deno check (scripts/release.sh copies it into the teammate's app and
// runs it with Deno from the registry): the package as Deno imports it from the app's
// node_modules, on the native addon (Deno loads Node-API addons with --allow-ffi). A page and
// its device variant resolve, and `createDecoWorkerEntry` behind `Deno.serve` answers a page
// through the edge cache (MISS, then HIT), a redirect and the purge route's refusal. Exits
// non-zero when a check fails.
import assert from "node:assert/strict";
import { createDecoWorkerEntry, createSiteSetup, resolveDecoPage } from "sitefile";

const PHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1";
const hero = (title) => ({ __resolveType: "site/sections/Hero.tsx", title });
const site = createSiteSetup({
  env: { BUILD_HASH: "deno", PURGE_TOKEN: "purge-me" },
  blocks: {
    "pages-home": {
      path: "/",
      sections: [
        {
          __resolveType: "website/flags/multivariate/section.ts",
          variants: [
            { rule: { __resolveType: "website/matchers/device.ts", mobile: true }, value: hero("phone") },
            { rule: { __resolveType: "website/matchers/always.ts" }, value: hero("desktop") },
          ],
        },
      ],
    },
    "old-home": { __resolveType: "website/loaders/redirect.ts", redirect: { from: "/old", to: "/", type: "permanent" } },
  },
});

const title = async (headers) => (await resolveDecoPage({ url: "https://deno.example/", headers }, site)).sections[0].props.title;
assert.equal(await title({}), "desktop");
assert.equal(await title({ "user-agent": PHONE }), "phone");

let answered = 0;
const edge = createDecoWorkerEntry(
  { fetch: () => new Response(`origin answer ${++answered}`, { headers: { "content-type": "text/html" } }) },
  {},
  site,
);
const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (request) => edge.fetch(request));
const base = `http://127.0.0.1:${server.addr.port}`;
const first = await fetch(`${base}/`);
assert.equal(first.headers.get("x-cache"), "MISS");
assert.equal(await first.text(), "origin answer 1");
// The copy is kept as the answer streams: wait for it before asking again.
let second;
for (let i = 0; i < 50; i += 1) {
  second = await fetch(`${base}/`);
  if (second.headers.get("x-cache") === "HIT") break;
  await second.body?.cancel();
  await new Promise((resolve) => setTimeout(resolve, 20));
}
assert.equal(second.headers.get("x-cache"), "HIT");
assert.equal(await second.text(), "origin answer 1");
const moved = await fetch(`${base}/old`, { redirect: "manual" });
assert.equal(moved.status, 301);
assert.equal(moved.headers.get("location"), "/");
await moved.body?.cancel();
const purge = await fetch(`${base}/_cache/purge`, { method: "POST", body: JSON.stringify({ paths: ["/"] }) });
assert.equal(purge.status, 401);
await purge.body?.cancel();
await server.shutdown();
console.log("deno: pages, a device variant, the edge cache (MISS, HIT), a redirect and a refused purge");
