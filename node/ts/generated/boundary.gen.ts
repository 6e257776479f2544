// Generated from the Rust types of the JSON forms the core hands its hosts (ts-rs, by
// core/src/ts_types.rs): do not edit. Regenerate with
// `SITEFILE_BLESS=1 cargo test -p sitefile-core --lib ts_types`.

/**
 * The stable code of a core error. The strings never change once released.
 */
export type ErrorCode = "INVALID_JSON" | "INVALID_CONTENT" | "INVALID_REQUEST" | "INVALID_CONFIG" | "NOT_FOUND" | "IO" | "UNKNOWN_CALL" | "ALREADY_ANSWERED" | "FINISHED" | "HOOK_FAILED";

/**
 * The serde form of any core error: `{"code": "INVALID_JSON", "message": "..."}`.
 */
export type ErrorBody = { 
/**
 * The stable code.
 */
code: ErrorCode, 
/**
 * A readable message (never holds a secret).
 */
message: string, };

/**
 * One `onResolveError` event: something failed while resolving, the page still renders.
 */
export type ResolveErrorEvent = { 
/**
 * The `__resolveType` (or block name) that failed.
 */
resolveType: string, 
/**
 * Where it failed: `Commerce loader`, `Section resolution`, `cycle`, `depth`, ...
 */
context: string, 
/**
 * A human-readable explanation.
 */
message: string, };

/**
 * Why a page was cut short: past a bound of the resolver, every value is `null`.
 */
export type PageCut = { 
/**
 * Which bound: `size` (more values than the page may hold) or `depth` (nesting).
 */
reason: "size" | "depth", 
/**
 * The bound, in words.
 */
message: string, };

/**
 * Side effects of resolving one request.
 */
export type Effects = { 
/**
 * Complete `Set-Cookie` header values the response must carry.
 */
setCookies: Array<string>, 
/**
 * Warnings (unknown matcher, dangling reference, unregistered section, ...), deduplicated.
 */
warnings: Array<string>, 
/**
 * Request facets the resolved page depends on (`device`, `region`, `cohort`, `cookie`, ...),
 * sorted and deduplicated; hosts fold them into the cache key.
 */
varies: Array<string>, 
/**
 * `onResolveError` events, in the order they happened.
 */
errors?: Array<ResolveErrorEvent>, 
/**
 * A loader failed, or the page was cut short: the edge must not store this response.
 */
degraded?: true, 
/**
 * The page was cut short at a bound: what lies past it resolved to `null`.
 */
cut?: PageCut, };

/**
 * One section of a resolved page.
 */
export type ResolvedSection = { 
/**
 * The section key (`site/sections/Hero.tsx`).
 */
component: string, 
/**
 * Its resolved props: whatever the section's component declares, handed to it as they are.
 */
props: any, 
/**
 * Rendered first as a skeleton and loaded separately (async rendering only).
 */
deferred?: true, };

/**
 * A resolved page, in the stable format the command line prints.
 */
export type ResolvedPage = { 
/**
 * The page block name; `null` when no page serves the path.
 */
page: string | null, 
/**
 * Its path pattern.
 */
path: string | null, 
/**
 * The pattern's groups, still percent-encoded.
 */
params: Record<string, string>, 
/**
 * `true` when the page is the site's not-found page (its block says `"notFound": true`):
 * answer it with status 404. Absent otherwise.
 */
notFound?: true, 
/**
 * Site globals, then the page's sections.
 */
sections: Array<ResolvedSection>, 
/**
 * The page's SEO block, resolved (its shape is the site's content).
 */
seo: any, 
/**
 * Cookies, warnings, errors and what the page varies on.
 */
effects: Effects, 
/**
 * The content revision it was resolved from.
 */
revision: string, 
/**
 * The resolved value of a single-value resolution (a block, section or props: previews,
 * render, invoke); absent for pages.
 */
value?: unknown, };

/**
 * A loader the host must run.
 */
export type LoaderCall = { 
/**
 * Identifies the call in `Resolution::provide`.
 */
id: number, 
/**
 * The registered loader key.
 */
key: string, 
/**
 * Fully resolved props, with the page's path, URL and query injected.
 */
props: unknown, 
/**
 * A stale-while-revalidate refresh: the page already has the cached value; the answer
 * only refreshes the loader cache.
 */
refresh?: true, };

/**
 * What the host must do next.
 */
export type Step = { "step": "needLoaders", "value": Array<LoaderCall> } | { "step": "done", "value": ResolvedPage };

/**
 * The class of device a request comes from.
 */
export type Device = "mobile" | "tablet" | "desktop";

/**
 * What every section loader of a run gets as its third argument (`loader(props, request,
 * ctx)`, as in the reference): the request's device class (`{"device": "mobile"}`).
 */
export type SectionLoaderContext = { 
/**
 * The request's device class.
 */
device: Device, };

/**
 * The sections with their loaders' props, and what failed.
 */
export type SectionLoadersResult = { 
/**
 * The sections, in order, each with the props its loader returned (its own when the loader
 * failed).
 */
sections: Array<ResolvedSection>, 
/**
 * `errors` (one per failed loader) and `degraded` (a loader of a section that is not a
 * layout section failed: a host keeps the page out of shared caches, as the edge does when
 * it reads `X-Platform-Degraded: true`).
 */
effects: Effects, };

/**
 * What the host must do next.
 */
export type SectionStep = { "step": "needLoaders", "value": Array<LoaderCall> } | { "step": "done", "value": SectionLoadersResult };

/**
 * A named cache policy.
 */
export type CacheProfile = "static" | "product" | "listing" | "search" | "cart" | "private" | "none";

/**
 * The edge's decision for one request, as a host reads it.
 */
export type EdgePlan = { 
/**
 * What the edge does: redirect, serve an asset, bypass the cache, or cache the page.
 */
action: "redirect" | "asset" | "bypass" | "cache", 
/**
 * A redirect's status; `null` for the other actions.
 */
status: number | null, 
/**
 * The cache key; `null` when the response is not cached.
 */
key: string | null, 
/**
 * The cache profile.
 */
profile: CacheProfile, 
/**
 * Whether the response may be stored.
 */
cacheable: boolean, 
/**
 * Why it may not be, when it may not.
 */
reason: string | null, 
/**
 * Whether the request renders a draft.
 */
draft: "preview" | "normal", 
/**
 * The headers the response gets.
 */
headers: Array<[string, string]>, 
/**
 * Headers to set on the request before it goes on to the origin.
 */
originHeaders: Array<[string, string]>, };

/**
 * Which body a `ExchangeStep::Respond` sends.
 */
export type BodySource = "empty" | "stored" | "origin";

/**
 * A copy for the host to keep while it streams the origin's body: the body goes to the visitor
 * and into the store under `key`, up to the store's own per-entry cap.
 */
export type StoreCopy = { 
/**
 * The cache key.
 */
key: string, 
/**
 * The status stored.
 */
status: number, 
/**
 * The headers stored (the stored-at stamp included).
 */
headers: Array<[string, string]>, 
/**
 * Seconds the copy can still be served; past them a store may drop it.
 */
maxAge: number | null, };

/**
 * What the host does next for an exchange.
 */
export type ExchangeStep = { "step": "lookup", 
/**
 * The cache key.
 */
key: string, } | { "step": "askOrigin", 
/**
 * Headers to set on the forwarded request.
 */
headers: Array<[string, string]>, 
/**
 * The flight this request leads.
 */
lead: number | null, 
/**
 * How long to wait for the origin's head before giving up on it.
 */
deadlineMs: number | null, } | { "step": "follow", 
/**
 * The flight to wait for.
 */
flight: number, 
/**
 * How long to wait before giving up on it (a stored copy can stand in).
 */
deadlineMs: number | null, } | { "step": "delete", 
/**
 * The keys.
 */
keys: Array<string>, } | { "step": "refresh" } | { "step": "respond", 
/**
 * The status.
 */
status: number, 
/**
 * The headers.
 */
headers: Array<[string, string]>, 
/**
 * Which body.
 */
body: BodySource, 
/**
 * The copy to store as the body streams.
 */
store: StoreCopy | null, } | { "step": "settle", 
/**
 * The flight.
 */
flight: number, } | { "step": "fail", 
/**
 * What went wrong.
 */
message: string, } | { "step": "done" };

/**
 * How a pass ended.
 */
export type Synced = { "synced": "unchanged" } | { "synced": "loaded", 
/**
 * Its revision.
 */
revision: string, } | { "synced": "empty" } | { "synced": "failed", 
/**
 * Why.
 */
message: string, };
