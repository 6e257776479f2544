/**
 * Deferred sections on the Next.js page, the server side. The core marks a section deferred (a
 * lazy-wrapped section, `asyncRendering` on, a visitor that is not a bot); the page renders in
 * its place the app's deferred-section client component (see `deferred-client.ts`) holding only
 * the section's loading fallback — the section is neither rendered nor are its section loaders
 * run. The component loads the section through the app's Server Action, which calls
 * `page.section(ref)`: {@link sectionOfPage} decides whether `ref` still names a deferred
 * section of the page resolved for that request.
 */

import type * as React from "react";
import { addon } from "../setup";
import type { Site } from "../setup";
import { sectionModule } from "../sections";
import type { ResolvedPage, ResolvedSection } from "../resolve";
import type { DeferredSectionProps, DeferredSectionRef } from "./deferred-client";
import { react } from "./render";
import type { SectionConventions } from "./setup";

/** The loading fallback of a section: `conventions.loadingFallbacks` (keyed like `sections`
 * or by section key), else its module's `LoadingFallback` export; `undefined` when neither. */
async function fallbackOf(site: Site, component: string, conventions: SectionConventions): Promise<unknown> {
  for (const [key, fallback] of Object.entries(conventions.loadingFallbacks ?? {})) {
    if (addon.sectionKey(key) === (site.native.registeredSection(component) ?? component)) return fallback;
  }
  const module = await sectionModule(component, site);
  return module !== null && typeof module === "object" ? (module as { LoadingFallback?: unknown }).LoadingFallback : undefined;
}

/** Renders deferred sections for `renderSections`: `Component` (the app's deferred-section
 * client component) given which section to load later (`path` is the page's) and the
 * section's fallback, rendered with the section's props. */
export function deferredSection(site: Site, conventions: SectionConventions, Component: unknown, path: string) {
  return async (section: ResolvedSection, index: number): Promise<React.ReactElement> => {
    const { createElement } = react();
    const Fallback = (await fallbackOf(site, section.component, conventions)) as React.ElementType | undefined;
    const props: DeferredSectionProps = {
      section: { path, index, component: section.component },
      fallback: Fallback ? createElement(Fallback, section.props ?? {}) : null,
    };
    return createElement(Component as React.ElementType<DeferredSectionProps>, props);
  };
}

/** Whether `ref` is a well-formed reference: a path on this origin, an index, a key. */
export function isSectionRef(ref: unknown): ref is DeferredSectionRef {
  if (ref === null || typeof ref !== "object") return false;
  const { path, index, component } = ref as Record<string, unknown>;
  return (
    typeof path === "string" &&
    path.startsWith("/") &&
    !path.startsWith("//") &&
    !path.includes("\\") &&
    Number.isSafeInteger(index) &&
    (index as number) >= 0 &&
    typeof component === "string"
  );
}

/** The section `ref` names in `page`, as an eager section; `null` unless the page exists and
 * the section at `ref.index` is deferred and has the key `ref.component` — so a reference
 * never reaches a section the page renders at once, nor one of another page. */
export function sectionOfPage(page: ResolvedPage, ref: DeferredSectionRef): ResolvedSection | null {
  if (page.page === null) return null;
  const section = page.sections[ref.index];
  if (section === undefined || section.deferred !== true || section.component !== ref.component) return null;
  return { component: section.component, props: section.props };
}

/** `sections` with none deferred: what a page renders when it has no deferred-section
 * component. */
export function eagerSections(sections: ResolvedSection[]): ResolvedSection[] {
  return sections.map((section) => (section.deferred ? { component: section.component, props: section.props } : section));
}
