/**
 * `resolveDecoPage`: resolves the page for a request. The core decides everything; this module
 * moves the request in, runs each round's loaders concurrently, calls custom matchers when the
 * core asks, and parses the finished page.
 */

import { SitefileError, messageOf, native } from "./errors";
import { experimentScope } from "./experiments";
import { type MatcherContext, type RequestInput, Site, currentSite } from "./setup";
import type { HostCallbacks, NativeDraft, NativeResolution } from "../index";
import type { LoaderCall, ResolveErrorEvent, ResolvedPage, Step } from "./generated/boundary.gen";

// The JSON forms the core hands over, generated from its Rust types (core/src/ts_types.rs).
export type { Effects, PageCut, ResolveErrorEvent, ResolvedPage, ResolvedSection } from "./generated/boundary.gen";

function isFetchRequest(input: unknown): input is Request {
  return typeof Request !== "undefined" && input instanceof Request;
}

function headerPairs(headers: unknown): Array<[string, string]> {
  if (headers === undefined || headers === null) return [];
  if (typeof Headers !== "undefined" && headers instanceof Headers) return [...headers.entries()];
  if (Array.isArray(headers)) return headers.map(([name, value]) => [String(name), String(value)]);
  if (typeof headers === "object") {
    const pairs: Array<[string, string]> = [];
    for (const name of Object.keys(headers)) {
      const value: unknown = (headers as Record<string, unknown>)[name];
      if (Array.isArray(value)) for (const v of value) pairs.push([name, String(v)]);
      else if (value !== undefined) pairs.push([name, String(value)]);
    }
    return pairs;
  }
  throw new SitefileError("INVALID_REQUEST", "request headers must be an object, a Headers or pairs");
}

/** The fields of a location the core reads. */
const GEO_FIELDS = ["country", "regionCode", "region", "city", "latitude", "longitude"] as const;

/** The location the host's edge put beside the request (Cloudflare's `request.cf`), as the
 * request form's `geo`: the string and number fields the core reads, nothing else. */
function edgeGeo(input: object): Record<string, string | number> | null {
  const cf: unknown = (input as { cf?: unknown }).cf;
  if (cf === null || typeof cf !== "object") return null;
  const geo: Record<string, string | number> = {};
  for (const field of GEO_FIELDS) {
    const value: unknown = (cf as Record<string, unknown>)[field];
    if (typeof value === "string" || (typeof value === "number" && Number.isFinite(value))) geo[field] = value;
  }
  return Object.keys(geo).length > 0 ? geo : null;
}

/** The request's JSON form for the addon, written in one `JSON.stringify` of one object (it is
 * on every resolution's path).
 * @internal */
export function requestJson(input: RequestInput, site: Site): string {
  if (input === null || typeof input !== "object") {
    throw new SitefileError("INVALID_REQUEST", "resolveDecoPage takes a Request or {url, headers, cookies}");
  }
  const url: unknown = input.url;
  if (typeof url !== "string") {
    throw new SitefileError("INVALID_REQUEST", "the request has no url");
  }
  const random: unknown = site.options.random ? site.options.random() : Math.random();
  const scripted = Array.isArray(random);
  const draws: unknown[] = scripted ? random : [random];
  for (const draw of draws) {
    if (!(typeof draw === "number" && draw >= 0 && draw < 1)) {
      throw new SitefileError("INVALID_CONFIG", `random() answered ${String(draw)}, not a number in [0, 1)`);
    }
  }
  const fetchRequest = isFetchRequest(input);
  const form: Record<string, unknown> = {
    url,
    method: input.method,
    headers: headerPairs(input.headers),
    cookies: fetchRequest ? [] : cookiePairs((input as { cookies?: Record<string, unknown> }).cookies),
    now: site.now().toISOString(),
    // 53 bits: every number in [0, 1) Math.random can answer seeds a distinct source. An array
    // is the request's draws, taken first, then the generator seeded with 0.
    seed: scripted ? 0 : Math.floor((random as number) * 2 ** 53),
  };
  if (scripted) form.draws = draws;
  const geo = edgeGeo(input);
  if (geo) form.geo = geo;
  return JSON.stringify(form);
}

function cookiePairs(cookies: Record<string, unknown> | undefined): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  if (cookies) for (const name of Object.keys(cookies)) pairs.push([name, String(cookies[name])]);
  return pairs;
}

export { messageOf } from "./errors";

/**
 * A call's answer as the addon reads it (`{id, value}` or `{id, error}`): what `run` returns,
 * or why it threw. `undefined`, or a value JSON cannot hold (a function, a symbol), is `null`.
 * @internal
 */
export async function answerCall(id: number, run: () => unknown): Promise<string> {
  try {
    const value: unknown = await run();
    return `{"id":${id},"value":${JSON.stringify(value === undefined ? null : value) ?? "null"}}`;
  } catch (error) {
    return JSON.stringify({ id, error: messageOf(error) });
  }
}

/** One loader's answer as the addon reads it. */
function answer(site: Site, call: LoaderCall, request: RequestInput): Promise<string> {
  return answerCall(call.id, () => {
    const loader = site.loaders.get(call.key);
    if (!loader) throw new Error(`no loader is registered for ${call.key}`);
    return loader(call.props, request);
  });
}

/** A host callback's failure as the addon reads it: the addon takes a thrown value's
 * `String()` as the message, and an `Error`'s would read `"Error: <message>"`. */
class HostFailure extends Error {
  override toString(): string {
    return this.message;
  }
}

/** Runs a host callback for the addon: a failure is rethrown as a {@link HostFailure} with the
 * original message. */
function reporting<A extends unknown[], R>(f: (...args: A) => R): (...args: A) => R {
  return (...args: A) => {
    try {
      return f(...args);
    } catch (error) {
      throw new HostFailure(messageOf(error), { cause: error });
    }
  };
}

function callbacks(site: Site, request: RequestInput): HostCallbacks {
  const host: HostCallbacks = {};
  const { matchers, options } = site;
  if (matchers.size > 0) {
    let contextText = "";
    let context: MatcherContext | null = null;
    host.matcher = reporting((key: string, ruleJson: string, contextJson: string) => {
      const matcher = matchers.get(key);
      if (!matcher) throw new Error(`no custom matcher is registered for ${key}`);
      if (context === null || contextJson !== contextText) {
        context = { ...(JSON.parse(contextJson) as Omit<MatcherContext, "request">), request };
        contextText = contextJson;
      }
      const answer: unknown = matcher(JSON.parse(ruleJson) as Record<string, unknown>, context);
      if (answer !== null && typeof answer === "object" && typeof (answer as { then?: unknown }).then === "function") {
        throw new Error(`the custom matcher ${key} returned a Promise; matchers must be synchronous`);
      }
      return Boolean(answer);
    });
  }
  const flags = options.featureFlags?.adapter;
  if (flags) {
    host.isFeatureEnabled = reporting((key: string) => Boolean(flags.isFeatureEnabled(key)));
    if (flags.getFeatureFlagVariant) {
      const variant = flags.getFeatureFlagVariant.bind(flags);
      host.getFeatureFlagVariant = reporting((key: string) => {
        const v = variant(key);
        return v === null || v === undefined ? null : String(v);
      });
    }
  }
  const onDangling = options.onDanglingReference;
  if (onDangling) {
    host.onDanglingReference = reporting((resolveType: string) => {
      const value = onDangling(resolveType);
      return value === undefined ? null : JSON.stringify(value);
    });
  }
  const onError = options.onResolveError;
  if (onError) {
    host.onResolveError = (eventJson) => {
      const event = JSON.parse(eventJson) as ResolveErrorEvent;
      onError(new Error(event.message), event.resolveType, event.context);
    };
  }
  return host;
}

/**
 * Drives a started resolution to its page: each round's loaders run concurrently, custom
 * matchers and flag adapters answer when the core asks. `request` is what loaders and matchers
 * see.
 * @internal
 */
export async function drive(site: Site, resolution: NativeResolution, request: RequestInput): Promise<ResolvedPage> {
  return driveWith(site, resolution, request, callbacks(site, request));
}

async function driveWith(site: Site, resolution: NativeResolution, request: RequestInput, host: HostCallbacks): Promise<ResolvedPage> {
  const inScope = experimentScope(resolution, request.url, site.options.experiments);
  let answers: string | null = null;
  for (;;) {
    const given = answers;
    const step = JSON.parse(native(() => resolution.advance(given, host))) as Step;
    if (step.step === "done") return step.value;
    const results = await Promise.all(step.value.map((call) => inScope(() => answer(site, call, request))));
    answers = `[${results.join(",")}]`;
  }
}

/**
 * Resolves the page for a request: matchers see its full URL, headers and cookies; each round
 * of loaders runs concurrently. Returns the page (`page: null` when no page serves the path).
 * A bad request throws `INVALID_REQUEST`.
 */
export async function resolveDecoPage(request: RequestInput, site: Site = currentSite()): Promise<ResolvedPage> {
  if (!(site instanceof Site)) {
    throw new SitefileError("INVALID_CONFIG", "resolveDecoPage: the second argument is not a site from createSiteSetup");
  }
  const form = requestJson(request, site);
  const host = callbacks(site, request);
  // A page without loaders to run comes back finished from this one call.
  const first = native(() => site.native.resolvePage(form, host));
  if (typeof first === "string") return (JSON.parse(first) as Extract<Step, { step: "done" }>).value;
  return driveWith(site, first, request, host);
}

/**
 * Resolves the site's not-found page (the page block with `"notFound": true`) for a request,
 * whatever its path: what an app's own not-found screen renders. `page: null` when the site has
 * none.
 * @internal
 */
export async function resolveDecoNotFoundPage(request: RequestInput, site: Site): Promise<ResolvedPage> {
  const form = requestJson(request, site);
  return drive(
    site,
    native(() => site.native.resolveNotFound(form)),
    request,
  );
}

/**
 * Resolves the page for a request over a draft the core has at hand (`pageDraft`), as
 * {@link resolveDecoPage} does otherwise (core `resolve_page_in_draft`): never cached, seen by
 * this resolution only.
 * @internal
 */
export async function resolveDecoPageInDraft(request: RequestInput, draft: NativeDraft, site: Site): Promise<ResolvedPage> {
  const form = requestJson(request, site);
  return drive(
    site,
    native(() => site.native.resolveWithDraft(form, draft)),
    request,
  );
}
