// The release rehearsal's clock harness (tests/release/worker.test.js): the example Worker's
// content behind `createDecoWorkerEntry`, with a clock the test moves (`/__clock?ms=N`) and an
// origin that counts its answers, so a stored copy is seen to go stale and be revalidated.
// Bundled by wrangler from the example's directory, as the example is.
import { createDecoWorkerEntry, createSiteSetup } from "sitefile";
import blocks from "../.platform/blocks.gen.json";

let skewMs = 0;
let answered = 0;
createSiteSetup({ blocks, now: () => new Date(Date.now() + skewMs) });

const origin = {
  fetch: (request) =>
    new Response(`<html><body>origin answer ${++answered} for ${new URL(request.url).pathname}</body></html>`, {
      headers: { "content-type": "text/html; charset=utf-8" },
    }),
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
