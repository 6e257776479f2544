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
import { fetchDraftBody } from "./draft";
import { withDeadline } from "./deadline";
import { KvFastDeploy } from "./fast-deploy";
import { type ResolvedSection, drive, messageOf, requestJson } from "./resolve";
import { projectRenderJson, runSectionLoaders, sectionExports } from "./sections";
import type * as Native from "../index";
import type { EdgePlan, ExchangeStep } from "./generated/boundary.gen";

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

/** The host's own shared cache, where it has one: `caches.default` in workerd (Cloudflare
 * Workers, Miniflare). */
function hostCache(): WebCache | null {
  const caches = (globalThis as { caches?: { default?: WebCache } }).caches;
  return caches?.default ?? null;
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
  /** The cache storage of a request; `null` serves it without a cache. Default: the host's
   * shared cache where it has one (`caches.default` in workerd), else one in-memory storage
   * per entry. */
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

/** An in-memory {@link EdgeCacheStorage} holding at most `maxBytes` of bodies (default 64 MiB),
 * the least recently used copies evicted first, and a copy no longer than the `maxAgeSeconds`
 * it was put with (by `now`, default the wall clock). */
export function createMemoryCacheStorage(options: { maxBytes?: number; now?: () => number } = {}): EdgeCacheStorage {
  const maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { status: number; headers: Array<[string, string]>; body: Uint8Array; expiresAt: number }>();
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

/** The most bytes of one origin answer kept in the cache storage as it streams to the visitor:
 * past it the copy is given up (the visitor still gets the whole answer). */
const MAX_STORED_BYTES = 32 * 1024 * 1024;

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

/** What one drive of an exchange holds across its steps (and hands to its continuation). */
interface Driving {
  /** The copy the storage gave back. */
  stored?: Response | undefined;
  /** The origin's answer. */
  origin?: Response | undefined;
  /** Why the origin failed. */
  failure: unknown;
  /** The flight this exchange leads, until it settles. */
  leading: number | null;
}

/** The flights in the air of each site, by the core's flight id: a follower waits for its
 * flight's leader to settle. A flight the map does not hold has settled already. */
const flightsOf = new WeakMap<Site, Map<number, { settled: Promise<void>; settle: () => void }>>();

function flights(site: Site): Map<number, { settled: Promise<void>; settle: () => void }> {
  let map = flightsOf.get(site);
  if (!map) {
    map = new Map();
    flightsOf.set(site, map);
  }
  return map;
}

/** Hands `work` to the host's `ctx.waitUntil`, when it has one, so the host lets it finish. */
function keepAlive(ctx: ExecutionContext | undefined, work: Promise<unknown>): void {
  if (typeof ctx?.waitUntil === "function") ctx.waitUntil(work);
}

/** `body` cut off with an error past `limit` bytes. */
function bounded(body: ReadableStream<Uint8Array>, limit: number): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit) controller.error(new Error(`the copy is over ${limit} bytes`));
        else controller.enqueue(chunk);
      },
    }),
  );
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

/** Answers `?renderJson` / `?asJson`: at once (a preflight), or by fetching the draft the core
 * asks for (on a preview host), resolving the page and running its section loaders; the core
 * writes the finished form, draft headers and cookie included. */
async function answerPageJson(site: Site, pageJson: Native.NativePageJson, request: Request): Promise<Response> {
  if (pageJson.kind === "respond") return toResponse(native(() => pageJson.response()));
  const job = JSON.parse(pageJson.job ?? "{}") as { kind: "renderJson" | "asJson" };
  const draftFetch = pageJson.draftFetch;
  if (draftFetch !== null) pageJson.provideDraft(await fetchDraftBody(draftFetch));
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
    for (const [n, section] of finished.entries()) sections[written[n] as number] = section;
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
export function createDecoWorkerEntry(serverEntry: ServerEntry, options: WorkerEntryOptions = {}, site: Site = currentSite()): WorkerEntry {
  if (!serverEntry || typeof serverEntry.fetch !== "function") {
    throw new SitefileError("INVALID_CONFIG", "createDecoWorkerEntry needs a server entry with fetch(request)");
  }
  native(() => site.native.setWorkerOptions(optionsJson(options)));
  const memory = createMemoryCacheStorage({ now: () => site.now().getTime() });
  addOutboundUserAgent(() => site.native.outboundUserAgent(null));
  const inAir = flights(site);

  let shared: EdgeCacheStorage | undefined;
  const storageOf = (env: unknown, request: Request): EdgeCacheStorage | null => {
    if (options.cacheStorage) return options.cacheStorage(env, request);
    if (shared === undefined) {
      const host = hostCache();
      shared = host ? createWebCacheStorage(host) : memory;
    }
    return shared;
  };

  async function exchangeOf(request: Request, form: string, cache: boolean): Promise<Native.NativeEdgeExchange> {
    const url = new URL(request.url);
    const hints = {
      segment: options.buildSegment ? await options.buildSegment(request) : undefined,
      profile: options.detectProfile ? (options.detectProfile(url) ?? undefined) : undefined,
      nonce: [...randomBytes(16)],
    };
    return native(() => site.native.edgeExchange(form, JSON.stringify(hints), cache));
  }

  /** Runs a storage call; its failure is logged and answered by `fallback`, never the visitor's. */
  async function quietly<T>(what: string, call: () => Promise<T>, fallback: T): Promise<T> {
    try {
      return await call();
    } catch (error) {
      console.error(`sitefile: cache storage ${what} failed: ${messageOf(error)}`);
      return fallback;
    }
  }

  /**
   * Drives an edge exchange: does the I/O each step names and answers it. Returns the visitor's
   * response as soon as the exchange responds; what remains (keeping the streamed copy, waking
   * collapsed followers, a background refresh) goes on beside it, under `ctx.waitUntil`.
   */
  async function drive(
    exchange: Native.NativeEdgeExchange,
    request: Request,
    env: unknown,
    ctx: ExecutionContext | undefined,
    storage: EdgeCacheStorage | null,
    state: Driving = { failure: null, leading: null },
  ): Promise<Response | null> {
    const answer = (form: object): void => native(() => exchange.answer(JSON.stringify({ ...form, nowMs: site.now().getTime() })));
    let response: Response | null = null;
    let handedOn = false;
    const settle = (flight: number): void => {
      inAir.get(flight)?.settle();
      inAir.delete(flight);
      if (state.leading === flight) state.leading = null;
    };
    try {
      for (;;) {
        const step = JSON.parse(native(() => exchange.nextStep())) as ExchangeStep;
        switch (step.step) {
          case "lookup": {
            state.stored = await quietly("match", () => storage?.match(step.key) ?? Promise.resolve(undefined), undefined);
            const copy = state.stored;
            answer({ answer: "lookup", copy: copy ? { status: copy.status, headers: [...copy.headers] } : null });
            break;
          }
          case "askOrigin":
            if (step.lead !== null) {
              let settleFlight = (): void => {};
              const settled = new Promise<void>((resolve) => (settleFlight = resolve));
              inAir.set(step.lead, { settled, settle: settleFlight });
              state.leading = step.lead;
            }
            try {
              const onward = withRequestHeaders(request, step.headers);
              const origin = await withDeadline(Promise.resolve(serverEntry.fetch(onward, env, ctx)), step.deadlineMs);
              state.origin = origin;
              answer({ answer: "origin", status: origin.status, headers: [...origin.headers] });
            } catch (error) {
              state.failure = error;
              answer({ answer: "originFailed", reason: messageOf(error) });
            }
            break;
          case "follow":
            try {
              await withDeadline(inAir.get(step.flight)?.settled ?? Promise.resolve(), step.deadlineMs);
              answer({ answer: "followed" });
            } catch (error) {
              answer({ answer: "originFailed", reason: messageOf(error) });
            }
            break;
          case "delete":
            for (const key of step.keys) await quietly("delete", () => storage?.delete(key) ?? Promise.resolve(false), false);
            break;
          case "refresh": {
            const refresh = exchange.takeRefresh();
            // A refresh comes before the request was forwarded: its body is still unread.
            if (refresh && !request.bodyUsed) {
              // The refresh's own background work (keeping its copy) is part of it.
              const background: Array<Promise<unknown>> = [];
              const refreshCtx = { waitUntil: (work: Promise<unknown>) => void background.push(work) };
              const running = drive(refresh, request.clone(), env, refreshCtx, storage)
                .then(async (answered) => {
                  await answered?.body?.cancel();
                  await Promise.all(background);
                })
                .catch((error: unknown) => console.error(`sitefile: revalidating failed: ${messageOf(error)}`));
              keepAlive(ctx, running);
            }
            break;
          }
          case "respond": {
            const { stored, origin } = state;
            if (step.body !== "stored") await stored?.body?.cancel();
            if (step.body !== "origin") await origin?.body?.cancel();
            const body = step.body === "stored" ? (stored?.body ?? null) : step.body === "origin" ? (origin?.body ?? null) : null;
            if (!step.store) {
              response = withHeaders(body, step.status, step.headers);
              break;
            }
            const copy = step.store;
            const [visitor, kept] = body ? body.tee() : [null, null];
            response = withHeaders(visitor, step.status, step.headers);
            const keeping = quietly(
              "put",
              async () => {
                const stream = kept ? bounded(kept, MAX_STORED_BYTES) : null;
                const put = storage?.put(copy.key, withHeaders(stream, copy.status, copy.headers), {
                  maxAgeSeconds: copy.maxAge ?? undefined,
                });
                await put;
                return put !== undefined;
              },
              false,
            ).then((wasKept) => {
              answer({ answer: "kept", kept: wasKept });
              return drive(exchange, request, env, ctx, storage, state);
            });
            keepAlive(ctx, keeping);
            keeping.catch((error: unknown) => console.error(`sitefile: storing a copy failed: ${messageOf(error)}`));
            // The rest of the exchange (and the lead of its flight) goes on in `keeping`.
            handedOn = true;
            return response;
          }
          case "settle":
            settle(step.flight);
            break;
          case "fail":
            throw state.failure ?? new Error(step.message);
          case "done":
            return response;
        }
      }
    } finally {
      // Given up while leading (a thrown error): the followers must not wait for it.
      if (!handedOn && state.leading !== null) settle(state.leading);
    }
  }

  async function handle(request: Request, env: unknown, ctx?: ExecutionContext): Promise<Response> {
    const kv = KvFastDeploy.of(site, env);
    if (kv) await kv.beforeRequest((work) => keepAlive(ctx, work));
    const storage = storageOf(env, request);
    const admin = await answerAdmin(site, request, "edge", {
      deleteKeys: async (keys) => {
        if (storage) await Promise.all(keys.map((key) => storage.delete(key)));
      },
      reload: kv ? (outcome) => kv.reload(outcome) : undefined,
    });
    if (admin) return admin;
    // One request form (one clock reading, one random seed) for page JSON and the edge plan.
    const form = requestJson(request, site);
    const pageJson = native(() => site.native.pageJson(form));
    if (pageJson) return answerPageJson(site, pageJson, request);
    const exchange = await exchangeOf(request, form, storage !== null);
    if (options.proxyHandler) {
      const plan = JSON.parse(native(() => exchange.plan)) as EdgePlan;
      if (plan.action !== "redirect") {
        const onward = withRequestHeaders(request, plan.originHeaders);
        const proxied = await options.proxyHandler(onward, new URL(onward.url));
        if (proxied) return proxied;
      }
    }
    const response = await drive(exchange, request, env, ctx, storage);
    if (!response) throw new Error("the edge exchange ended without a response");
    return response;
  }

  return { fetch: (request, env, ctx) => handle(request, env, ctx) };
}
