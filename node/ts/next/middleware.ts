/**
 * `sitefile/middleware`: the draft-preview middleware of a Next.js site (spec "Draft preview
 * mode"), run on Node.js.
 *
 * ```ts
 * // middleware.ts
 * import { createDraftMiddleware } from "sitefile/middleware";
 * import { ensureSetup } from "./lib/sitefile";
 * export const middleware = createDraftMiddleware({ setup: ensureSetup });
 * export const config = { runtime: "nodejs", matcher: ["/((?!_next/|platform/).*)"] };
 * ```
 *
 * The core decides each request's draft transition (its edge plan's draft decision): on a host
 * allowed to preview, `?__draft=<pointer>` enters draft preview (the cookie is set),
 * `?__draft=off` leaves it (the cookie is cleared) and the cookie keeps it; on any other host
 * nothing happens. While previewing, the response is `Cache-Control: no-store, private`,
 * `Vary: Cookie`, `X-Robots-Tag: noindex, nofollow`, and the page gets the pointer in the
 * `x-platform-draft` request header; a client's own copy of that header is always removed.
 *
 * @module sitefile/middleware
 */

import { SitefileError, native } from "../errors";
import { requestJson } from "../resolve";
import { Site, currentSite } from "../setup";
import { DRAFT_HEADER } from "./draft";

/** `createDraftMiddleware` options. */
export interface DraftMiddlewareOptions {
  /** `ensureSetup` from `createNextSetup` (the allowed hosts come from the site's content). */
  setup: () => Promise<unknown>;
}

/** What the core decided about a request's draft. */
interface DraftDecision {
  state: "preview" | "normal";
  setCookie: string | null;
  headers: Array<[string, string]>;
  forward: [string, string] | null;
}

/** What the middleware uses of `next/server`. */
interface NextServer {
  NextResponse: { next(init: { request: { headers: Headers } }): Response };
}

/**
 * Builds the draft-preview middleware: the request goes on to the app with the draft pointer
 * forwarded (or any client copy removed), and the response carries the draft cookie and
 * headers the core decided.
 */
export function createDraftMiddleware(options: DraftMiddlewareOptions): (request: Request) => Promise<Response> {
  if (options === null || typeof options !== "object" || typeof options.setup !== "function") {
    throw new SitefileError("INVALID_CONFIG", "createDraftMiddleware takes { setup: ensureSetup }");
  }
  const { setup } = options;
  return async function draftMiddleware(request: Request): Promise<Response> {
    const answer = await setup();
    const site = answer instanceof Site ? answer : currentSite();
    const plan = native(() => site.native.edgePlan(requestJson(request, site)));
    const draft = JSON.parse(native(() => plan.draft)) as DraftDecision;
    const headers = new Headers(request.headers);
    headers.delete(DRAFT_HEADER);
    if (draft.forward) headers.set(draft.forward[0], draft.forward[1]);
    const { NextResponse } = require("next/server") as NextServer;
    const response = NextResponse.next({ request: { headers } });
    if (draft.setCookie) response.headers.append("set-cookie", draft.setCookie);
    for (const [name, value] of draft.headers) {
      if (name.toLowerCase() === "vary") response.headers.append(name, value);
      else response.headers.set(name, value);
    }
    return response;
  };
}
