/**
 * `createSiteSetup`: a site from a content map or a blocks directory, with its sections,
 * loaders, custom matchers and environment, over the native core.
 */

import * as fs from "node:fs";
import { SitefileError, messageOf, native } from "./errors";
import type * as Native from "../index";
import type { ExperimentsStore } from "./experiments";

// The engine, by the package's `#engine` import: the native addon's generated loader in Node
// (`node/index.js`, which falls back to the WebAssembly build where no addon is built), the
// WebAssembly build loaded from its compiled module in workerd (`sitefile.workerd.js` of
// `sitefile-wasm32-wasi`). One surface, typed by the committed `node/index.d.ts`.
// The WebAssembly loader is an ES module: a bundler's `require` of it is `{ default }`.
const engine = require("#engine") as typeof Native | { default: typeof Native };
const addon: typeof Native = "default" in engine ? engine.default : engine;

/** What a custom matcher sees (spec "Matcher context"). */
export interface MatcherContext {
  /** The full URL of the page. */
  url: string;
  /** Its path, as received. */
  path: string;
  /** The `User-Agent` header, or `""`. */
  userAgent: string;
  /** Cookies by name (the last of a repeated name). */
  cookies: Record<string, string>;
  /** Headers by lower-case name (the first of a repeated name). */
  headers: Record<string, string>;
  /** The request given to `resolveDecoPage`, as given. */
  request: RequestInput;
}

/** A custom matcher: `(rule, ctx) => boolean`, synchronous. */
export type Matcher = (rule: Record<string, unknown>, ctx: MatcherContext) => boolean;

/** A loader: called with its resolved props and the request being resolved. Invoked through
 * `/platform/invoke`, it gets a third argument whose `responseHeaders` it may write. */
// biome-ignore lint/suspicious/noExplicitAny: a loader declares its own props type; `unknown` would reject it (strictFunctionTypes)
export type Loader = (props: any, request: RequestInput, ctx?: InvokeContext) => unknown;

/** What an invoked loader or action may do to the response besides its value. */
export interface InvokeContext {
  /** Headers added to the invoke response (`Set-Cookie` values are each kept). */
  responseHeaders: Headers;
}

/** A section module: its default export (or the module itself) is the component. */
export type SectionModule = () => Promise<unknown> | unknown;

/** A request as `resolveDecoPage` takes it: a fetch `Request`, or its parts. */
export type RequestInput =
  | Request
  | {
      /** Absolute URL (a path is taken relative to `http://localhost`). */
      url: string;
      method?: string;
      /** Headers: an object, a `Headers`, or `[name, value]` pairs (names may repeat). */
      headers?: Record<string, string | string[] | undefined> | Headers | Array<[string, string]>;
      /** Cookies, as if sent in the `Cookie` header. */
      cookies?: Record<string, string>;
    };

/** The feature-flag adapter of a flag bridge (spec: both calls synchronous). */
export interface FeatureFlagAdapter {
  isFeatureEnabled(key: string): boolean;
  getFeatureFlagVariant?(key: string): string | null | undefined;
}

/** `createSiteSetup` options. */
export interface SiteSetupOptions {
  /** The content map (block name → block). Laid over `blocksDir`'s blocks when both are given. */
  blocks?: Record<string, unknown>;
  /** A site directory or blocks directory read at setup (`.platform/blocks/`, `blocks/`, a
   * directory of block files, or `.platform/blocks.gen.json`); `false` or absent: none. */
  blocksDir?: string | false;
  /** Watch `blocksDir` and serve its content again whenever a file in it changes (with
   * `blocks` laid over it), as `next dev` does for `createNextSetup`. A change that cannot be
   * served (a file saved half-way, bad JSON) is reported on standard error and the content
   * before it keeps serving. Default `false`. */
  watch?: boolean;
  /** Section modules keyed `./sections/<path>.tsx` (registered as `site/sections/<path>.tsx`),
   * or section keys. Absent: every key containing `/sections/` is a section. */
  sections?: Record<string, SectionModule> | string[];
  /** Loaders by registered key; the only loaders resolution calls. */
  loaders?: Record<string, Loader>;
  /** Functions that register custom matchers by calling {@link registerMatcher}. */
  customMatchers?: Array<() => void>;
  /** The feature-flag bridge: its matcher key (`<flag_vendor>/matchers/featureFlag.ts`) and
   * adapter. */
  featureFlags?: { matcherKey: string; adapter: FeatureFlagAdapter };
  /** Absolute URLs on these origins in content are made relative. */
  productionOrigins?: string[];
  /** Called when a loader or section fails during resolution. */
  onResolveError?: (error: Error, resolveType: string, context: string) => void;
  /** Called for a loader or action key nothing registered; its answer is the value. */
  onDanglingReference?: (resolveType: string) => unknown;
  /** Runs with the content (block name → block) at setup and again whenever it changes. */
  initPlatform?: (blocks: Record<string, unknown>) => void | Promise<void>;
  /** Sections whose resolved output is cached for a few minutes, shared across pages and keyed
   * by device (also {@link registerLayoutSections}). */
  layoutSections?: string[];
  /** Sections whose loader may fail without degrading the page: it renders without that
   * section's data and stays cacheable (also {@link registerNonCriticalSections}). */
  nonCriticalSections?: string[];
  /** Loaders kept in the loader cache: key → `{maxAgeMs, staleMs?}`. */
  cachedLoaders?: Record<string, { maxAgeMs: number; staleMs?: number }>;
  /** Mark lazy-wrapped sections deferred for visitors that are not bots. */
  asyncRendering?: boolean;
  /** Merge the Site block's global sections into every page (default `true`). */
  resolveGlobals?: boolean;
  /** Environment variables (`NODE_ENV`, `PLATFORM_*`, ...). Default: `process.env`. */
  env?: Record<string, string | undefined>;
  /** `createDecoWorkerEntry` options in their JSON spelling. */
  options?: Record<string, unknown>;
  /** The key-value store of experiment configurations, keyed by hostname (`sdk/experiments`). */
  experiments?: ExperimentsStore;
  /** Extension: the clock resolution and reloads use (default: the system clock). */
  now?: () => Date;
  /** Extension: the random source, called once per request (default: `Math.random`).
   *
   * - A number in `[0, 1)` seeds the request's deterministic generator with
   *   `floor(random() * 2^53)`: the same number gives the same draws.
   * - An array of numbers in `[0, 1)` is the request's draws themselves: random rules
   *   (`website/matchers/random.ts`) and weighted choices take them in order, and once they run
   *   out the generator continues seeded with 0. A test says "this visitor rolls 0.4" with
   *   `random: () => [0.4]`; with a sticky random rule the cohort then shows in the resolved
   *   page's `effects.setCookies` (`platform_segment`), and a request that carries that cookie
   *   keeps the cohort whatever it draws.
   *
   * Anything else throws `INVALID_CONFIG` when the request is read. */
  random?: () => number | readonly number[];
}

/** The response of a reload (spec "Reload request and response"). */
export interface ReloadResponse {
  ok: true;
  mode: "delta" | "full";
  previousBlockCount: number;
  newBlockCount: number;
  revision: string;
  kvWritten: boolean;
  timestamp: string;
}

/** The admin setup of a site (`createAdminSetup`).
 * @internal */
export interface AdminState {
  /** Loads the schema `/live/_meta` serves. */
  meta?: () => unknown;
  /** The schema being loaded, while it is. */
  metaLoading?: Promise<void>;
  /** Wraps every preview. */
  previewWrapper?: unknown;
  /** Loaders invokable through `/platform/invoke` besides the site's own. */
  invokeLoaders: ReadonlyMap<string, Loader>;
}

/** The addon.
 * @internal */
export { addon };

/** A custom matcher made selectable in the editor. */
export interface MatcherSchema {
  /** The matcher's key (`site/matchers/vip.ts`). */
  key: string;
  /** Its name in the editor. */
  title: string;
  /** The group it is listed under. */
  namespace: string;
  /** A JSON Schema object giving its settings a form. */
  propsSchema?: Record<string, unknown>;
}

const globalMatchers = new Map<string, Matcher>();
const globalLayoutSections = new Set<string>();
const globalNonCriticalSections = new Set<string>();
const globalMatcherSchemas = new Map<string, MatcherSchema>();
/** What a `customMatchers` function registers for the site being set up. */
let registering: {
  matchers: Map<string, Matcher>;
  layoutSections: Set<string>;
  nonCriticalSections: Set<string>;
  matcherSchemas: Map<string, MatcherSchema>;
} | null = null;

/**
 * Registers a custom matcher. Called from a `customMatchers` function it registers for the
 * site being set up; called anywhere else, for every site set up afterwards.
 */
export function registerMatcher(key: string, matcher: Matcher): void {
  if (typeof key !== "string" || key === "") {
    throw new SitefileError("INVALID_CONFIG", "registerMatcher: the key must be a non-empty string");
  }
  if (typeof matcher !== "function") {
    throw new SitefileError("INVALID_CONFIG", `registerMatcher: the matcher of ${key} is not a function`);
  }
  (registering?.matchers ?? globalMatchers).set(key, matcher);
}

/**
 * Makes a custom matcher selectable in the editor: `/live/_meta` lists it under
 * `manifest.blocks.matchers` with `propsSchema` as its settings form. Scoped like
 * {@link registerMatcher}.
 */
export function registerMatcherSchema(schema: MatcherSchema): void {
  if (schema === null || typeof schema !== "object" || [schema.key, schema.title, schema.namespace].some((v) => typeof v !== "string")) {
    throw new SitefileError("INVALID_CONFIG", "registerMatcherSchema takes {key, title, namespace, propsSchema?}");
  }
  const { key, title, namespace, propsSchema } = schema;
  (registering?.matcherSchemas ?? globalMatcherSchemas).set(key, { key, title, namespace, propsSchema });
}

/**
 * Marks sections as layout sections (their resolved output cached for a few minutes, shared
 * across pages, keyed by device). Called from a `customMatchers` function it applies to the
 * site being set up; anywhere else, to every site set up afterwards.
 */
export function registerLayoutSections(keys: string[]): void {
  if (!Array.isArray(keys) || keys.some((k) => typeof k !== "string")) {
    throw new SitefileError("INVALID_CONFIG", "registerLayoutSections takes an array of section keys");
  }
  for (const key of keys) (registering?.layoutSections ?? globalLayoutSections).add(key);
}

/**
 * Marks sections as non-critical: their loader may fail without degrading the page (it renders
 * without that section's data and stays cacheable). Scoped like {@link registerLayoutSections}.
 */
export function registerNonCriticalSections(keys: string[]): void {
  if (!Array.isArray(keys) || keys.some((k) => typeof k !== "string")) {
    throw new SitefileError("INVALID_CONFIG", "registerNonCriticalSections takes an array of section keys");
  }
  for (const key of keys) (registering?.nonCriticalSections ?? globalNonCriticalSections).add(key);
}

/** A site: content, setup, reload. Resolve pages with `resolveDecoPage`. */
export class Site {
  /** @internal */
  readonly native: Native.NativeSite;
  /** @internal */
  readonly matchers: ReadonlyMap<string, Matcher>;
  /** @internal */
  readonly loaders: ReadonlyMap<string, Loader>;
  /** @internal */
  readonly options: SiteSetupOptions;
  /** Section modules by registered key (`site/sections/Hero.tsx`).
   * @internal */
  readonly sectionModules: ReadonlyMap<string, SectionModule>;
  /** The custom matchers made selectable in the editor.
   * @internal */
  matcherSchemas: MatcherSchema[] = [];
  /** What `createAdminSetup` set for this site.
   * @internal */
  admin: AdminState = { invokeLoaders: new Map() };

  /** @internal */
  constructor(nativeSite: Native.NativeSite, matchers: Map<string, Matcher>, loaders: Map<string, Loader>, options: SiteSetupOptions) {
    this.native = nativeSite;
    this.matchers = matchers;
    this.loaders = loaders;
    this.options = options;
    const sections = options.sections;
    this.sectionModules = new Map(
      sections === undefined || Array.isArray(sections)
        ? []
        : Object.entries(sections).map(([key, module]) => [addon.sectionKey(key), module]),
    );
  }

  /** The content revision serving now. */
  get revision(): string {
    return this.native.revision;
  }

  /**
   * Applies a reload body (spec `POST /.sitefile`): `{blocks: {...}}` is a delta (`null`
   * deletes a block), any other object replaces all content. A string is taken as JSON text.
   * A refused body throws (`INVALID_JSON`, `INVALID_CONTENT`) and leaves the content serving.
   */
  reload(body: string | Record<string, unknown>): ReloadResponse {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    if (typeof text !== "string") {
      throw new SitefileError("INVALID_CONTENT", "the reload body is not a JSON object");
    }
    const now = this.now().getTime();
    const response = JSON.parse(native(() => this.native.reload(text, now, undefined))) as ReloadResponse;
    this.contentChanged();
    return response;
  }

  /** Reads `blocksDir` again, `blocks` laid over it, and serves it (what `watch` calls on a
   * change). Throws, and leaves the content serving, when it cannot be read or served.
   * @internal */
  reloadFromDir(): ReloadResponse {
    const dir = this.options.blocksDir;
    if (typeof dir !== "string") throw new SitefileError("INVALID_CONFIG", "the site has no blocksDir to read again");
    const overlay = this.options.blocks === undefined ? undefined : JSON.stringify(this.options.blocks);
    const now = this.now().getTime();
    const response = JSON.parse(native(() => this.native.reloadFromDir(dir, overlay, now))) as ReloadResponse;
    this.contentChanged();
    return response;
  }

  /** Tells `initPlatform` of the content (at setup and after every change).
   * @internal */
  contentChanged(): void {
    const init = this.options.initPlatform;
    if (!init) return;
    const report = (error: unknown) => console.error(`sitefile: initPlatform failed: ${String(error)}`);
    try {
      // The content changed either way: a failing hook (thrown or rejected) is reported, never
      // turned into a failed reload.
      const done: unknown = init(JSON.parse(this.native.content().toString("utf8")) as Record<string, unknown>);
      if (done instanceof Promise) done.catch(report);
    } catch (error) {
      report(error);
    }
  }

  /** @internal */
  now(): Date {
    const now = this.options.now ? this.options.now() : new Date();
    if (!(now instanceof Date) || Number.isNaN(now.getTime())) {
      throw new SitefileError("INVALID_CONFIG", `now() answered ${String(now)}, not a valid Date`);
    }
    return now;
  }
}

let current: Site | null = null;

/** The site most recently set up (what `resolveDecoPage` uses when given none). */
export function currentSite(): Site {
  if (current === null) {
    throw new SitefileError("INVALID_CONFIG", "no site is set up: call createSiteSetup first");
  }
  return current;
}

function sectionKeys(sections: SiteSetupOptions["sections"]): string[] | undefined {
  if (sections === undefined) return undefined;
  return Array.isArray(sections) ? sections : Object.keys(sections);
}

/** The set variables of `env` (unset ones dropped).
 * @internal */
export function envOf(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (typeof value === "string") out[name] = value;
  }
  return out;
}

/** Sets up a site (spec `createSiteSetup`); it becomes the site `resolveDecoPage` uses by default. */
export function createSiteSetup(options: SiteSetupOptions): Site {
  if (options === null || typeof options !== "object") {
    throw new SitefileError("INVALID_CONFIG", "createSiteSetup takes an options object");
  }
  const matchers = new Map(globalMatchers);
  const scope = {
    matchers: new Map<string, Matcher>(),
    layoutSections: new Set<string>(),
    nonCriticalSections: new Set<string>(),
    matcherSchemas: new Map<string, MatcherSchema>(),
  };
  registering = scope;
  try {
    for (const register of options.customMatchers ?? []) register();
  } finally {
    registering = null;
  }
  for (const [key, matcher] of scope.matchers) matchers.set(key, matcher);
  const layoutSections = [...new Set([...globalLayoutSections, ...scope.layoutSections, ...(options.layoutSections ?? [])])];
  const nonCriticalSections = [
    ...new Set([...globalNonCriticalSections, ...scope.nonCriticalSections, ...(options.nonCriticalSections ?? [])]),
  ];
  const loaders = new Map(Object.entries(options.loaders ?? {}));
  for (const [key, loader] of loaders) {
    if (typeof loader !== "function") {
      throw new SitefileError("INVALID_CONFIG", `the loader ${key} is not a function`);
    }
  }
  const setup = JSON.stringify({
    sections: sectionKeys(options.sections),
    loaders: [...loaders.keys()],
    customMatchers: [...matchers.keys()],
    featureFlagMatcher: options.featureFlags?.matcherKey,
    productionOrigins: options.productionOrigins,
    layoutSections,
    nonCriticalSections,
    cachedLoaders: options.cachedLoaders,
    asyncRendering: options.asyncRendering,
    resolveGlobals: options.resolveGlobals,
    env: envOf(options.env ?? process.env),
    options: options.options,
  });
  const blocks = options.blocks === undefined ? undefined : JSON.stringify(options.blocks);
  const dir = options.blocksDir;
  const nativeSite = native(() => {
    if (typeof dir === "string") return addon.NativeSite.fromDir(dir, setup, blocks);
    if (blocks === undefined) {
      throw new SitefileError("INVALID_CONFIG", "createSiteSetup needs `blocks` or `blocksDir`");
    }
    return addon.NativeSite.fromContent(blocks, setup);
  });
  const site = new Site(nativeSite, matchers, loaders, options);
  site.matcherSchemas = [...new Map([...globalMatcherSchemas, ...scope.matcherSchemas]).values()];
  site.contentChanged();
  if (options.watch === true && typeof dir === "string") watchBlocks(site, dir);
  current = site;
  return site;
}

/** How long a burst of file events settles before the directory is read again (an editor's
 * save is several events). */
const WATCH_SETTLE_MS = 50;

/** Serves `dir`'s content again whenever a file under it changes; the watcher keeps no process
 * alive. */
function watchBlocks(site: Site, dir: string): void {
  let timer: NodeJS.Timeout | undefined;
  const reload = () => {
    timer = undefined;
    try {
      const { revision } = site.reloadFromDir();
      console.error(`sitefile: ${dir} changed; serving revision ${revision.slice(0, 12)}`);
    } catch (error) {
      console.error(`sitefile: ${dir} changed but was not served (the content before it still is): ${messageOf(error)}`);
    }
  };
  const watcher = fs.watch(dir, { recursive: true, persistent: false }, () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(reload, WATCH_SETTLE_MS);
    timer.unref();
  });
  watcher.on("error", (error) => console.error(`sitefile: watching ${dir} stopped: ${messageOf(error)}`));
}
