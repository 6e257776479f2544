/**
 * What `createDecoPage` is made of, for a page written by hand (exported by `sitefile/page`):
 * the draft-aware resolution and the sections renderer (nested sections as components,
 * deferred sections as their loading fallback in the app's deferred-section component, which
 * loads them near the viewport — see `deferred-client.ts`).
 *
 * ```tsx
 * // app/[[...slug]]/page.tsx
 * import { headers } from "next/headers";
 * import { runSectionLoaders } from "sitefile";
 * import { renderDecoSections, resolveDecoPageWithDraft } from "sitefile/page";
 * import { ensureSetup } from "../../lib/sitefile";
 *
 * export default async function Page({ params }: { params: Promise<{ slug?: string[] }> }) {
 *   const site = await ensureSetup();
 *   const { slug = [] } = await params;
 *   const request = { url: `https://shop.example/${slug.join("/")}`, headers: new Headers(await headers()) };
 *   const page = await resolveDecoPageWithDraft(request, site);
 *   const sections = await runSectionLoaders(page.sections, request, site);
 *   return <main>{await renderDecoSections(sections, { setup: ensureSetup })}</main>;
 * }
 * ```
 */

import type * as React from "react";
import { SitefileError } from "../errors";
import { type ResolvedPage, type ResolvedSection, resolveDecoPage, resolveDecoPageInDraft } from "../resolve";
import { type RequestInput, Site, currentSite } from "../setup";
import { deferredSection, eagerSections } from "./deferred";
import { forwardedDraft } from "./draft";
import { originOf, renderSections } from "./render";
import type { SectionConventions } from "./setup";

/** A request as {@link resolveDecoPageWithDraft} takes it: a fetch `Request`, or its URL and
 * headers (Next's `headers()`). */
export interface DraftAwareRequest {
  /** The page's absolute URL. */
  url: string;
  /** Every header of the request (the draft middleware's pointer among them). */
  headers: Headers;
}

/**
 * Resolves `request` (what matchers and loaders see) over the draft the draft middleware
 * forwarded in `headers` when the host of `origin` may preview it, else over the published
 * content.
 * @internal
 */
export async function resolveOverDraft(request: RequestInput, site: Site, origin: string, headers: Headers): Promise<ResolvedPage> {
  const draft = await forwardedDraft(site, origin, headers);
  return draft === null ? resolveDecoPage(request, site) : resolveDecoPageInDraft(request, draft, site);
}

/**
 * Resolves the page for a request as `createDecoPage` does: over the draft the request
 * carries (the draft middleware's `x-platform-draft`, honoured only on a host that may
 * preview it), else over the published content. Matchers see the whole request; section
 * loaders are not run (`runSectionLoaders`). `page: null` when no page serves the path.
 */
export async function resolveDecoPageWithDraft(request: DraftAwareRequest, site: Site = currentSite()): Promise<ResolvedPage> {
  if (request === null || typeof request !== "object" || typeof request.url !== "string" || !(request.headers instanceof Headers)) {
    throw new SitefileError("INVALID_REQUEST", "resolveDecoPageWithDraft takes { url, headers: Headers }");
  }
  const { headers } = request;
  const origin = headers.has("host") || headers.has("x-forwarded-host") ? originOf(headers) : new URL(request.url).origin;
  return resolveOverDraft({ url: request.url, headers }, site, origin, headers);
}

/** `renderDecoSections` options. */
export interface RenderDecoSectionsOptions {
  /** `ensureSetup` from `createNextSetup`: the site whose components render the sections,
   * and its conventions (loading fallbacks, synchronous components). */
  setup: () => Promise<unknown>;
  /** The app's deferred-section client component (as `createDecoPage`'s `deferredSection`),
   * with `path`: a deferred section is then rendered as its loading fallback and loaded near
   * the viewport (a Server Action answering `createDecoPage(...).section(ref)`). Without it
   * every section renders at once. */
  deferredSection?: unknown;
  /** The page's path (and query), which the component hands back to load a section. */
  path?: string;
}

/**
 * Renders resolved sections as `createDecoPage` does, in order: each with its component
 * (nested `{Component, props}` sections as components), a deferred one as its loading
 * fallback in `deferredSection` when given (with `path`), else at once.
 */
export async function renderDecoSections(sections: ResolvedSection[], options: RenderDecoSectionsOptions): Promise<React.ReactElement[]> {
  if (options === null || typeof options !== "object" || typeof options.setup !== "function" || !Array.isArray(sections)) {
    throw new SitefileError("INVALID_CONFIG", "renderDecoSections takes (sections, { setup: ensureSetup })");
  }
  const answer = await options.setup();
  const site = answer instanceof Site ? answer : currentSite();
  const conventions = (options.setup as { conventions?: SectionConventions }).conventions ?? {};
  const { deferredSection: Deferred, path } = options;
  if (Deferred === undefined || typeof path !== "string") return renderSections(site, eagerSections(sections));
  return renderSections(site, sections, { deferred: deferredSection(site, conventions, Deferred, path) });
}
