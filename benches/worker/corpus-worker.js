// The Worker benchmark's harness (benches/worker/bench.js), bundled by wrangler beside the
// release rehearsal's installed example: a corpus site's content, posted to /__site, behind
// `resolveDecoPage` with the reference's protocol (every loader key answered by an async echo
// loader); `/?url=<page>&ua=<user agent>` resolves one page, `/__ping` answers at once (the
// round trip the timings subtract).
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
    const page = await resolveDecoPage({ url: url.searchParams.get("url"), headers: { "user-agent": url.searchParams.get("ua") } }, site);
    return new Response(String(page.sections.length));
  },
};
