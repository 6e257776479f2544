// Every path: the site's page for it (its sections in order, its head from the page's SEO), or
// Next's not-found page when no page serves the path.
import { createDecoPage } from "sitefile/page";
import { ensureSetup } from "../../lib/sitefile";

const page = createDecoPage({ siteName: "My store", defaultDescription: "A store served by sitefile", setup: ensureSetup });

export const generateMetadata = page.generateMetadata;
export default page.default;
