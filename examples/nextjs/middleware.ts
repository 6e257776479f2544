// The draft-preview middleware: `?__draft=<pointer>` on an allowed preview host enters draft
// preview (cookie set, never cached, noindex), `?__draft=off` leaves it. It runs on Node.js
// (the package's native addon decides).
import { createDraftMiddleware } from "sitefile/middleware";
import { ensureSetup } from "./lib/sitefile";

export const middleware = createDraftMiddleware({ setup: ensureSetup });

export const config = {
  runtime: "nodejs",
  matcher: ["/((?!_next/|platform/|favicon.ico).*)"],
};
