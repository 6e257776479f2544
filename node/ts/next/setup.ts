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
 *
 * @module sitefile/setup
 */

import * as path from "node:path";
import { SitefileError } from "../errors";
import { createAdminSetup, setRenderShell } from "../admin";
import { setSyncComponents } from "../sections";
import { type Loader, type SectionModule, type SiteSetupOptions, Site, addon, createSiteSetup } from "../setup";

export type { Loader } from "../setup";

/** What a section declares about itself (the generated section registry's `conventions.meta`,
 * read from the section's own exports). */
export interface SectionMetaEntry {
  /** `export const layout = true`: a layout section (spec "Section": its resolved output
   * cached a few minutes, shared across pages, keyed by device). */
  layout?: boolean;
  /** The module exports a `LoadingFallback` (what `npx sitefile generate` read). Descriptive:
   * a deferred section's fallback is `conventions.loadingFallbacks[<key>]`, else that
   * export, whether or not this is set. */
  hasLoadingFallback?: boolean;
}

/** Per-section conventions, keyed like `sections` (`./sections/<path>.tsx`) or by section key
 * (`site/sections/<path>.tsx`). */
export interface SectionConventions {
  /** What each section declares about itself. */
  meta?: Record<string, SectionMetaEntry>;
  /** Components imported synchronously: rendered without importing their `sections` module
   * (which still supplies the section's `loader`, `renderJson` and `LoadingFallback`). */
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
  /** `cmsRouteConfig`'s `resolveGlobals`: merge the Site block's global sections and theme
   * into every page (default `true`). Set for the site, so every page of the app follows it. */
  resolveGlobals?: boolean;
  /** Sections whose loader may fail without degrading the page (also
   * `registerNonCriticalSections` in a `customMatchers` function). */
  nonCriticalSections?: string[];
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
   * `createNextSetup` of one name shares one site's content, set up by the first to be asked
   * for (see {@link createNextSetup}). */
  name?: string;
}

/** `ensureSetup()`: sets the site up at the first call and answers the same site afterwards
 * (its content shared with every set-up of its name, its modules this one's); a rejected
 * set-up is not remembered, so the next call tries again. */
export type EnsureSetup = (() => Promise<Site>) & {
  /** The conventions given to `createNextSetup`.
   * @internal */
  readonly conventions: SectionConventions;
  /** The preview stylesheet and fonts given to `createNextSetup` (the preview page links them).
   * @internal */
  readonly renderShell: { css?: string; fonts?: string[] };
};

/** Every option `createNextSetup` takes; `satisfies` makes the compiler refuse a list that
 * misses one of `NextSetupOptions`. */
const OWN_KEYS = {
  sections: true,
  blocks: true,
  blocksDir: true,
  conventions: true,
  meta: true,
  renderShell: true,
  previewWrapper: true,
  productionOrigins: true,
  customMatchers: true,
  onResolveError: true,
  onDanglingReference: true,
  resolveGlobals: true,
  nonCriticalSections: true,
  extend: true,
  asyncRendering: true,
  loaders: true,
  getCommerceLoaders: true,
  env: true,
  name: true,
} satisfies Record<keyof NextSetupOptions, true>;

function check(options: NextSetupOptions): void {
  if (options === null || typeof options !== "object") {
    throw new SitefileError("INVALID_CONFIG", "createNextSetup takes an options object");
  }
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(OWN_KEYS, key)) {
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

/** Binds the calling bundle's modules to `site`: the schema loader, the preview wrapper, the
 * invokable commerce loaders and the synchronous components. */
function bindModules(site: Site, options: NextSetupOptions): void {
  if (options.meta || options.previewWrapper || options.getCommerceLoaders) {
    createAdminSetup({ meta: options.meta, previewWrapper: options.previewWrapper, getCommerceLoaders: options.getCommerceLoaders }, site);
  }
  setSyncComponents(site, options.conventions?.syncComponents ?? {});
}

/** Sets up the site of a name: content, the core's settings, then this bundle's modules. */
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
    nonCriticalSections: options.nonCriticalSections,
    asyncRendering: options.asyncRendering ?? true,
    resolveGlobals: options.resolveGlobals,
    env: options.env,
    // `next dev` (NODE_ENV=development): an edited block file is served without a restart.
    watch: (options.env ?? process.env).NODE_ENV === "development",
  });
  bindModules(site, options);
  if (options.renderShell) {
    const { css, fonts } = options.renderShell;
    setRenderShell({ css, fonts }, site);
  }
  if (options.extend) {
    await options.extend(JSON.parse(site.native.content().toString("utf8")) as Record<string, unknown>);
  }
  return site;
}

/** `shared` as another bundle sees it: the same content, reloads and core settings, with this
 * bundle's sections, loaders, hooks and admin modules. */
function bundleSite(shared: Site, options: NextSetupOptions): Site {
  const site = new Site(shared.native, new Map(shared.matchers), new Map(Object.entries(options.loaders ?? {})), {
    ...shared.options,
    sections: options.sections,
    loaders: options.loaders,
    onResolveError: options.onResolveError,
    onDanglingReference: options.onDanglingReference,
  });
  site.matcherSchemas = shared.matcherSchemas;
  bindModules(site, options);
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
 * Next evaluates the app's set-up module once per bundle (the middleware's, the route
 * handlers', the pages'), so `createNextSetup` runs more than once in one server, each time
 * with that bundle's copies of the app's modules. The content is therefore the process's:
 * every `ensureSetup` of one `name` answers a site over the content the first call set up,
 * so a reload through the admin route is seen by every page. What renders and runs is each
 * bundle's own: its `ensureSetup` answers a site with its `sections`, `conventions`,
 * `loaders`, `previewWrapper`, `getCommerceLoaders`, `meta`, `onResolveError` and
 * `onDanglingReference` (a page never renders the middleware's copy of a client component).
 * The core's settings (`productionOrigins`, `asyncRendering`, `resolveGlobals`, layout
 * conventions, `env`), the custom matchers (synchronous functions of a rule and a request)
 * and `extend` are the first set-up's.
 */
export function createNextSetup(options: NextSetupOptions): EnsureSetup {
  check(options);
  const name = options.name ?? "default";
  let own: Promise<Site> | undefined;
  let seen: { shared: Site; site: Site } | undefined;
  const ensureSetup = async (): Promise<Site> => {
    let setup = setups.get(name);
    if (setup === undefined) {
      const attempt = setUp(options);
      setup = own = attempt;
      setups.set(name, attempt);
      attempt.catch(() => {
        if (setups.get(name) === attempt) setups.delete(name);
      });
    }
    const shared = await setup;
    if (seen?.shared !== shared) seen = { shared, site: setup === own ? shared : bundleSite(shared, options) };
    return seen.site;
  };
  return Object.assign(ensureSetup, { conventions: options.conventions ?? {}, renderShell: options.renderShell ?? {} });
}
