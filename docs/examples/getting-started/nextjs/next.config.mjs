// The admin rewrites, the package's addon kept out of server bundles, draft renders kept out of
// shared caches, and the content traced into the server output.
import { withSitefile } from "sitefile/config";

export default withSitefile({ reactStrictMode: true });
