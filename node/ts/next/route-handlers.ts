/**
 * `sitefile/route-handlers`: the one catch-all route that serves the admin protocol in a
 * Next.js App Router app.
 *
 * ```ts
 * // app/platform/[[...platform]]/route.ts
 * import { createDecoRouteHandlers } from "sitefile/route-handlers";
 * import { ensureSetup } from "../../../lib/sitefile";
 * export const { GET, POST, OPTIONS } = createDecoRouteHandlers({ setup: ensureSetup });
 * ```
 *
 * Every request goes to the core's admin handler, which routes it (`/platform/meta`,
 * `/platform/sitefile`, `/platform/previews/*`, `/platform/render`, `/platform/invoke[/<key>]`,
 * `/platform/_liveness`, and the public paths the config wrapper rewrites here), checks its
 * method (405 with `Allow`), token and body, and builds the response. Preview `GET`s are
 * redirected to the preview page (`createDecoPreviewPage`).
 *
 * @module sitefile/route-handlers
 */

import { SitefileError, native } from "../errors";
import { flatHeaders, handleAdminRequest, toResponse } from "../admin";
import { Site, addon } from "../setup";
import type * as Native from "../../index";

/** A Next.js route handler: `(request, context) => Response`. */
export type RouteHandler = (request: Request, context?: unknown) => Promise<Response>;

/** The handlers of `app/platform/[[...platform]]/route.ts`. */
export interface DecoRouteHandlers {
  GET: RouteHandler;
  POST: RouteHandler;
  OPTIONS: RouteHandler;
}

/** `createDecoRouteHandlers` options. */
export interface DecoRouteHandlersOptions {
  /** `ensureSetup` from `createNextSetup`: awaited before every request but `OPTIONS`. */
  setup: () => Promise<unknown>;
}

function adminInput(request: Request): Native.AdminRequestInput {
  const url = new URL(request.url);
  return { method: request.method, path: url.pathname, query: url.search.slice(1), headers: flatHeaders(request.headers) };
}

/** An empty site the core answers preflights with, so an `OPTIONS` request never runs the
 * app's set-up (which may read files or fetch). */
let preflightSite: Native.NativeSite | null = null;

function preflight(request: Request): Response {
  preflightSite ??= native(() => addon.NativeSite.fromContent("{}", "{}"));
  const site = preflightSite;
  const outcome = native(() => site.handleAdmin(adminInput(request), Date.now()));
  if (outcome.kind === "respond") return toResponse(native(() => outcome.response()));
  // Not an admin route: the core's 404, with CORS.
  return toResponse(native(() => addon.unknownAdminRoute(adminInput(request))));
}

async function siteOf(setup: () => Promise<unknown>): Promise<Site | undefined> {
  const answer = await setup();
  // `ensureSetup` from `createNextSetup` answers its site; another setup function (one that
  // calls `createSiteSetup` itself) leaves the current site to be used.
  return answer instanceof Site ? answer : undefined;
}

/**
 * The `GET`, `POST` and `OPTIONS` handlers of the catch-all admin route (spec
 * `createDecoRouteHandlers`). `OPTIONS` is answered without running `setup`; every other
 * request awaits it, then the core answers: the admin route the path names, 405 with `Allow`
 * for a method the route does not take (`/platform/meta` is GET only, `/platform/invoke`
 * POST only), 404 JSON for a path no admin route takes. A preview `GET`
 * (`/live/previews/<target>`) is a 307 to the preview page `/platform/preview/<target>` (see
 * `sitefile/page`), without running `setup`.
 */
export function createDecoRouteHandlers(options: DecoRouteHandlersOptions): DecoRouteHandlers {
  if (options === null || typeof options !== "object" || typeof options.setup !== "function") {
    throw new SitefileError("INVALID_CONFIG", "createDecoRouteHandlers takes { setup: ensureSetup }");
  }
  const { setup } = options;
  const handle: RouteHandler = async (request) => {
    const site = await siteOf(setup);
    const response = site ? await handleAdminRequest(request, site) : await handleAdminRequest(request);
    return response ?? toResponse(native(() => addon.unknownAdminRoute(adminInput(request))));
  };
  return {
    // A preview GET goes to the preview page (`createDecoPreviewPage`), where client components
    // render; the core decides which requests (addon `previewPageRedirect`).
    GET: async (request) => {
      const redirect = native(() => addon.previewPageRedirect(adminInput(request)));
      return redirect ? toResponse(redirect) : handle(request);
    },
    POST: handle,
    OPTIONS: async (request) => preflight(request),
  };
}
