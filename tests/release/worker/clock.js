// The release rehearsal's clock harness (tests/release/worker.test.js): the example Worker's
// content behind `createDecoWorkerEntry`, with a clock the test moves (`/__clock?ms=N`) and an
// origin that counts its answers (is slow under /slow, and echoes the cookies it got at
// /echo-cookie), so a stored copy is seen to go stale and be revalidated, concurrent misses to
// share one origin request, and the visitor's location to reach the origin.
// Bundled by wrangler from the example's directory, as the example is.
import { createDecoWorkerEntry, createSiteSetup } from "sitefile";
import blocks from "../.platform/blocks.gen.json";

let skewMs = 0;
let answered = 0;
createSiteSetup({ blocks, now: () => new Date(Date.now() + skewMs) });

const origin = {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    // A slow page: concurrent visitors all miss before the first answer is stored.
    if (pathname.startsWith("/slow")) await new Promise((resolve) => setTimeout(resolve, 300));
    // What the edge handed on: the cookies (the visitor's location among them).
    if (pathname === "/echo-cookie") return new Response(request.headers.get("cookie") ?? "");
    return new Response(`<html><body>origin answer ${++answered} for ${pathname}</body></html>`, {
      headers: { "content-type": "text/html; charset=utf-8" },
    });
  },
};
const edge = createDecoWorkerEntry(origin, {});

export default {
  fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/__clock") {
      skewMs += Number(url.searchParams.get("ms") ?? 0);
      return new Response(String(skewMs));
    }
    return edge.fetch(request, env, ctx);
  },
};
