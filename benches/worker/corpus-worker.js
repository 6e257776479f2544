// The Worker benchmark's harness (benches/worker/bench.js), bundled by wrangler beside the
// release rehearsal's installed example: a corpus site's content, posted to /__site, behind
// `resolveDecoPage` with the reference's protocol (every loader key answered by an async echo
// loader); `/?url=<page>&ua=<user agent>&n=<count>` resolves one page `count` times in a row
// (workerd's clock stands still while a request runs, so the time is taken from outside, over
// enough resolutions to dwarf the round trip), `/__ping` answers at once (the round trip the
// timings subtract).
import { createSiteSetup, resolveDecoPage } from "sitefile";

let site = null;

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/__ping") return new Response("pong");
    if (url.pathname === "/__site") {
      const { blocks, loaderKeys } = await request.json();
      const loaders = Object.fromEntries(loaderKeys.map((key) => [key, async (props) => ({ loader: key, props })]));
      site = createSiteSetup({ blocks, env: {}, loaders, onDanglingReference: () => null });
      return new Response(site.revision);
    }
    const page = { url: url.searchParams.get("url"), headers: { "user-agent": url.searchParams.get("ua") } };
    let sections = 0;
    for (let n = Number(url.searchParams.get("n") ?? 1); n > 0; n -= 1) sections += (await resolveDecoPage(page, site)).sections.length;
    return new Response(String(sections));
  },
};
