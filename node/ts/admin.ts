/**
 * The admin protocol as fetch-style handlers: `(Request) => Promise<Response>`. The core routes
 * the request, checks methods, tokens and bodies, and builds every response; this module moves
 * the request in, does the work the core hands back (run invoked loaders, render previewed
 * sections with React, apply a reload) and moves the response out.
 */

import { SitefileError, native } from "./errors";
import { type InvokeContext, type Loader, Site, addon, currentSite } from "./setup";
import { type ResolvedSection, drive, messageOf } from "./resolve";
import { getSection, runSectionLoaders } from "./sections";
import type * as Native from "../index";

/** `createAdminSetup` options (spec "Setup options"). */
export interface AdminSetupOptions {
  /** Loads the schema `/live/_meta` serves, once, at the first admin request; without it
   * `/live/_meta` answers 503. */
  meta?: () => unknown;
  /** URL of the stylesheet of preview pages. */
  css?: string;
  /** Font stylesheet URLs. */
  fonts?: string[];
  /** A React component wrapping every preview (it gets the section as `children`). */
  previewWrapper?: unknown;
  /** Loaders and actions invokable through `/platform/invoke` besides the site's loaders. */
  getCommerceLoaders?: () => Record<string, Loader>;
}

/** `setRenderShell` options: the document previews are rendered in. */
export interface RenderShellOptions {
  /** URL of the stylesheet. */
  css?: string;
  /** Font stylesheet URLs. */
  fonts?: string[];
  /** Becomes `data-theme` on `<html>`. */
  theme?: string;
  /** `class` of `<body>`. */
  bodyClass?: string;
  /** `lang` of `<html>` (default `en`). */
  lang?: string;
}

/** A fetch-style handler. */
export type AdminHandler = (request: Request) => Promise<Response>;

function checkSite(site: unknown, who: string): asserts site is Site {
  if (!(site instanceof Site)) {
    throw new SitefileError("INVALID_CONFIG", `${who}: the site is not one from createSiteSetup`);
  }
}

/**
 * Sets the document previews are rendered in (spec `setRenderShell`); `theme` becomes
 * `data-theme`, so component-library colour variables apply. Only the fields given change:
 * those left out keep what `createAdminSetup` or an earlier call set.
 */
export function setRenderShell(shell: RenderShellOptions, site: Site = currentSite()): void {
  checkSite(site, "setRenderShell");
  if (shell === null || typeof shell !== "object") {
    throw new SitefileError("INVALID_CONFIG", "setRenderShell takes {css, fonts, theme, bodyClass, lang}");
  }
  const { css, fonts, theme, bodyClass, lang } = shell;
  native(() => site.native.setRenderShell(JSON.stringify({ css, fonts, theme, bodyClass, lang })));
}

/**
 * Sets up the admin side of a site (spec `createAdminSetup`): the schema loader, the preview
 * stylesheet and fonts, the preview wrapper and the invokable commerce loaders. Later admin
 * requests use it.
 */
export function createAdminSetup(options: AdminSetupOptions, site: Site = currentSite()): void {
  checkSite(site, "createAdminSetup");
  if (options === null || typeof options !== "object") {
    throw new SitefileError("INVALID_CONFIG", "createAdminSetup takes an options object");
  }
  if (options.meta !== undefined && typeof options.meta !== "function") {
    throw new SitefileError("INVALID_CONFIG", "createAdminSetup: meta must be a function returning the schema");
  }
  const invokeLoaders = new Map(Object.entries(options.getCommerceLoaders ? options.getCommerceLoaders() : {}));
  for (const [key, loader] of invokeLoaders) {
    if (typeof loader !== "function") {
      throw new SitefileError("INVALID_CONFIG", `createAdminSetup: the commerce loader ${key} is not a function`);
    }
  }
  if (options.css !== undefined || options.fonts !== undefined) {
    setRenderShell({ css: options.css, fonts: options.fonts }, site);
  }
  site.admin = { meta: options.meta, previewWrapper: options.previewWrapper, invokeLoaders };
}

/** Loads the schema once, at the first admin request after `createAdminSetup`; a failed load
 * is not remembered (the next request tries again) and leaves `/live/_meta` answering 503. */
async function ensureSchema(site: Site): Promise<void> {
  const { admin } = site;
  if (!admin.meta || site.native.hasSchema) return;
  if (!admin.metaLoading) {
    const load = admin.meta;
    const loading = (async () => {
      try {
        const schema: unknown = await load();
        native(() => site.native.setSchema(JSON.stringify(schema), JSON.stringify(site.matcherSchemas)));
      } catch (error) {
        console.error(`sitefile: the schema could not be loaded: ${messageOf(error)}`);
      }
    })();
    admin.metaLoading = loading;
    void loading.then(() => {
      if (admin.metaLoading === loading) admin.metaLoading = undefined;
    });
  }
  await admin.metaLoading;
}

/** @internal */
export function flatHeaders(headers: Headers): string[] {
  const flat: string[] = [];
  for (const [name, value] of headers) flat.push(name, value);
  return flat;
}

/** The body, read up to one byte past `limit` (the core answers 413 past it; nothing more
 * is read). */
async function readBody(request: Request, limit: number): Promise<Buffer | undefined> {
  if (!request.body) return undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      break;
    }
  }
  return Buffer.concat(chunks);
}

/** @internal */
export function toResponse(output: Native.AdminResponseOutput): Response {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < output.headers.length; i += 2) {
    pairs.push([output.headers[i] as string, output.headers[i + 1] as string]);
  }
  return withHeaders(output.body.length === 0 ? null : ownedBytes(output.body), output.status, pairs);
}

/** The addon's bytes as `Response` (or a KV namespace) takes them: the WebAssembly engine hands
 * out views of its shared memory, which `Response` refuses, so those are copied; the native
 * addon's are kept.
 * @internal */
export function ownedBytes(bytes: Buffer): Uint8Array {
  return bytes.buffer instanceof ArrayBuffer ? bytes : new Uint8Array(bytes);
}

/** A response of `status` with `headers` (names may repeat); no body where HTTP allows none.
 * @internal */
export function withHeaders(body: ConstructorParameters<typeof Response>[0], status: number, headers: Array<[string, string]>): Response {
  const out = new Headers();
  for (const [name, value] of headers) out.append(name, value);
  const empty = status === 204 || status === 304 || status < 200;
  return new Response(empty ? null : body, { status, headers: out });
}

interface InvokeCall {
  alias: string;
  key: string;
  props: unknown;
}

/** Runs the invoked loaders concurrently; returns their answers (the core's invoke answer
 * form) and the headers they wrote. */
async function runInvoke(site: Site, calls: InvokeCall[], request: Request): Promise<[string, string[]]> {
  const ctx: InvokeContext = { responseHeaders: new Headers() };
  const answers = await Promise.all(
    calls.map(async (call) => {
      const loader = site.loaders.get(call.key) ?? site.admin.invokeLoaders.get(call.key);
      if (!loader) return '{"unknown":true}';
      try {
        let value = await loader(call.props, request, ctx);
        if (value instanceof Response) value = await value.json().catch(() => null);
        return `{"value":${JSON.stringify(value === undefined ? null : value) ?? "null"}}`;
      } catch (error) {
        const stack = error instanceof Error ? error.stack : undefined;
        return JSON.stringify({ error: messageOf(error), stack });
      }
    }),
  );
  return [`[${answers.join(",")}]`, flatHeaders(ctx.responseHeaders)];
}

/** React's mark on a client component (`"use client"`) as a server bundle sees it: a reference
 * to the browser's module, which no server renderer can call. */
const CLIENT_REFERENCE = Symbol.for("react.client.reference");

/** The longest preview page address a client section is shown at (Node's default header limit
 * is 16 KiB, for the request line and every header). */
const MAX_PREVIEW_PAGE_URL = 8192;

/** The preview page's address showing `component` with `props` (the core's redirect of a
 * preview `GET`), with the `path` and `deviceHint` of `request`. */
function previewPageUrl(request: Request, component: string, props: unknown): string {
  const asked = new URL(request.url).searchParams;
  const query = new URLSearchParams();
  for (const name of ["path", "deviceHint"]) {
    const value = asked.get(name);
    if (value !== null) query.set(name, value);
  }
  query.set("props", JSON.stringify(props ?? {}));
  const input = { method: "GET", path: `/live/previews/${encodeURIComponent(component)}`, query: query.toString(), headers: [] };
  const redirect = native(() => addon.previewPageRedirect(input));
  const at = redirect?.headers.findIndex((name, i) => i % 2 === 0 && name.toLowerCase() === "location") ?? -1;
  const location = at < 0 ? undefined : redirect?.headers[at + 1];
  if (location === undefined) throw new Error(`no preview page shows ${component}`);
  if (location.length > MAX_PREVIEW_PAGE_URL) {
    throw new Error(
      `${component} is a client component, shown by the preview page, and its props are too large for the page's address: preview it with GET`,
    );
  }
  return location;
}

/** Renders the resolved sections with React's server renderer, each on its own: one section's
 * failure is that section's error. A client component (a Next route's bundle holds only a
 * reference to it) is the preview page showing it in an `<iframe>`, with `given`, its props
 * before section loaders (the page runs them). */
async function renderSections(site: Site, sections: ResolvedSection[], given: ResolvedSection[], request: Request): Promise<string> {
  // Loaded on the first preview: React is an optional peer dependency, needed only to render.
  const React = require("react") as typeof import("react");
  const { renderToString } = require("react-dom/server") as typeof import("react-dom/server");
  const rendered = await Promise.all(
    sections.map(async ({ component, props }, index) => {
      try {
        const Component = (await getSection(component, site)) as React.ElementType | undefined;
        if (Component === undefined) throw new Error(`no section module is registered for ${component}`);
        if (typeof Component !== "function" && typeof Component !== "object") {
          throw new Error(`the module of ${component} exports no component`);
        }
        if ((Component as { $$typeof?: unknown }).$$typeof === CLIENT_REFERENCE) {
          const src = previewPageUrl(request, component, given[index]?.props);
          const frame = React.createElement("iframe", {
            src,
            title: component,
            "data-platform-client-preview": "",
            style: { width: "100%", border: 0 },
          });
          return { key: component, html: renderToString(frame) };
        }
        let element = React.createElement(Component, props);
        const Wrapper = site.admin.previewWrapper as React.ElementType | undefined;
        if (Wrapper) element = React.createElement(Wrapper, null, element);
        return { key: component, html: renderToString(element) };
      } catch (error) {
        return { key: component, error: messageOf(error) };
      }
    }),
  );
  return JSON.stringify({ sections: rendered });
}

async function finishPreview(site: Site, outcome: Native.NativeAdminOutcome, request: Request): Promise<Native.AdminResponseOutput> {
  let render: string;
  try {
    const page = await drive(
      site,
      native(() => outcome.resolvePreview()),
      request,
    );
    // Section loaders see the previewed page, as the preview's matchers did.
    const seenFrom = { url: outcome.previewUrl ?? request.url, headers: request.headers };
    const sections = await runSectionLoaders(page.sections, seenFrom, site);
    render = await renderSections(site, sections, page.sections, request);
  } catch (error) {
    render = JSON.stringify({ error: messageOf(error) });
  }
  return native(() => outcome.finishPreview(render));
}

/**
 * Answers an admin request (spec "Endpoints": `/.sitefile`, `/live/_meta`, previews,
 * `/platform/render`, `/platform/invoke`, `/platform/_liveness`, `/_cache/purge-loaders`), or
 * `null` when its path is no admin route. Bad input is a 4xx JSON answer and leaves content
 * unchanged.
 */
export async function handleAdminRequest(request: Request, site: Site = currentSite()): Promise<Response | null> {
  checkSite(site, "handleAdminRequest");
  return answerAdmin(site, request, "admin");
}

/** What the host does for an admin request besides answering it.
 * @internal */
export interface AdminIo {
  /** Deletes a purge's keys from the edge cache. */
  deleteKeys?: (keys: string[]) => Promise<void>;
  /** Applies a reload through Fast Deploy (its snapshot written to the key-value store before
   * it serves); without it a reload is in memory only (`kvWritten: false`). */
  reload?: (outcome: Native.NativeAdminOutcome) => Promise<Native.AdminResponseOutput>;
}

/**
 * Answers an admin request through the core: `"admin"` as the admin handlers do, `"edge"` as
 * the worker entry does (only the purge routes without its `admin` option), with `io` doing
 * the host's part.
 * @internal
 */
export async function answerAdmin(site: Site, request: Request, as: "admin" | "edge", io: AdminIo = {}): Promise<Response | null> {
  const url = new URL(request.url);
  const input: Native.AdminRequestInput = {
    method: request.method,
    path: url.pathname,
    query: url.search.slice(1),
    headers: flatHeaders(request.headers),
  };
  // The core decides from the head, before any body byte is read: a request that is no admin
  // route goes on untouched, a refused one (token, method, a declared Content-Length over the
  // limit) is answered at once, and an admitted one reads its body up to the route's limit.
  const head = native(() => site.native.adminHead(input, as === "edge"));
  if (head.kind === "pass") return null;
  if (head.response) return toResponse(head.response);
  await ensureSchema(site);
  if (head.kind === "read") input.body = await readBody(request, head.limit ?? 0);
  const now = site.now().getTime();
  const outcome = native(() => (as === "admin" ? site.native.handleAdmin(input, now) : site.native.handleEdgeAdmin(input, now)));
  let output: Native.AdminResponseOutput;
  switch (outcome.kind) {
    case "pass":
      return null;
    case "reload":
      output = io.reload ? await io.reload(outcome) : native(() => outcome.applyReload());
      if (output.status === 200) site.contentChanged();
      break;
    case "purge": {
      const job = JSON.parse(outcome.job ?? "{}") as { keys: string[] };
      if (io.deleteKeys) await io.deleteKeys(job.keys);
      output = native(() => outcome.finishPurge());
      break;
    }
    case "preview":
      output = await finishPreview(site, outcome, request);
      break;
    case "invoke": {
      const job = JSON.parse(outcome.job ?? "{}") as { calls: InvokeCall[] };
      const [results, headers] = await runInvoke(site, job.calls, request);
      output = native(() => outcome.finishInvoke(results, headers));
      break;
    }
    default:
      output = native(() => outcome.response());
  }
  return toResponse(output);
}

/** An admin handler: the admin route the request names, or 404 JSON for another path. */
async function handler(request: Request): Promise<Response> {
  const response = await handleAdminRequest(request);
  if (response) return response;
  const url = new URL(request.url);
  const input = { method: request.method, path: url.pathname, query: url.search.slice(1), headers: flatHeaders(request.headers) };
  return toResponse(native(() => addon.unknownAdminRoute(input)));
}

/** `GET /live/_meta` (also `/platform/meta`): the schema with its ETag; 304 on a match. */
export const handleMeta: AdminHandler = handler;
/** `GET /.sitefile` (also `/platform/sitefile`): the content with its revision. */
export const handleDecofileRead: AdminHandler = handler;
/** `POST /.sitefile`: a delta or full reload, authorized by `PLATFORM_RELEASE_RELOAD_TOKEN`. */
export const handleDecofileReload: AdminHandler = handler;
/** Previews (`/live/previews/<target>`) and `/platform/render`: HTML in the render shell. */
export const handleRender: AdminHandler = handler;
/** `POST /platform/invoke/<key>` and the batch `POST /platform/invoke`. */
export const handleInvoke: AdminHandler = handler;

/** The CORS headers of an admin response to `request`, for responses the host builds. */
export function corsHeaders(request: Request): Record<string, string> {
  const flat = native(() => addon.corsHeaders(flatHeaders(request.headers)));
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) headers[flat[i] as string] = flat[i + 1] as string;
  return headers;
}
