/**
 * `createDecoPreviewPage` (exported by `sitefile/page`): the page the editor's section and page
 * previews are shown on, so client components render and hydrate in them.
 *
 * ```ts
 * // app/platform/preview/[[...path]]/page.tsx
 * import { createDecoPreviewPage } from "sitefile/page";
 * import { ensureSetup } from "../../../../lib/sitefile";
 * export default createDecoPreviewPage({ setup: ensureSetup });
 * ```
 *
 * The catch-all admin route answers a preview `GET` (`/live/previews/<target>?<query>`) with a
 * 307 here. The page hands the preview back to the core as that admin request, resolves what it
 * names (its path, device and content overlay applied), runs its section loaders and renders
 * each section in `<section data-manifest-key>`; failures render inline, the page never throws.
 */

import type * as React from "react";
import { SitefileError, native } from "../errors";
import { flatHeaders } from "../admin";
import { drive, messageOf } from "../resolve";
import { runSectionLoaders } from "../sections";
import { Site, addon, currentSite } from "../setup";
import { type SearchParams, originOf, queryOf, react, renderSections, requestHeaders } from "./render";

/** `createDecoPreviewPage` options. */
export interface DecoPreviewPageOptions {
  /** `ensureSetup` from `createNextSetup`. */
  setup: () => Promise<unknown>;
  /** The `data-theme` of the preview (default `light`). */
  theme?: string;
}

/** What Next passes the page at `app/platform/preview/[[...path]]/page.tsx`. */
export interface DecoPreviewPageProps {
  /** The previewed target's segments, decoded. */
  params: Promise<{ path?: string[] }>;
  /** The preview's query (`path`, `deviceHint`, `props`, ...). */
  searchParams?: Promise<SearchParams>;
}

/** What the preview shows, or why it cannot. */
async function previewSections(site: Site, props: DecoPreviewPageProps): Promise<React.ReactElement[]> {
  const { headers } = await requestHeaders();
  const { path: segments = [] } = await props.params;
  const query = queryOf(await props.searchParams);
  const input = { method: "GET", path: addon.previewPageAdminPath(segments), query: query.toString(), headers: flatHeaders(headers) };
  const outcome = native(() => site.native.handleAdmin(input, site.now().getTime()));
  if (outcome.kind !== "preview") {
    const response = outcome.kind === "respond" ? native(() => outcome.response()) : null;
    const detail = response ? `${response.status} ${response.body.toString("utf8")}` : outcome.kind;
    throw new Error(`nothing to preview (${detail})`);
  }
  const seenFrom = { url: outcome.previewUrl ?? `${originOf(headers)}/`, headers };
  const page = await drive(
    site,
    native(() => outcome.resolvePreview()),
    seenFrom,
  );
  const sections = await runSectionLoaders(page.sections, seenFrom, site);
  return renderSections(site, sections, { preview: true, wrapper: site.admin.previewWrapper });
}

/**
 * Builds the preview page (spec `createDecoPreviewPage({ setup })`): the previewed section,
 * saved block or whole page rendered as the site renders it, in `<div data-theme>` (default
 * `light`) with the preview stylesheet and fonts of `createNextSetup`'s `renderShell`.
 */
export function createDecoPreviewPage(options: DecoPreviewPageOptions): (props: DecoPreviewPageProps) => Promise<React.ReactElement> {
  if (options === null || typeof options !== "object" || typeof options.setup !== "function") {
    throw new SitefileError("INVALID_CONFIG", "createDecoPreviewPage takes { setup: ensureSetup }");
  }
  const { setup } = options;
  const shell = (setup as { renderShell?: { css?: string; fonts?: string[] } }).renderShell ?? {};
  const stylesheets = [...(shell.fonts ?? []), ...(shell.css ? [shell.css] : [])];
  return async function PreviewPage(props: DecoPreviewPageProps): Promise<React.ReactElement> {
    const { createElement } = react();
    let content: React.ReactElement[];
    try {
      const answer = await setup();
      content = await previewSections(answer instanceof Site ? answer : currentSite(), props);
    } catch (error) {
      content = [
        createElement("div", { key: "error", className: "platform-render-error", role: "alert" }, `Render error: ${messageOf(error)}`),
      ];
    }
    const links = stylesheets.map((href) => createElement("link", { key: href, rel: "stylesheet", href }));
    return createElement("div", { "data-theme": options.theme ?? "light", "data-platform-preview": "" }, ...links, ...content);
  };
}
