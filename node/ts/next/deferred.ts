/**
 * Deferred sections on the Next.js page. The core marks a section deferred (a lazy-wrapped
 * section, `asyncRendering` on, a visitor that is not a bot); the page renders it inside a
 * `<platform-deferred>` element: its loading fallback shown, the section itself `hidden`. A
 * small custom element, defined by {@link DEFERRED_SCRIPT} on every page, shows the section and
 * hides the fallback when the element comes within 200px of the viewport.
 */

import type * as React from "react";
import { addon } from "../setup";
import type { Site } from "../setup";
import { sectionModule } from "../sections";
import type { ResolvedSection } from "../resolve";
import { react } from "./render";
import type { SectionConventions } from "./setup";

/** The element a deferred section is rendered in. */
export const DEFERRED_ELEMENT = "platform-deferred";

/** Defines {@link DEFERRED_ELEMENT} once per document. Custom elements run when React inserts
 * them too, so client-side navigations reveal their deferred sections as well. */
export const DEFERRED_SCRIPT =
  `(()=>{if(customElements.get("${DEFERRED_ELEMENT}"))return;` +
  `customElements.define("${DEFERRED_ELEMENT}",class extends HTMLElement{connectedCallback(){` +
  `const show=()=>{for(const c of this.children)c.hidden=!c.hasAttribute("data-platform-deferred-content");` +
  `this.setAttribute("data-loaded","")};` +
  `if(!("IntersectionObserver"in window)){show();return}` +
  `const o=new IntersectionObserver((es)=>{if(es.some((e)=>e.isIntersecting)){o.disconnect();show()}},{rootMargin:"200px"});` +
  `o.observe(this)}})})()`;

/** The script element defining {@link DEFERRED_ELEMENT}. */
export function deferredScript(): React.ReactElement {
  return react().createElement("script", { key: "platform-deferred", dangerouslySetInnerHTML: { __html: DEFERRED_SCRIPT } });
}

/** The loading fallback of a section: `conventions.loadingFallbacks` (keyed like `sections`
 * or by section key), else its module's `LoadingFallback` export; `undefined` when neither. */
async function fallbackOf(site: Site, component: string, conventions: SectionConventions): Promise<unknown> {
  for (const [key, fallback] of Object.entries(conventions.loadingFallbacks ?? {})) {
    if (addon.sectionKey(key) === (site.native.registeredSection(component) ?? component)) return fallback;
  }
  const module = await sectionModule(component, site);
  return module !== null && typeof module === "object" ? (module as { LoadingFallback?: unknown }).LoadingFallback : undefined;
}

/** Renders deferred sections for `renderSections`: the fallback (given the section's props)
 * first, the section hidden until it nears the viewport. */
export function deferredSection(site: Site, conventions: SectionConventions) {
  return async (section: ResolvedSection, element: React.ReactElement, index: number): Promise<React.ReactElement> => {
    const { createElement } = react();
    const Fallback = (await fallbackOf(site, section.component, conventions)) as React.ElementType | undefined;
    return createElement(
      DEFERRED_ELEMENT,
      { key: index, style: { display: "block" }, "data-component": section.component },
      createElement("div", { "data-platform-fallback": "" }, Fallback ? createElement(Fallback, section.props ?? {}) : null),
      createElement("div", { "data-platform-deferred-content": "", hidden: true }, element),
    );
  };
}
