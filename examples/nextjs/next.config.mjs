import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { withSitefile } from "sitefile/config";

/** @type {import("next").NextConfig} */
export default withSitefile({
  reactStrictMode: true,
  poweredByHeader: false,
  // This app lives inside the sitefile repository, which has a lockfile of its own.
  turbopack: { root: dirname(fileURLToPath(import.meta.url)) },
});
