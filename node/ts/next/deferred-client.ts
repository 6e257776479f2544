/**
 * `sitefile/deferred`: the browser side of deferred sections. A deferred section's first
 * response holds only its loading fallback inside a client component; when that component
 * comes within {@link DEFERRED_MARGIN} of the viewport it calls a Server Action that renders the
 * one section (its section loaders run then), and the section replaces the fallback, its client
 * components hydrated by React like any other Server Action result.
 *
 * The package is external to the app's server bundles (its addon cannot be bundled), so
 * `"use client"` and `"use server"` in it would not be seen. The app declares both in two
 * small modules of its own and this module supplies what they hold; React is the app's copy,
 * passed in, because hooks only work with the React that renders them:
 *
 * ```tsx
 * // lib/deferred-action.ts
 * "use server";
 * import type { DeferredSectionRef } from "sitefile/deferred";
 * import { page } from "./page"; // the app's createDecoPage(...)
 * export async function loadDeferredSection(ref: DeferredSectionRef) {
 *   return page.section(ref);
 * }
 *
 * // lib/deferred.tsx
 * "use client";
 * import * as React from "react";
 * import { deferredSectionComponent } from "sitefile/deferred";
 * import { loadDeferredSection } from "./deferred-action";
 * export const DeferredSection = deferredSectionComponent(React, loadDeferredSection);
 * ```
 *
 * and `createDecoPage({ ..., deferredSection: DeferredSection })`.
 *
 * @module sitefile/deferred
 */

import type * as React from "react";

/** The element a deferred section is rendered in (`data-loaded` once its section arrived). */
export const DEFERRED_ELEMENT = "platform-deferred";

/** How near the viewport a deferred section starts loading (an `IntersectionObserver` root
 * margin). */
export const DEFERRED_MARGIN = "200px";

/** Which section to load: the page's path (and query), the section's place among the page's
 * sections and its key. The server renders it only if that place still holds a deferred
 * section of that key. */
export interface DeferredSectionRef {
  /** The page's path, with its query when the page sees the whole request. */
  path: string;
  /** The section's index among the page's resolved sections. */
  index: number;
  /** The section key (`site/sections/Reviews.tsx`). */
  component: string;
}

/** The Server Action loading a deferred section: the section, or `null` when `ref` names no
 * deferred section (anymore). */
export type LoadDeferredSection = (ref: DeferredSectionRef) => Promise<React.ReactNode>;

/** The props the page gives the deferred-section component. */
export interface DeferredSectionProps {
  /** Which section to load. */
  section: DeferredSectionRef;
  /** Its loading fallback, shown until the section arrives. */
  fallback?: React.ReactNode;
}

/** What the component needs of React. */
export type ReactApi = Pick<typeof React, "createElement" | "startTransition" | "useEffect" | "useRef" | "useState">;

/** The part of `IntersectionObserver` used here (the package is typed without the DOM). */
interface Observer {
  observe(target: unknown): void;
  disconnect(): void;
}
type ObserverConstructor = new (
  callback: (entries: Array<{ isIntersecting: boolean }>) => void,
  options: { rootMargin: string },
) => Observer;

/**
 * The deferred-section client component, made with the app's React and its Server Action:
 * renders the fallback in a `<platform-deferred>` element, and when the element nears the
 * viewport (at once without `IntersectionObserver`) loads the section with `load` and renders
 * it instead, setting `data-loaded`. A section the server no longer has renders nothing; a
 * failed load leaves the fallback and is logged.
 */
export function deferredSectionComponent(react: ReactApi, load: LoadDeferredSection): (props: DeferredSectionProps) => React.ReactElement {
  const { createElement, startTransition, useEffect, useRef, useState } = react;
  return function DeferredSection({ section, fallback }: DeferredSectionProps): React.ReactElement {
    const ref = useRef<unknown>(null);
    const [loaded, setLoaded] = useState<{ node: React.ReactNode } | null>(null);
    const { path, index, component } = section;
    useEffect(() => {
      let live = true;
      const fetchSection = (): void => {
        load({ path, index, component }).then(
          (node) => {
            if (live) startTransition(() => setLoaded({ node }));
          },
          (error: unknown) => console.error(`sitefile: loading deferred section ${component} failed`, error),
        );
      };
      const IntersectionObserver = (globalThis as { IntersectionObserver?: ObserverConstructor }).IntersectionObserver;
      if (IntersectionObserver === undefined) {
        fetchSection();
        return () => {
          live = false;
        };
      }
      const observer = new IntersectionObserver(
        (entries) => {
          if (!entries.some((entry) => entry.isIntersecting)) return;
          observer.disconnect();
          fetchSection();
        },
        { rootMargin: DEFERRED_MARGIN },
      );
      observer.observe(ref.current);
      return () => {
        live = false;
        observer.disconnect();
      };
    }, [path, index, component]);
    return createElement(
      DEFERRED_ELEMENT,
      { ref, style: { display: "block" }, "data-component": component, "data-loaded": loaded ? "" : undefined },
      loaded ? loaded.node : fallback,
    );
  };
}
