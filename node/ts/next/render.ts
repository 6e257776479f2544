/**
 * Resolved sections as React elements, for the Next.js page and preview page (server
 * components). Conversion only: which module a section key names is the core's answer
 * (`getSection`).
 */

import type * as React from "react";
import { getSection } from "../sections";
import { messageOf } from "../resolve";
import type { ResolvedSection } from "../resolve";
import type { Site } from "../setup";

/** A query as Next hands it to a page. */
export type SearchParams = Record<string, string | string[] | undefined>;

/** What the pages read of `next/headers`. */
interface NextHeaders {
  /** The request's headers (one object per request). */
  headers(): Promise<Iterable<[string, string]> & object>;
}

/** The headers of the request being rendered (Next's `headers()`; `next` is an optional
 * peer, loaded when a page first renders), and Next's object for them, the same for every
 * call within one request. */
export async function requestHeaders(): Promise<{ headers: Headers; key: object }> {
  const key = await (require("next/headers") as NextHeaders).headers();
  const headers = new Headers();
  for (const [name, value] of key) headers.append(name, value);
  return { headers, key };
}

/** A page's query as Next hands it, as a query string's parameters. */
export function queryOf(searchParams: SearchParams | undefined): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(searchParams ?? {})) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) query.append(name, v);
  }
  return query;
}

/** The origin a request was made to: the forwarded or `Host` header, the forwarded scheme. */
export function originOf(headers: Headers): string {
  const host = headers.get("x-forwarded-host") ?? headers.get("host") ?? "localhost";
  const proto = headers.get("x-forwarded-proto")?.split(",")[0]?.trim() || "http";
  return `${proto}://${host}`;
}

/** React, loaded when a page first renders: it is an optional peer dependency. */
export function react(): typeof import("react") {
  return require("react") as typeof import("react");
}

/** `value` with every nested section (`{Component: <section key>, props}`, at any depth) given
 * its component in place of the key, so a section renders it as `<item.Component
 * {...item.props} />`. A key no module is registered for is left as it is. */
async function withComponents(value: unknown, site: Site): Promise<unknown> {
  if (Array.isArray(value)) return Promise.all(value.map((item) => withComponents(item, site)));
  if (value === null || typeof value !== "object") return value;
  const object = value as Record<string, unknown>;
  const entries = await Promise.all(
    Object.entries(object).map(async ([name, item]): Promise<[string, unknown]> => [name, await withComponents(item, site)]),
  );
  const converted = Object.fromEntries(entries);
  if (typeof object.Component === "string" && object.props !== null && typeof object.props === "object") {
    const Component = await getSection(object.Component, site);
    if (Component !== undefined) converted.Component = Component;
  }
  return converted;
}

/** How each section is wrapped. */
export interface RenderOptions {
  /** Previews: each section in `<section data-manifest-key>`, its failure rendered inline. */
  preview?: boolean;
  /** Wraps each section (the preview wrapper), given the section as `children`. */
  wrapper?: unknown;
  /** Renders a deferred section in place of the section (which is then neither loaded nor
   * rendered here): its fallback, the section loaded separately when it nears the viewport. */
  deferred?: (section: ResolvedSection, index: number) => Promise<React.ReactElement>;
}

/** An inline error, as the core writes it in previews. */
function inlineError(message: string): React.ReactElement {
  return react().createElement("div", { className: "platform-render-error", role: "alert" }, message);
}

/** One section as an element. A section no module is registered for is an empty marker
 * (`data-unknown-section`); in previews it and a failing module are an inline error. */
async function sectionElement(site: Site, section: ResolvedSection, index: number, options: RenderOptions): Promise<React.ReactElement> {
  const { createElement } = react();
  if (section.deferred && options.deferred) {
    return createElement(react().Fragment, { key: index }, await options.deferred(section, index));
  }
  let element: React.ReactElement;
  try {
    const Component = (await getSection(section.component, site)) as React.ElementType | undefined;
    if (Component === undefined) {
      if (options.preview) throw new Error(`no section module is registered for ${section.component}`);
      return createElement("div", { key: index, "data-unknown-section": section.component });
    }
    const props = (await withComponents(section.props ?? {}, site)) as Record<string, unknown>;
    element = createElement(Component, props);
    if (options.wrapper) element = createElement(options.wrapper as React.ElementType, null, element);
  } catch (error) {
    if (!options.preview) throw error;
    element = inlineError(`Error rendering ${section.component}: ${messageOf(error)}`);
  }
  if (options.preview) return createElement("section", { key: index, "data-manifest-key": section.component }, element);
  return createElement(react().Fragment, { key: index }, element);
}

/** The sections of a resolved page as elements, in order. */
export function renderSections(site: Site, sections: ResolvedSection[], options: RenderOptions = {}): Promise<React.ReactElement[]> {
  return Promise.all(sections.map((section, index) => sectionElement(site, section, index, options)));
}
