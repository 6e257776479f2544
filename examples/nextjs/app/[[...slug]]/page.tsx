// The catch-all page: the sitefile page for the request (../../lib/page.ts) and Next's
// not-found page for a path no page serves.
import { page } from "../../lib/page";

export const generateMetadata = page.generateMetadata;
export default page.default;
