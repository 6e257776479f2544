/**
 * `createDecoWorkerEntry`: the edge in front of a fetch-style server (a Hono, TanStack Start or
 * plain `(Request) => Response` app) on Node. The core decides everything — admin routes,
 * redirects, the cache key, profile, bypass, headers, what to store and how a stored copy ages;
 * this module runs the site's own functions, moves bytes between the visitor, the origin and the
 * cache storage, and keeps the clock.
 */

import { randomBytes } from "node:crypto";
import { SitefileError, native } from "./errors";
import { type Site, addon, currentSite } from "./setup";
import { answerAdmin, toResponse, withHeaders } from "./admin";
import { type ResolvedSection, drive, messageOf, requestJson } from "./resolve";
import { projectRenderJson, runSectionLoaders, sectionExports } from "./sections";
import type * as Native from "../index";

/** Where the edge keeps responses, by the core's cache key (a URL whose variant parts follow
 * `#`). {@link createMemoryCacheStorage} is the default; {@link createWebCacheStorage} adapts
 * a Web Cache (`caches.default`), which must not be passed as it is: it drops fragments. */
export interface EdgeCacheStorage {
  match(key: string): Promise<Response | undefined>;
  /** `maxAgeSeconds`: past it the copy is never served again, so it may be dropped. */
  put(key: string, response: Response, options?: { maxAgeSeconds?: number }): Promise<void>;
  delete(key: string): Promise<boolean>;
}

/** The Cache API as hosts offer it (`caches.default` on Cloudflare, `await caches.open(name)`
 * in Deno or a service worker). */
export interface WebCache {
  match(request: string): Promise<Response | undefined>;
  put(request: string, response: Response): Promise<void>;
  delete(request: string): Promise<boolean>;
}

/** Holds a stored copy's own `Cache-Control` while the Web Cache sees the storage lifetime. */
const KEPT_CACHE_CONTROL = "x-sitefile-cache-control";

/**
 * A Web Cache as edge cache storage. Each key is stored under the core's fragment-free form of
 * it (the Cache API drops fragments, which would mix a page's device and segment variants),
 * and each copy is kept as long as the edge can still serve it: the cache sees
 * `Cache-Control: public, max-age=<that>`, and the copy's own `Cache-Control` comes back on
 * `match`.
 */
export function createWebCacheStorage(cache: WebCache): EdgeCacheStorage {
  const url = (key: string): string => addon.storageUrl(key);
  return {
    async match(key) {
      const found = await cache.match(url(key));
      if (!found) return undefined;
      const headers = new Headers(found.headers);
      const own = headers.get(KEPT_CACHE_CONTROL);
      headers.delete(KEPT_CACHE_CONTROL);
      if (own === null) headers.delete("cache-control");
      else headers.set("cache-control", own);
      return new Response(found.body, { status: found.status, headers });
    },
    async put(key, response, options) {
      const headers = new Headers(response.headers);
      if (options?.maxAgeSeconds !== undefined) {
        const own = headers.get("cache-control");
        if (own !== null) headers.set(KEPT_CACHE_CONTROL, own);
        headers.set("cache-control", `public, max-age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`);
      }
      await cache.put(url(key), new Response(response.body, { status: response.status, headers }));
    },
    delete: (key) => cache.delete(url(key)),
  };
}

/** The server the edge sits in front of. */
export interface ServerEntry {
  fetch(request: Request, env?: unknown, ctx?: ExecutionContext): Response | Promise<Response>;
}

/** What a fetch host gives each request besides it: work that may outlive the response. */
export interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
}

/** `createDecoWorkerEntry` options (spec table): the functions below, and every other option in
 * its JSON spelling (`bypassPaths`, `cspMode`, `pageJsonCors`, …), which the core reads. */
export interface WorkerEntryOptions {
  /** The admin handlers; when present, admin routes are served (by this package's handlers). */
  admin?: unknown;
  /** The visitor's cache segment. */
  buildSegment?: (request: Request) => unknown;
  /** The cache profile of a URL, or `null` for the built-in rules. */
  detectProfile?: (url: URL) => string | null | undefined;
  /** The cache storage of a request; `null` serves it without a cache. Default: one in-memory
   * storage per entry. */
  cacheStorage?: (env: unknown, request: Request) => EdgeCacheStorage | null;
  /** Proxies paths to another origin: a response is returned as is, uncached. */
  proxyHandler?: (request: Request, url: URL) => Response | null | undefined | Promise<Response | null | undefined>;
  /** More query parameters left out of cache keys besides the built-in tracking ones (names
   * compared ignoring case; beyond the spec: the reference's `registerTrackingParam`). */
  trackingParams?: string[];
  /** Assets cached for a year: a RegExp or its source. */
  fingerprintedAssetPattern?: RegExp | string;
  /** `CDN-Cache-Control`: a policy name, or `(profile) => value | null`, asked once per profile. */
  cdnCacheControl?: string | ((profile: string) => string | null | undefined);
  [option: string]: unknown;
}

/** The worker: `{ fetch(request, env, ctx) }`. */
export interface WorkerEntry {
  fetch(request: Request, env?: unknown, ctx?: ExecutionContext): Promise<Response>;
}

/** The header holding when a copy was stored (milliseconds since the epoch); never served. */
const STORED_AT = "x-sitefile-stored-at";

/** An in-memory {@link EdgeCacheStorage} holding at most `maxBytes` of bodies (default 64 MiB),
 * the least recently used copies evicted first, and a copy no longer than the `maxAgeSeconds`
 * it was put with (by `now`, default the wall clock). */
export function createMemoryCacheStorage(options: { maxBytes?: number; now?: () => number } = {}): EdgeCacheStorage {
  const maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
  const now = options.now ?? Date.now;
  const entries = new Map<
    string,
    { status: number; headers: Array<[string, string]>; body: Uint8Array; expiresAt: number }
  >();
  let bytes = 0;
  const remove = (key: string): boolean => {
    const entry = entries.get(key);
    if (!entry) return false;
    bytes -= entry.body.byteLength;
    entries.delete(key);
    return true;
  };
  return {
    async match(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      entries.delete(key);
      if (now() >= entry.expiresAt) {
        bytes -= entry.body.byteLength;
        return undefined;
      }
      entries.set(key, entry);
      return new Response(entry.body.byteLength === 0 ? null : entry.body.slice(), {
        status: entry.status,
        headers: entry.headers,
      });
    },
    async put(key, response, putOptions) {
      const body = new Uint8Array(await response.arrayBuffer());
      remove(key);
      if (body.byteLength > maxBytes) return;
      const maxAge = putOptions?.maxAgeSeconds;
      const expiresAt = maxAge === undefined ? Infinity : now() + maxAge * 1000;
      entries.set(key, { status: response.status, headers: [...response.headers], body, expiresAt });
      bytes += body.byteLength;
      for (const oldest of entries.keys()) {
        if (bytes <= maxBytes) break;
        remove(oldest);
      }
    },
    async delete(key) {
      return remove(key);
    },
  };
}

interface Plan {
  action: "redirect" | "asset" | "bypass" | "cache";
  status: number | null;
  key: string | null;
  headers: Array<[string, string]>;
  /** Set on the request before it goes on (the visitor's location as cookies). */
  originHeaders: Array<[string, string]>;
}

interface Decision {
  originStatus: number;
  headers: Array<[string, string]>;
  storeHeaders: Array<[string, string]> | null;
  /** Seconds a stored copy can still be served. */
  storeMaxAge: number | null;
  evict: string[];
}

interface StoredCopy {
  state: "HIT" | "STALE" | "STALE-ERROR" | "MISS";
  headers: Array<[string, string]>;
}

/** `request` with `headers` set (replacing its own), or `request` itself when there are none;
 * its body goes along unread. */
function withRequestHeaders(request: Request, headers: Array<[string, string]>): Request {
  if (headers.length === 0) return request;
  const merged = new Headers(request.headers);
  for (const [name, value] of headers) merged.set(name, value);
  // A streamed body must be declared half-duplex to be handed on (fetch's rule).
  const init: RequestInit & { duplex?: "half" } = { headers: merged };
  if (request.body !== null) init.duplex = "half";
  return new Request(request, init);
}

/** What the origin answered, as the core reads it. */
interface OriginAnswer {
  status: number;
  headers: Array<[string, string]>;
}

/** An origin answer once the core decided: the visitor's response, and — when it was stored —
 * the copy, read whole, that collapsed followers are given. */
interface Answer {
  origin: OriginAnswer;
  stored: { status: number; copyHeaders: Array<[string, string]>; body: Uint8Array } | null;
  response: Response;
}

/** Where outgoing fetches get their User-Agent from: the worker entry created last. */
let userAgent: (() => string | null) | null = null;

/**
 * Adds a User-Agent to outgoing `fetch` calls that carry none (`outboundUserAgent`): the
 * process's `fetch` is wrapped once; the worker entry created last decides the value.
 */
function addOutboundUserAgent(source: () => string | null): void {
  const wrapped = userAgent !== null;
  userAgent = source;
  if (wrapped) return;
  const original = globalThis.fetch;
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    const agent = headers.has("user-agent") ? null : userAgent?.();
    if (!agent) return original(input, init);
    headers.set("user-agent", agent);
    return original(input, { ...init, headers });
  };
}

/** The options' JSON spelling for the core: functions answered as data or left to this module. */
function optionsJson(options: WorkerEntryOptions): string {
  const json: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(options)) {
    if (typeof value === "function") continue;
    // A RegExp by its source; `i`, the one flag a path pattern uses, as an inline flag.
    json[name] = value instanceof RegExp ? (value.flags.includes("i") ? `(?i)${value.source}` : value.source) : value;
  }
  if (options.admin !== undefined && options.admin !== null && options.admin !== false) json.admin = {};
  const cdn = options.cdnCacheControl;
  if (typeof cdn === "function") {
    const perProfile: Record<string, string | null> = {};
    for (const profile of addon.cacheProfiles()) perProfile[profile] = cdn(profile) ?? null;
    json.cdnCacheControl = perProfile;
  }
  return JSON.stringify(json);
}

/** The sections whose module exports `renderJson = false`. */
async function droppedSections(site: Site): Promise<string[]> {
  const modules = await sectionExports(site);
  return [...modules].filter(([, e]) => e.renderJson === false).map(([key]) => key);
}

/** Answers `?renderJson` / `?asJson`: at once (a preflight), or by resolving the page and
 * running its section loaders; the core writes the finished form. */
async function answerPageJson(site: Site, pageJson: Native.NativePageJson, request: Request): Promise<Response> {
  if (pageJson.kind === "respond") return toResponse(native(() => pageJson.response()));
  const job = JSON.parse(pageJson.job ?? "{}") as { kind: "renderJson" | "asJson" };
  const dropped = await droppedSections(site);
  const resolution = native(() => pageJson.resolve(dropped));
  const page = await drive(site, resolution, request);
  // Only the sections whose props the JSON writes are loaded (and projected).
  const written = native(() => resolution.pageJsonSections());
  const subset = written.map((i) => page.sections[i] as ResolvedSection);
  const loaded = await runSectionLoaders(subset, request, site);
  const finished = job.kind === "renderJson" ? await projectRenderJson(loaded, site) : loaded;
  let changed: string | null = null;
  if (finished !== subset) {
    const sections = [...page.sections];
    finished.forEach((section, n) => (sections[written[n] as number] = section));
    changed = JSON.stringify(sections);
  }
  return toResponse(native(() => resolution.pageJsonResponse(changed)));
}

/**
 * The edge in front of `serverEntry` (spec `createDecoWorkerEntry`): admin and purge routes,
 * redirects, the proxy, assets, bypasses and the cache — stale-while-revalidate,
 * stale-if-error, concurrent misses for one key collapsed into one origin request — every
 * decision the core's edge plan. The options are the site's worker options from now on.
 */
export function createDecoWorkerEntry(
  serverEntry: ServerEntry,
  options: WorkerEntryOptions = {},
  site: Site = currentSite(),
): WorkerEntry {
  if (!serverEntry || typeof serverEntry.fetch !== "function") {
    throw new SitefileError("INVALID_CONFIG", "createDecoWorkerEntry needs a server entry with fetch(request)");
  }
  native(() => site.native.setWorkerOptions(optionsJson(options)));
  const memory = createMemoryCacheStorage({ now: () => site.now().getTime() });
  addOutboundUserAgent(() => site.native.outboundUserAgent(null));
  const inflight = new Map<string, Promise<Answer>>();

  const storageOf = (env: unknown, request: Request): EdgeCacheStorage | null =>
    options.cacheStorage ? options.cacheStorage(env, request) : memory;

  async function planOf(request: Request, form: string): Promise<Native.NativeEdgePlan> {
    const url = new URL(request.url);
    const hints = {
      segment: options.buildSegment ? await options.buildSegment(request) : undefined,
      profile: options.detectProfile ? (options.detectProfile(url) ?? undefined) : undefined,
      nonce: [...randomBytes(16)],
    };
    return native(() => site.native.edgePlan(form, JSON.stringify(hints)));
  }

  /** Runs a storage call without letting its failure fail the visitor's request. */
  async function quietly(what: string, call: () => Promise<unknown>): Promise<void> {
    try {
      await call();
    } catch (error) {
      console.error(`sitefile: cache storage ${what} failed: ${messageOf(error)}`);
    }
  }

  /** Asks the origin. What the core says to store is read whole and stored; anything else
   * streams through to the visitor unread. Keys the purge index evicted are deleted. */
  async function fromOrigin(
    plan: Native.NativeEdgePlan,
    key: string | null,
    request: Request,
    env: unknown,
    ctx: ExecutionContext | undefined,
    storage: EdgeCacheStorage | null,
  ): Promise<Answer> {
    const response = await serverEntry.fetch(request, env, ctx);
    // The stored-at header is this module's own; an origin's copy of it is never trusted.
    const origin = { status: response.status, headers: [...response.headers].filter(([n]) => n.toLowerCase() !== STORED_AT) };
    const decision = JSON.parse(native(() => plan.afterOrigin(JSON.stringify(origin)))) as Decision;
    if (storage) {
      for (const evicted of decision.evict) await quietly("delete", () => storage.delete(evicted));
    }
    if (!storage || key === null || decision.storeHeaders === null) {
      return { origin, stored: null, response: withHeaders(response.body, decision.originStatus, decision.headers) };
    }
    const body = new Uint8Array(await response.arrayBuffer());
    const copyHeaders = decision.storeHeaders;
    const stamped: Array<[string, string]> = [...copyHeaders, [STORED_AT, String(site.now().getTime())]];
    const kept = { maxAgeSeconds: decision.storeMaxAge ?? undefined };
    await quietly("put", () => storage.put(key, withHeaders(body.slice(), decision.originStatus, stamped), kept));
    const stored = { status: decision.originStatus, copyHeaders, body };
    return { origin, stored, response: withHeaders(body, decision.originStatus, decision.headers) };
  }

  /** {@link fromOrigin}, one origin request per key at a time. A follower shares the leader's
   * answer only when it was stored, and then gets the stored copy's headers, never the
   * leader's own (its cookies); otherwise it asks the origin itself. */
  async function collapsed(
    plan: Native.NativeEdgePlan,
    key: string,
    request: Request,
    env: unknown,
    ctx: ExecutionContext | undefined,
    storage: EdgeCacheStorage,
  ): Promise<Answer> {
    const running = inflight.get(key);
    if (running) {
      const shared = await running.catch(() => null);
      if (shared?.stored) {
        const { status, copyHeaders, body } = shared.stored;
        return { ...shared, response: withHeaders(body.slice(), status, copyHeaders) };
      }
      return fromOrigin(plan, key, request, env, ctx, storage);
    }
    const leader = fromOrigin(plan, key, request, env, ctx, storage);
    inflight.set(key, leader);
    try {
      return await leader;
    } finally {
      inflight.delete(key);
    }
  }

  function serveStored(stored: Response, copy: StoredCopy): Response {
    const headers = new Headers(stored.headers);
    headers.delete(STORED_AT);
    for (const [name, value] of copy.headers) headers.set(name, value);
    return new Response(stored.body, { status: stored.status, headers });
  }

  async function throughCache(
    plan: Native.NativeEdgePlan,
    key: string,
    request: Request,
    env: unknown,
    ctx: ExecutionContext | undefined,
    storage: EdgeCacheStorage,
  ): Promise<Response> {
    let stored: Response | undefined;
    await quietly("match", async () => {
      stored = await storage.match(key);
    });
    // A copy whose stored time cannot be read counts as too old (the core answers MISS).
    const storedAt = Number(stored?.headers.get(STORED_AT));
    const age = Number.isFinite(storedAt) ? Math.max(0, (site.now().getTime() - storedAt) / 1000) : Infinity;
    if (stored) {
      const copy = JSON.parse(native(() => plan.storedCopy(age))) as StoredCopy;
      if (copy.state === "HIT") return serveStored(stored, copy);
      if (copy.state === "STALE") {
        const refresh = collapsed(plan, key, request.clone(), env, ctx, storage)
          .then((answer) => answer.response.body?.cancel())
          .catch((error: unknown) => {
            console.error(`sitefile: revalidating ${key} failed: ${messageOf(error)}`);
          });
        if (ctx) ctx.waitUntil(refresh);
        return serveStored(stored, copy);
      }
    }
    let answer: Answer | null = null;
    let failure: unknown = null;
    try {
      answer = await collapsed(plan, key, request, env, ctx, storage);
    } catch (error) {
      failure = error;
    }
    if (stored) {
      const origin = answer ? JSON.stringify(answer.origin) : null;
      const copy = JSON.parse(native(() => plan.storedCopyAfterOrigin(age, origin))) as StoredCopy;
      if (copy.state === "STALE-ERROR") {
        await answer?.response.body?.cancel();
        return serveStored(stored, copy);
      }
    }
    if (!answer) throw failure;
    return answer.response;
  }

  async function handle(request: Request, env: unknown, ctx?: ExecutionContext): Promise<Response> {
    const storage = storageOf(env, request);
    const admin = await answerAdmin(site, request, "edge", async (keys) => {
      if (storage) await Promise.all(keys.map((key) => storage.delete(key)));
    });
    if (admin) return admin;
    // One request form (one clock reading, one random seed) for page JSON and the edge plan.
    const form = requestJson(request, site);
    const pageJson = native(() => site.native.pageJson(form));
    if (pageJson) return answerPageJson(site, pageJson, request);
    const planned = await planOf(request, form);
    const plan = JSON.parse(planned.json) as Plan;
    if (plan.action === "redirect") return withHeaders(null, plan.status ?? 302, plan.headers);
    const onward = withRequestHeaders(request, plan.originHeaders);
    if (options.proxyHandler) {
      const proxied = await options.proxyHandler(onward, new URL(onward.url));
      if (proxied) return proxied;
    }
    if (plan.action !== "bypass" && plan.key !== null && storage) {
      return throughCache(planned, plan.key, onward, env, ctx, storage);
    }
    return (await fromOrigin(planned, null, onward, env, ctx, null)).response;
  }

  return { fetch: (request, env, ctx) => handle(request, env, ctx) };
}
