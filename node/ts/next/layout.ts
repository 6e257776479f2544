/**
 * `sitefile/layout`: `DecoRootLayout`, the root layout component of a Next.js App Router site.
 *
 * ```tsx
 * // app/layout.tsx
 * import { DecoRootLayout } from "sitefile/layout";
 * import { ensureSetup } from "../lib/sitefile";
 * export default async function RootLayout({ children }: { children: React.ReactNode }) {
 *   await ensureSetup();
 *   return <DecoRootLayout siteName="my-store">{children}</DecoRootLayout>;
 * }
 * ```
 *
 * It renders `<html>` and `<body>`, the first-party analytics tag in the head exactly when
 * `PLATFORM_ANALYTICS_ENABLED=true` (from `PLATFORM_ANALYTICS_ORIGIN`, with
 * `PLATFORM_ANALYTICS_SITE_KEY`), and the live-controls script at the end of the body (`.`
 * opens the site in the editor, Ctrl or Cmd with `.` in a new tab). What to render is the
 * core's (`rootLayout` of the addon); this module converts it to elements.
 *
 * @module sitefile/layout
 */

import type * as React from "react";
import { native } from "../errors";
import { addon, envOf } from "../setup";
import { react } from "./render";

/** `DecoRootLayout` props. */
export interface DecoRootLayoutProps {
  /** The pages. */
  children?: React.ReactNode;
  /** The site's name in the editor (the live controls open it); default `PLATFORM_SITE_NAME`.
   * Without either, no live controls are rendered. */
  siteName?: string;
  /** `<html lang>` (default `en`). */
  lang?: string;
  /** `<html data-theme>` (component libraries' color variables need it); none by default. */
  theme?: string;
  /** `<body class>`. */
  bodyClassName?: string;
  /** Environment variables (default `process.env`), read at every render. */
  env?: Record<string, string | undefined>;
}

/** What the core says the layout renders besides the pages. */
interface LayoutExtras {
  analytics: { src: string; siteKey: string | null } | null;
  liveControls: string | null;
}

/** The root layout: `<html>`, `<head>` with the analytics tag when enabled, `<body>` with the
 * pages and the live-controls script (spec "Next.js binding": the root layout component). */
export function DecoRootLayout(props: DecoRootLayoutProps): React.ReactElement {
  const { createElement } = react();
  const env = JSON.stringify(envOf(props.env ?? process.env));
  const extras = JSON.parse(native(() => addon.rootLayout(env, props.siteName))) as LayoutExtras;
  const analytics = extras.analytics
    ? createElement("script", { defer: true, src: extras.analytics.src, "data-site-key": extras.analytics.siteKey ?? undefined })
    : null;
  const controls = extras.liveControls
    ? createElement("script", { "data-platform-live-controls": "", dangerouslySetInnerHTML: { __html: extras.liveControls } })
    : null;
  return createElement(
    "html",
    { lang: props.lang ?? "en", "data-theme": props.theme },
    createElement("head", null, analytics),
    createElement("body", { className: props.bodyClassName }, props.children, controls),
  );
}
