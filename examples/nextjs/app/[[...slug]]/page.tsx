// The catch-all page: the sitefile page for the request, its sections in order, its head from
// the page's SEO, and Next's not-found page for a path no page serves. `fullRequest` lets
// matchers see cookies and the query and runs section loaders (sections/Greeting.tsx).
import { createDecoPage } from "sitefile/page";
import { ensureSetup } from "../../lib/sitefile";

const page = createDecoPage({
  siteName: "sitefile example",
  defaultDescription: "A Next.js site served by sitefile",
  setup: ensureSetup,
  fullRequest: true,
});

export const generateMetadata = page.generateMetadata;
export default page.default;
