/**
 * `sitefile/config`: the `next.config` wrapper.
 *
 * ```js
 * // next.config.mjs
 * import { withSitefile } from "sitefile/config";
 * export default withSitefile({ reactStrictMode: true });
 * ```
 *
 * It adds:
 * - the rewrites of the public admin paths onto the catch-all route (`/.sitefile`,
 *   `/live/_meta`, `/live/previews/*`, which Next cannot name as route folders), before the
 *   app's own;
 * - `sitefile` to `serverExternalPackages`, and for webpack an `externals` entry, so the
 *   native addon is loaded by Node at run time and never bundled; `turbopack: {}` when the app
 *   sets none (Next 16 refuses a `webpack` hook without a `turbopack` key);
 * - response headers that keep draft-preview renders (`?__draft=` or the `__platform_draft`
 *   cookie) out of shared caches and search indexes, and the `frame-ancestors` policy that lets
 *   the editor frame pages, before the app's own headers;
 * - the site's content (`.platform/blocks/**`, `.platform/blocks.gen.json`) in the server
 *   output of production builds, so a standalone or serverless deployment carries what the
 *   set-up reads; or, with the `fastDeploy` option on (`true`, or `"auto"` when
 *   `PLATFORM_SEEDED_DEPLOY` is set), out of it, for deployments whose content comes from a
 *   seeded store.
 *
 * @module sitefile/config
 */

import { buildLeavesContentOut } from "../fast-deploy";
import { addon } from "../setup";

/** The package kept external to server bundles. */
const PACKAGE = "sitefile";

/** A rewrite or redirect `has`/`missing` condition. */
export interface RouteHas {
  type: "header" | "cookie" | "query" | "host";
  key?: string;
  value?: string;
}

/** One rewrite. */
export interface Rewrite {
  source: string;
  destination: string;
  basePath?: false;
  locale?: false;
  has?: RouteHas[];
  missing?: RouteHas[];
}

/** The object form of `rewrites()`. */
export interface RewritesObject {
  beforeFiles?: Rewrite[];
  afterFiles?: Rewrite[];
  fallback?: Rewrite[];
}

/** One `headers()` rule. */
export interface HeaderRule {
  source: string;
  headers: Array<{ key: string; value: string }>;
  basePath?: false;
  locale?: false;
  has?: RouteHas[];
  missing?: RouteHas[];
}

/** What webpack's `externals` takes (a list of objects, strings and functions). */
type Externals = unknown;

/** The part of webpack's configuration the wrapper touches. */
export interface WebpackConfig {
  externals?: Externals;
  [key: string]: unknown;
}

/** The context Next passes to the `webpack` hook. */
export interface WebpackContext {
  isServer: boolean;
  [key: string]: unknown;
}

/** The part of a Next.js configuration the wrapper reads and writes; every other key is kept. */
export interface NextConfig {
  rewrites?: () => Promise<Rewrite[] | RewritesObject> | Rewrite[] | RewritesObject;
  headers?: () => Promise<HeaderRule[]> | HeaderRule[];
  transpilePackages?: string[];
  serverExternalPackages?: string[];
  webpack?: ((config: WebpackConfig, context: WebpackContext) => WebpackConfig) | null;
  turbopack?: Record<string, unknown>;
  outputFileTracingIncludes?: Record<string, string[]>;
  outputFileTracingExcludes?: Record<string, string[]>;
  [key: string]: unknown;
}

/** A Next.js configuration: an object, or a function of the phase answering one. */
export type NextConfigInput = NextConfig | ((phase: string, context: { defaultConfig: NextConfig }) => NextConfig | Promise<NextConfig>);

/** What the wrapper takes besides the Next.js configuration. */
export interface SitefileConfigOptions {
  /** The build plugin option `fastDeploy` (spec): `true` leaves the site's content out of the
   * server output of production builds, `false` keeps it in, `"auto"` (the default) leaves it
   * out only when `PLATFORM_SEEDED_DEPLOY` is set at build time. Without the content in the
   * output, the deployment's set-up gets it elsewhere (`blocks` read from its store, or a full
   * reload through `POST /.sitefile`). */
  fastDeploy?: boolean | "auto";
}

/** The content files a production build's server output carries (or, with Fast Deploy, not),
 * relative to the app's directory. */
export const SITEFILE_CONTENT_FILES: readonly string[] = Object.freeze([".platform/blocks/**", ".platform/blocks.gen.json"]);

/** The output-tracing route glob that matches every route. */
const EVERY_ROUTE = "/**";

/** The public admin paths rewritten onto `app/platform/[[...platform]]/route.ts` (spec
 * "Next.js binding"). */
export const SITEFILE_REWRITES: readonly Rewrite[] = Object.freeze([
  { source: "/.sitefile", destination: "/platform/sitefile" },
  { source: "/live/_meta", destination: "/platform/meta" },
  { source: "/live/previews/:path*", destination: "/platform/previews/:path*" },
]);

/** The draft-preview signals and headers, as the core decides them. */
const DRAFT = addon.draftSignals();

/** The draft-preview signals: the query parameter and the cookie it sets. */
const DRAFT_SIGNALS: readonly RouteHas[] = [
  { type: "query", key: DRAFT.param },
  { type: "cookie", key: DRAFT.cookie },
];

/** The headers of a draft-preview render (the core's draft decision): never stored by a shared
 * cache, varied by cookie, never indexed. */
const DRAFT_HEADERS = DRAFT.headers.map(([key, value]) => ({ key: key as string, value: value as string }));

/** The header rules that keep draft-preview renders out of shared caches and search indexes:
 * one for `?__draft=`, one for the `__platform_draft` cookie. */
export const SITEFILE_DRAFT_HEADERS: readonly HeaderRule[] = Object.freeze(
  DRAFT_SIGNALS.map((signal) => ({ source: "/:path*", has: [signal], headers: DRAFT_HEADERS })),
);

/** The header rule that lets the editor frame every page: `Content-Security-Policy:
 * frame-ancestors 'self'` and the editor's origins (the core's default policy). An app rule
 * setting its own `Content-Security-Policy` comes later and replaces it. */
export const SITEFILE_FRAME_HEADERS: readonly HeaderRule[] = Object.freeze([
  { source: "/:path*", headers: [{ key: "Content-Security-Policy", value: addon.editorFrameAncestors() }] },
]);

function copyRules<T>(rules: readonly T[]): T[] {
  return rules.map((rule) => JSON.parse(JSON.stringify(rule)) as T);
}

/** Whether webpack's request names this package or one of its subpaths. */
function isPackageRequest(request: unknown): request is string {
  return typeof request === "string" && (request === PACKAGE || request.startsWith(`${PACKAGE}/`));
}

/** A webpack `externals` function keeping `sitefile` and `sitefile/*` as Node `require`s. */
function externalize(data: { request?: string }, callback: (error?: Error | null, result?: string) => void): void {
  if (isPackageRequest(data.request)) callback(null, `commonjs ${data.request}`);
  else callback();
}

/** `rules` with the content files added under the glob matching every route. */
function withContentFiles(rules: Record<string, string[]> | undefined): Record<string, string[]> {
  const own = rules?.[EVERY_ROUTE] ?? [];
  return { ...rules, [EVERY_ROUTE]: [...own, ...SITEFILE_CONTENT_FILES.filter((file) => !own.includes(file))] };
}

function wrap(config: NextConfig, options: SitefileConfigOptions): NextConfig {
  if (config === null || typeof config !== "object") {
    throw new TypeError("withSitefile takes a Next.js configuration object");
  }
  if (options === null || typeof options !== "object") {
    throw new TypeError("withSitefile takes its options as an object");
  }
  const content = buildLeavesContentOut(options.fastDeploy)
    ? { outputFileTracingExcludes: withContentFiles(config.outputFileTracingExcludes) }
    : { outputFileTracingIncludes: withContentFiles(config.outputFileTracingIncludes) };
  const userRewrites = config.rewrites;
  const userHeaders = config.headers;
  const userWebpack = config.webpack;
  // A package both transpiled and external is refused by Next; sitefile ships compiled
  // JavaScript and must stay external (its native addon cannot be bundled).
  const transpilePackages = (config.transpilePackages ?? []).filter((name) => name !== PACKAGE);
  const serverExternalPackages = [...new Set([...(config.serverExternalPackages ?? []), PACKAGE])];
  return {
    ...config,
    transpilePackages,
    serverExternalPackages,
    turbopack: config.turbopack ?? {},
    ...content,
    async rewrites() {
      const own = copyRules(SITEFILE_REWRITES);
      const user = userRewrites ? await userRewrites() : [];
      if (Array.isArray(user)) return [...own, ...user];
      return { ...user, beforeFiles: [...own, ...(user.beforeFiles ?? [])] };
    },
    async headers() {
      const user = userHeaders ? await userHeaders() : [];
      return [...copyRules(SITEFILE_FRAME_HEADERS), ...copyRules(SITEFILE_DRAFT_HEADERS), ...user];
    },
    webpack(webpackConfig: WebpackConfig, context: WebpackContext): WebpackConfig {
      const out = userWebpack ? userWebpack(webpackConfig, context) : webpackConfig;
      if (context.isServer) {
        const externals = out.externals;
        out.externals = [externalize, ...(Array.isArray(externals) ? externals : externals === undefined ? [] : [externals])];
      }
      return out;
    },
  };
}

/**
 * Wraps a Next.js configuration for sitefile (spec "The config wrapper"): the admin rewrites
 * and draft-preview headers are placed before the app's own, the package is kept external to
 * server bundles on webpack and Turbopack, the content is traced into the server output (or,
 * with `fastDeploy` on, kept out of it), and every other setting is kept.
 */
export function withSitefile(config?: NextConfig, options?: SitefileConfigOptions): NextConfig;
export function withSitefile(
  config: (phase: string, context: { defaultConfig: NextConfig }) => NextConfig | Promise<NextConfig>,
  options?: SitefileConfigOptions,
): (phase: string, context: { defaultConfig: NextConfig }) => Promise<NextConfig>;
export function withSitefile(
  config: NextConfigInput = {},
  options: SitefileConfigOptions = {},
): NextConfig | ((phase: string, context: { defaultConfig: NextConfig }) => Promise<NextConfig>) {
  if (typeof config === "function") {
    return async (phase, context) => wrap(await config(phase, context), options);
  }
  return wrap(config, options);
}
