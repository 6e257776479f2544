// The catch-all page (app/[[...slug]]/page.tsx renders it): the sitefile page for the request,
// its sections in order, its head from the page's SEO. `fullRequest` lets matchers see cookies
// and the query and runs section loaders (sections/Greeting.tsx). Deferred sections render their
// loading fallback in DeferredSection and are loaded near the viewport through
// loadDeferredSection, which asks `page.section`.
import { createDecoPage } from "sitefile/page";
import { DeferredSection } from "./deferred";
import { ensureSetup } from "./sitefile";

export const page = createDecoPage({
  siteName: "sitefile example",
  defaultDescription: "A Next.js site served by sitefile",
  setup: ensureSetup,
  fullRequest: true,
  deferredSection: DeferredSection,
});
