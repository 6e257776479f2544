/**
 * `sitefile/page`: `createDecoPage`, the App Router page that renders the site's pages.
 *
 * ```ts
 * // app/[[...slug]]/page.tsx
 * import { createDecoPage } from "sitefile/page";
 * import { ensureSetup } from "../../lib/sitefile";
 * const page = createDecoPage({ siteName: "My store", setup: ensureSetup });
 * export const generateMetadata = page.generateMetadata;
 * export default page.default;
 * ```
 *
 * The page resolves the site's page for the request path with `resolveDecoPage`, calls Next's
 * `notFound()` when no page serves it or the site's not-found page does (`"notFound": true`;
 * `page.NotFound` renders that page in the app's `app/not-found.tsx`, with status 404), and
 * renders its sections in order (nested sections as components; a deferred section's loading fallback first, the section loaded separately when
 * it nears the viewport through `section` — see `deferred.ts`). `generateMetadata` is the page's
 * document head from the core's `pageMetadata`. A request the draft middleware forwarded an
 * allowed draft pointer for is resolved over that draft's blocks (see `draft.ts`).
 *
 * @module sitefile/page
 */

import type * as React from "react";
import { SitefileError } from "../errors";
import { type MetadataDefaults, pageMetadata } from "../metadata";
import { type ResolvedPage, type ResolvedSection, resolveDecoNotFoundPage } from "../resolve";
import { runSectionLoaders } from "../sections";
import { type RequestInput, Site, currentSite } from "../setup";
import { deferredSection, eagerSections, isSectionRef, sectionOfPage } from "./deferred";
import type { DeferredSectionRef } from "./deferred-client";
import { resolveOverDraft } from "./page-parts";
import type { SectionConventions } from "./setup";
import { type SearchParams, originOf, queryOf, react, renderSections, requestHeaders } from "./render";

/** What Next passes a page at `app/[[...slug]]/page.tsx` (and its `generateMetadata`). */
export interface DecoPageProps {
  /** The route's params; `slug` holds the path's segments, decoded. */
  params: Promise<{ slug?: string[] }>;
  /** The query. */
  searchParams?: Promise<SearchParams>;
}

/** `createDecoPage` options (spec `createDecoPage({ siteName })`). */
export interface DecoPageOptions extends MetadataDefaults {
  /** The site's name: the title of a page without one when `defaultTitle` is not given. */
  siteName: string;
  /** `ensureSetup` from `createNextSetup`, awaited before every page; without it the site
   * set up last in this process (`currentSite()`). */
  setup?: () => Promise<unknown>;
  /** Extension. `false` (the default, as the spec says): matchers see the path and the user
   * agent only (no cookies, no query) and section loaders do not run. `true`: matchers see
   * the whole request (headers, cookies, the full URL) and section loaders run, as a page
   * written with `resolveDecoPage` and `runSectionLoaders` would. */
  fullRequest?: boolean;
  /** The app's deferred-section client component (`deferredSectionComponent` from
   * `sitefile/deferred`, in a `"use client"` module of the app, its Server Action calling
   * {@link DecoPage.section}). A deferred section is then rendered as its loading fallback and
   * loaded when it nears the viewport. Without it deferred sections render at once. */
  deferredSection?: unknown;
}

/** The fields of Next's `Metadata` a page's document head sets. */
export interface DecoMetadata {
  title?: string;
  description?: string;
  alternates?: { canonical: string };
  robots?: { index: boolean; follow: boolean };
}

/** The page module's exports: `export default page.default`, `export const generateMetadata =
 * page.generateMetadata`. */
export interface DecoPage {
  /** The page component (a server component). */
  default: (props: DecoPageProps) => Promise<React.ReactElement>;
  /** The page's document head. */
  generateMetadata: (props: DecoPageProps) => Promise<DecoMetadata>;
  /** A deferred section, for the app's Server Action: the page `ref.path` names, resolved again
   * for the request under way (its cookies and headers reach matchers), and the section at
   * `ref.index` rendered with its section loaders run; `null` when that is not a deferred
   * section of key `ref.component` of that page. */
  section: (ref: DeferredSectionRef) => Promise<React.ReactElement | null>;
  /** The site's not-found page (the page block with `"notFound": true`), for the app's
   * `app/not-found.tsx`: `<page.NotFound>fallback</page.NotFound>` renders its sections, or the
   * children when the site has none. Next answers it with status 404. */
  NotFound: (props: { children?: React.ReactNode }) => Promise<React.ReactElement>;
}

/** Next's `notFound()`: renders the app's not-found page. */
function notFound(): never {
  const { notFound: fail } = require("next/navigation") as { notFound(): never };
  return fail();
}

/** The site `setup` answers, or the current one. */
async function siteOf(setup: (() => Promise<unknown>) | undefined): Promise<Site> {
  const answer = setup ? await setup() : undefined;
  return answer instanceof Site ? answer : currentSite();
}

/** A request for the page at `path` (its segments already encoded) with `query`, seen as
 * `createDecoPage` sees it: the whole request with `full`, else the URL's path and the user
 * agent. */
function requestFor(
  headers: Headers,
  path: string,
  query: URLSearchParams,
  full: boolean,
): { url: string; origin: string; request: RequestInput } {
  // Every request a page is rendered for is a visit: the App Router's own navigations and
  // Server Actions are fetches (`Sec-Fetch-Dest: empty`, which the core renders whole) and Next
  // hides the headers telling them apart from a script's fetch. `?__platform_ssr=1` and bots
  // still get the whole page.
  headers.delete("sec-fetch-dest");
  const origin = originOf(headers);
  let url = `${origin}${path}`;
  if (!full) {
    const agent = headers.get("user-agent");
    return { url, origin, request: { url, headers: agent === null ? {} : { "user-agent": agent } } };
  }
  if (query.size > 0) url += `?${query}`;
  return { url, origin, request: { url, headers } };
}

/** The request the page is rendered for: its path and query from Next's props, its origin
 * from the forwarded or `Host` header. */
async function requestOf(
  props: DecoPageProps,
  full: boolean,
): Promise<{ url: string; origin: string; request: RequestInput; headers: Headers; key: object }> {
  const { headers, key } = await requestHeaders();
  const { slug = [] } = await props.params;
  const path = `/${slug.map(encodeURIComponent).join("/")}`;
  const query = full ? queryOf(await props.searchParams) : new URLSearchParams();
  return { ...requestFor(headers, path, query, full), headers, key };
}

/** `sections` with the section loaders of every section rendered at once run (a deferred
 * section's run when it is loaded). */
async function withEagerLoaders(site: Site, sections: ResolvedSection[], url: string, headers: Headers): Promise<ResolvedSection[]> {
  const loaded = await runSectionLoaders(
    sections.filter((section) => !section.deferred),
    { url, headers },
    site,
  );
  let next = 0;
  return sections.map((section) => (section.deferred ? section : (loaded[next++] ?? section)));
}

/** Pages resolved in the request under way, keyed by Next's headers object of that request
 * (one per request), so the page and its metadata share one resolution. */
const resolved = new WeakMap<object, Map<string, Promise<ResolvedPage>>>();

/**
 * Builds the catch-all page (spec `createDecoPage`): `default` renders the page the request
 * path names, `generateMetadata` its title, description, canonical URL and robots. A path
 * no page serves is Next's not-found page.
 */
export function createDecoPage(options: DecoPageOptions): DecoPage {
  if (options === null || typeof options !== "object" || typeof options.siteName !== "string") {
    throw new SitefileError("INVALID_CONFIG", "createDecoPage takes { siteName }");
  }
  if (options.setup !== undefined && typeof options.setup !== "function") {
    throw new SitefileError("INVALID_CONFIG", "createDecoPage: setup must be ensureSetup from createNextSetup");
  }
  const full = options.fullRequest === true;
  const Deferred = options.deferredSection;
  const defaults: MetadataDefaults = {
    siteName: options.siteName,
    defaultTitle: options.defaultTitle,
    defaultDescription: options.defaultDescription,
  };

  const pageFor = async (props: DecoPageProps): Promise<{ site: Site; page: ResolvedPage; path: string }> => {
    const site = await siteOf(options.setup);
    const { url, origin, request, headers, key } = await requestOf(props, full);
    let pages = resolved.get(key);
    if (!pages) {
      pages = new Map();
      resolved.set(key, pages);
    }
    let page = pages.get(url);
    if (!page) {
      page = (async () => {
        const found = await resolveOverDraft(request, site, origin, headers);
        if (Deferred === undefined) found.sections = eagerSections(found.sections);
        if (full && found.page !== null) found.sections = await withEagerLoaders(site, found.sections, url, headers);
        return found;
      })();
      pages.set(url, page);
    }
    const found = await page;
    // No page, or the site's not-found page: Next's not-found screen with status 404, where
    // `NotFound` renders that page.
    if (found.page === null || found.notFound === true) notFound();
    return { site, page: found, path: url.slice(origin.length) };
  };

  const conventions = (options.setup as { conventions?: SectionConventions } | undefined)?.conventions ?? {};
  const Page = async (props: DecoPageProps): Promise<React.ReactElement> => {
    const { site, page, path } = await pageFor(props);
    const deferred = Deferred === undefined ? undefined : deferredSection(site, conventions, Deferred, path);
    const sections = await renderSections(site, page.sections, { deferred });
    return react().createElement("main", { "data-page": page.page }, ...sections);
  };

  const section = async (ref: DeferredSectionRef): Promise<React.ReactElement | null> => {
    if (Deferred === undefined || !isSectionRef(ref)) return null;
    const site = await siteOf(options.setup);
    const { headers } = await requestHeaders();
    const at = new URL(ref.path, "http://path.invalid");
    const { origin, request } = requestFor(headers, at.pathname, at.searchParams, full);
    const chosen = sectionOfPage(await resolveOverDraft(request, site, origin, headers), ref);
    if (chosen === null) return null;
    const [loaded = chosen] = full ? await runSectionLoaders([chosen], { url: request.url, headers }, site) : [chosen];
    const [element] = await renderSections(site, [loaded]);
    return element ?? null;
  };

  const generateMetadata = async (props: DecoPageProps): Promise<DecoMetadata> => {
    const { page } = await pageFor(props);
    const head = pageMetadata(page, defaults);
    const metadata: DecoMetadata = {};
    if (head.title !== null) metadata.title = head.title;
    if (head.description !== null) metadata.description = head.description;
    if (head.canonical !== null) metadata.alternates = { canonical: head.canonical };
    if (head.robots !== null) metadata.robots = head.robots;
    return metadata;
  };

  const NotFound = async ({ children }: { children?: React.ReactNode }): Promise<React.ReactElement> => {
    const site = await siteOf(options.setup);
    const { headers } = await requestHeaders();
    const { url, request } = requestFor(headers, "/", new URLSearchParams(), full);
    const found = await resolveDecoNotFoundPage(request, site);
    if (found.page === null) return react().createElement(react().Fragment, null, children);
    let sections = eagerSections(found.sections);
    if (full) sections = await withEagerLoaders(site, sections, url, headers);
    const rendered = await renderSections(site, sections);
    return react().createElement("main", { "data-page": found.page }, ...rendered);
  };

  return { default: Page, generateMetadata, section, NotFound };
}

export { type DecoPreviewPageOptions, type DecoPreviewPageProps, createDecoPreviewPage } from "./preview-page";
export {
  type DraftAwareRequest,
  type RenderDecoSectionsOptions,
  renderDecoSections,
  resolveDecoPageWithDraft,
} from "./page-parts";
export type { SearchParams } from "./render";
