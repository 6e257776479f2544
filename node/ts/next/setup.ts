/**
 * `sitefile/setup`: `createNextSetup`, the one-call set-up of a Next.js App Router site. It
 * composes `createSiteSetup` (content from `.platform/blocks` and/or `blocks`, sections,
 * matchers, hooks) and `createAdminSetup` (schema, preview shell and wrapper) and returns
 * `ensureSetup()`, which the root layout, the page and the admin route await.
 *
 * ```ts
 * // lib/sitefile.ts
 * import { createNextSetup } from "sitefile/setup";
 * export const ensureSetup = createNextSetup({
 *   sections: { "./sections/Hero.tsx": () => import("../sections/Hero") },
 *   meta: () => import("../.platform/meta.gen.json").then((m) => m.default),
 * });
 * ```
 */

import * as path from "node:path";
import { SitefileError } from "../errors";
import { createAdminSetup, setRenderShell } from "../admin";
import {
  type Loader,
  type SectionModule,
  type Site,
  type SiteSetupOptions,
  addon,
  createSiteSetup,
} from "../setup";

export type { Loader } from "../setup";

/** What a section declares about itself (the generated section registry's `sectionMeta`). */
export interface SectionMetaEntry {
  /** `export const layout = true`: a layout section (output cached a few minutes, shared
   * across pages, keyed by device). */
  layout?: boolean;
  /** Never deferred. */
  eager?: boolean;
  /** Never deferred, even when the editor marks it lazy. */
  neverDefer?: boolean;
  /** Its cache profile. */
  cache?: string;
  /** Imported synchronously (see `syncComponents`). */
  sync?: boolean;
  /** Rendered only in the browser. */
  clientOnly?: boolean;
  /** Carries the page's SEO. */
  seo?: boolean;
  /** Exports a `LoadingFallback`. */
  hasLoadingFallback?: boolean;
}

/** Per-section conventions, keyed like `sections` (`./sections/<path>.tsx`) or by section key
 * (`site/sections/<path>.tsx`). */
export interface SectionConventions {
  /** What each section declares about itself. */
  meta?: Record<string, SectionMetaEntry>;
  /** Components imported synchronously (rendered without waiting for their module). */
  syncComponents?: Record<string, unknown>;
  /** Each deferred section's loading fallback (its `LoadingFallback` export). */
  loadingFallbacks?: Record<string, unknown>;
}

/** `createNextSetup` options (spec "`createNextSetup` options"). */
export interface NextSetupOptions {
  /** Section modules keyed `./sections/<path>.tsx` (registered as `site/sections/<path>.tsx`). */
  sections: Record<string, SectionModule>;
  /** Content (block name → block), laid over the blocks of `blocksDir`. */
  blocks?: Record<string, unknown>;
  /** The blocks directory read at set-up, relative to the working directory (the Next app's
   * root). Default `.platform/blocks`, or `false` when `blocks` is given. `false`: none. */
  blocksDir?: string | false;
  /** Per-section conventions from the generated section registry. */
  conventions?: SectionConventions;
  /** Loads the schema `/live/_meta` serves; without it `/live/_meta` answers 503. */
  meta?: () => unknown;
  /** The preview document's stylesheet and fonts. */
  renderShell?: { css?: string; fonts?: string[] };
  /** A React component wrapping every preview. */
  previewWrapper?: unknown;
  /** As in `createSiteSetup`. */
  productionOrigins?: string[];
  /** As in `createSiteSetup`. */
  customMatchers?: Array<() => void>;
  /** As in `createSiteSetup`. */
  onResolveError?: SiteSetupOptions["onResolveError"];
  /** As in `createSiteSetup`. */
  onDanglingReference?: SiteSetupOptions["onDanglingReference"];
  /** Extension: lazy-wrapped sections (`website/sections/Rendering/Lazy.tsx`) are deferred for
   * visitors that are not bots (the core decides; default `true`): `createDecoPage` renders
   * their loading fallback first and the section when it nears the viewport. */
  asyncRendering?: boolean;
  /** Runs last, with the loaded content (block name → block). */
  extend?: (blocks: Record<string, unknown>) => void | Promise<void>;
  /** Extension: loaders by registered key (as in `createSiteSetup`). */
  loaders?: Record<string, Loader>;
  /** Extension: loaders and actions invokable through `/platform/invoke` besides `loaders`. */
  getCommerceLoaders?: () => Record<string, Loader>;
  /** Extension: environment variables (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Extension: the name of the site in this process (default `"default"`). Every
   * `createNextSetup` of one name shares one set-up, the first to be asked for (see
   * {@link createNextSetup}). */
  name?: string;
}

/** `ensureSetup()`: sets the site up at the first call and answers the same site afterwards;
 * a rejected set-up is not remembered, so the next call tries again. */
export type EnsureSetup = (() => Promise<Site>) & {
  /** The conventions given to `createNextSetup`.
   * @internal */
  readonly conventions: SectionConventions;
  /** The preview stylesheet and fonts given to `createNextSetup` (the preview page links them).
   * @internal */
  readonly renderShell: { css?: string; fonts?: string[] };
};

const OWN_KEYS: ReadonlyArray<keyof NextSetupOptions> = [
  "sections",
  "blocks",
  "blocksDir",
  "conventions",
  "meta",
  "renderShell",
  "previewWrapper",
  "productionOrigins",
  "customMatchers",
  "onResolveError",
  "onDanglingReference",
  "extend",
  "asyncRendering",
  "loaders",
  "getCommerceLoaders",
  "env",
  "name",
];

function check(options: NextSetupOptions): void {
  if (options === null || typeof options !== "object") {
    throw new SitefileError("INVALID_CONFIG", "createNextSetup takes an options object");
  }
  for (const key of Object.keys(options)) {
    if (!(OWN_KEYS as string[]).includes(key)) {
      throw new SitefileError("INVALID_CONFIG", `createNextSetup: unknown option ${key}`);
    }
  }
  if (options.sections === null || typeof options.sections !== "object" || Array.isArray(options.sections)) {
    throw new SitefileError("INVALID_CONFIG", "createNextSetup: sections (section modules by ./sections/<path>.tsx) is required");
  }
  const fns = ["meta", "extend", "getCommerceLoaders"] as const;
  for (const name of fns) {
    if (options[name] !== undefined && typeof options[name] !== "function") {
      throw new SitefileError("INVALID_CONFIG", `createNextSetup: ${name} must be a function`);
    }
  }
  if (options.name !== undefined && (typeof options.name !== "string" || options.name === "")) {
    throw new SitefileError("INVALID_CONFIG", "createNextSetup: name is a non-empty string");
  }
  const dir = options.blocksDir;
  if (dir !== undefined && dir !== false && (typeof dir !== "string" || dir === "")) {
    throw new SitefileError("INVALID_CONFIG", "createNextSetup: blocksDir is a directory path or false");
  }
}

/** The section keys the conventions mark as layout sections. */
function layoutSections(conventions: SectionConventions | undefined): string[] {
  const keys: string[] = [];
  for (const [key, entry] of Object.entries(conventions?.meta ?? {})) {
    if (entry && entry.layout === true) keys.push(addon.sectionKey(key));
  }
  return keys;
}

async function setUp(options: NextSetupOptions): Promise<Site> {
  const dir = options.blocksDir ?? (options.blocks === undefined ? ".platform/blocks" : false);
  const site = createSiteSetup({
    sections: options.sections,
    blocks: options.blocks,
    blocksDir: dir === false ? false : path.resolve(dir),
    loaders: options.loaders,
    productionOrigins: options.productionOrigins,
    customMatchers: options.customMatchers,
    onResolveError: options.onResolveError,
    onDanglingReference: options.onDanglingReference,
    layoutSections: layoutSections(options.conventions),
    asyncRendering: options.asyncRendering ?? true,
    env: options.env,
  });
  if (options.meta || options.previewWrapper || options.getCommerceLoaders) {
    createAdminSetup(
      { meta: options.meta, previewWrapper: options.previewWrapper, getCommerceLoaders: options.getCommerceLoaders },
      site,
    );
  }
  if (options.renderShell) {
    const { css, fonts } = options.renderShell;
    setRenderShell({ css, fonts }, site);
  }
  if (options.extend) {
    await options.extend(JSON.parse(site.native.content().toString("utf8")) as Record<string, unknown>);
  }
  return site;
}

/** The set-ups of this process by name: the first asked for, or the one under way. */
const setups = new Map<string, Promise<Site>>();

/**
 * Sets up a Next.js site (spec `createNextSetup`). Nothing is read until the returned
 * `ensureSetup()` is first called; it registers once and answers the same site afterwards.
 * A set-up that fails (a missing blocks directory, bad content, a throwing `extend`) rejects
 * that call and is forgotten, so the next call tries again.
 *
 * Next evaluates the app's set-up module once per bundle layer (the route handlers' and the
 * pages'), so `createNextSetup` runs more than once in one server. The set-up is therefore
 * the process's: every `ensureSetup` of one `name` answers the site the first call set up, and
 * a reload through the admin route is seen by every page.
 */
export function createNextSetup(options: NextSetupOptions): EnsureSetup {
  check(options);
  const name = options.name ?? "default";
  const ensureSetup = (): Promise<Site> => {
    let setup = setups.get(name);
    if (setup === undefined) {
      const attempt = setUp(options);
      setup = attempt;
      setups.set(name, attempt);
      attempt.catch(() => {
        if (setups.get(name) === attempt) setups.delete(name);
      });
    }
    return setup;
  };
  return Object.assign(ensureSetup, { conventions: options.conventions ?? {}, renderShell: options.renderShell ?? {} });
}
