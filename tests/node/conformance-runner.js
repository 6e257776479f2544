// The conformance runners (tests/conformance/README.md) over an engine: every suite's cases
// run through the addon's surface, whichever engine provides it — the native addon or the
// WebAssembly build in Node (tests/node/conformance.test.js), the WebAssembly build in workerd
// (tests/release/worker/conformance.js). Nothing here reads files or needs Node beyond
// `node:assert` and `Buffer`, which workerd provides under `nodejs_compat`.
"use strict";
const assert = require("node:assert/strict");

const DEFAULT_NOW = "2026-01-01T00:00:00Z";
const DEFAULT_URL = "https://site.example/";
/** An id no call of a resolution has. */
const NEVER_HANDED_OUT = 4294967295;

/** The engine the cases run through (set by {@link runSuite}). */
let addon = null;

// ---- comparing -----------------------------------------------------------------------------

const show = (v) => JSON.stringify(v);
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** Whether `actual` holds `expected` (README "Comparing", subset). */
function holds(expected, actual, subst) {
  if (isObject(expected) && isObject(actual)) {
    return Object.entries(expected).every(([k, v]) => (k in actual ? holds(v, actual[k], subst) : v === null));
  }
  if (Array.isArray(expected) && Array.isArray(actual)) {
    return expected.length === actual.length && expected.every((e, i) => holds(e, actual[i], subst));
  }
  if (typeof expected === "string" && typeof actual === "string") return subst(expected) === actual;
  return isDeepEqual(expected, actual);
}

function isDeepEqual(a, b) {
  try {
    assert.deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
}

function pairs(headers) {
  if (Array.isArray(headers)) return headers.map(([n, v]) => [String(n), String(v ?? "")]);
  if (isObject(headers)) return Object.entries(headers).map(([n, v]) => [n, String(v ?? "")]);
  return [];
}

function checkHeaders(expect, headers, subst, failures) {
  for (const [name, want] of Object.entries(expect ?? {})) {
    const values = headers.filter(([n]) => n.toLowerCase() === name.toLowerCase()).map(([, v]) => v);
    const got = Array.isArray(want) ? values : values.length === 0 ? null : values.length === 1 ? values[0] : values;
    if (!holds(want, got, subst)) failures.push(`header ${name}:\n    expected ${show(want)}\n    actual   ${show(got)}`);
  }
}

function knownKeys(expect, known, failures) {
  for (const key of Object.keys(expect ?? {})) {
    if (!known.includes(key)) failures.push(`unknown expect key ${show(key)}`);
  }
}

/** Compares a page like the resolution suite (every listed key exactly, `effects` per key). */
function comparePage(expect, actual, at, failures) {
  for (const [key, want] of Object.entries(expect ?? {})) {
    let got = actual[key];
    if (got === undefined) {
      got = ["errors", "setCookies", "warnings", "varies"].includes(key) ? [] : ["degraded", "notFound"].includes(key) ? false : null;
    }
    if (key === "effects") comparePage(want, got, `${at}.effects`, failures);
    else if (!isDeepEqual(got, want)) failures.push(`${at}.${key}:\n    expected ${show(want)}\n    actual   ${show(got)}`);
  }
}

/** Checks the keys the one-request suites share (README tables): `outcome`, `job` (a subset),
 * `status`, `headers` and `body` (a string: the exact text; other JSON: the parsed body,
 * compared as a `"subset"` or `"exact"`ly). `response` is the addon's, or `null` when passed on. */
function checkAnswer(expect, { outcome, job, response }, subst, bodyMatch, failures) {
  const fail = (what, want, got) => failures.push(`${what}:\n    expected ${show(want)}\n    actual   ${show(got)}`);
  checkHeaders(expect.headers, response ? pairsOf(response.headers) : [], subst, failures);
  if ("outcome" in expect && expect.outcome !== outcome) fail("outcome", expect.outcome, outcome);
  if ("job" in expect && !holds(expect.job, job, subst)) fail("job", expect.job, job);
  const status = response ? response.status : null;
  if ("status" in expect && expect.status !== status) fail("status", expect.status, status);
  if ("body" in expect) {
    const text = response ? response.body.toString("utf8") : "";
    let ok;
    if (typeof expect.body === "string") ok = subst(expect.body) === text;
    else {
      try {
        const got = JSON.parse(text);
        ok = bodyMatch === "subset" ? holds(expect.body, got, subst) : isDeepEqual(expect.body, got);
      } catch {
        ok = false;
      }
    }
    if (!ok) fail("body", expect.body, text);
  }
}

// ---- building a site -----------------------------------------------------------------------

function vars(kase) {
  const env = { ...(kase.env ?? {}) };
  if (typeof kase.environment === "string") env.NODE_ENV = kase.environment;
  if (typeof kase.config?.cryptoKey === "string") env.PLATFORM_CRYPTO_KEY = kase.config.cryptoKey;
  return env;
}

/** A loader key filled into the loader cache by resolving it once (no direct cache access). */
const PRIMED = { maxAgeMs: 60_000, staleMs: 0 };

/** The addon site a case describes (README "Building the site"). */
function siteFor(kase) {
  const c = kase.config ?? {};
  const primed = kase.loaderCache ?? [];
  const cachedLoaders = { ...(kase.cachedLoaders ?? {}) };
  for (const key of primed) cachedLoaders[key] ??= PRIMED;
  const setup = {
    loaders: [...new Set([...Object.keys(kase.loaders ?? {}), ...primed])],
    cachedLoaders,
    customMatchers: kase.customMatchers ?? [],
    featureFlagMatcher: kase.featureFlagMatcher,
    productionOrigins: c.productionOrigins ?? [],
    layoutSections: c.layoutSections ?? [],
    nonCriticalSections: c.nonCriticalSections ?? [],
    asyncRendering: c.asyncRendering ?? false,
    resolveGlobals: c.resolveGlobals ?? true,
    env: vars(kase),
    options: kase.options,
    admin: { reloadMaxBytes: kase.limits?.reloadMaxBytes, maxBodyBytes: kase.limits?.maxBodyBytes },
  };
  const site = addon.NativeSite.fromContent(JSON.stringify(kase.blocks ?? {}), JSON.stringify(setup));
  if (kase.schema !== undefined) site.setSchema(JSON.stringify(kase.schema), undefined);
  for (const key of primed) {
    const before = site.loaderCacheEntries;
    drive(site.resolveValue(requestForm({}), JSON.stringify({ __resolveType: key })), {}, { [key]: true });
    assert.equal(site.loaderCacheEntries, before + 1, `the loader cache keeps ${key}`);
  }
  for (const url of kase.edgeCache ?? []) {
    const plan = site.edgePlan(requestForm({ url }));
    const decision = JSON.parse(plan.afterOrigin(JSON.stringify({ status: 200, headers: [["Content-Type", "text/html"]] })));
    assert.notEqual(decision.storeHeaders, null, `${url} is stored`);
  }
  return site;
}

/** The core's request form from a case's: the case's form is the core's, with the suite's
 * defaults for `url` and `now`. */
function requestForm(form) {
  return JSON.stringify({ url: DEFAULT_URL, now: DEFAULT_NOW, ...form });
}

const nowMs = (value) => Date.parse(value ?? DEFAULT_NOW);

// ---- host callbacks and loaders --------------------------------------------------------------

/** A callback's failure: the addon reads a thrown value's `String()` as the message. */
class HostFailure extends Error {
  toString() {
    return this.message;
  }
}

/** The host callbacks a case configures (README "Host callbacks"). */
function hostOf(kase) {
  const host = {
    matcher: (_key, ruleJson) => {
      const rule = JSON.parse(ruleJson);
      if (typeof rule.fail === "string") throw new HostFailure(rule.fail);
      return rule.result === true;
    },
  };
  if (kase.featureFlags) {
    const { enabled = {}, variants = {} } = kase.featureFlags;
    host.isFeatureEnabled = (key) => enabled[key] ?? false;
    host.getFeatureFlagVariant = (key) => variants[key] ?? null;
  }
  if (kase.config && "onDanglingReference" in kase.config) {
    const value = kase.config.onDanglingReference;
    host.onDanglingReference = (key) => JSON.stringify({ key, value });
  }
  return host;
}

/** One call's answer from a case's `loaders` map (README "Answering loaders"). */
function answer(answers, call) {
  const a = answers?.[call.key];
  if (isObject(a) && "$error" in a) return { id: call.id, error: String(a.$error) };
  if (isObject(a) && "$echo" in a) return { id: call.id, value: { loader: call.key, props: call.props } };
  return { id: call.id, value: a === undefined ? null : a };
}

/** Drives a resolution to its page: the page with `rounds` added. */
function drive(resolution, host, answers) {
  const rounds = [];
  let given = null;
  for (;;) {
    const step = JSON.parse(resolution.advance(given, host));
    if (step.step === "done") return { ...step.value, rounds };
    rounds.push(step.value.map((c) => (c.refresh ? { key: c.key, refresh: true } : c.key)));
    given = JSON.stringify(step.value.map((call) => answer(answers, call)));
  }
}

function errorCode(call) {
  try {
    call();
    return null;
  } catch (error) {
    if (typeof error.code !== "string") throw error;
    return error.code;
  }
}

// ---- page cases ----------------------------------------------------------------------------

function runPageCase(kase) {
  const site = siteFor(kase);
  if (kase.reload !== undefined) site.reload(JSON.stringify(kase.reload), nowMs(), undefined);
  const host = hostOf(kase);
  let output = null;
  for (let i = 0; i < Math.max(1, kase.repeat ?? 1); i += 1) {
    output = drive(site.resolve(requestForm(kase.request ?? {})), host, kase.loaders);
  }
  const failures = [];
  comparePage(kase.expect, output, "", failures);
  return failures;
}

// ---- section loader cases ------------------------------------------------------------------

/** `sections` through `site`'s section loaders for `request`, the keys of `loaders` having
 * loaders answered from it: the finished sections and effects, with the `rounds`. */
function sectionLoadersOutput(site, request, sections, loaders) {
  const run = site.runSectionLoaders(requestForm(request ?? {}), JSON.stringify(sections), Object.keys(loaders ?? {}));
  const rounds = [];
  let given = null;
  for (;;) {
    const step = JSON.parse(run.advance(given));
    if (step.step === "done") return { ...step.value, rounds };
    rounds.push(step.value.map((c) => c.key));
    given = JSON.stringify(step.value.map((call) => answer(loaders, call)));
  }
}

/** The keys a section loader case's `expect` (or a `sectionLoaders` step's) may hold. */
const SECTION_LOADER_KEYS = ["rounds", "sections", "effects"];

function runSectionLoaderCase(kase) {
  const output = sectionLoadersOutput(siteFor(kase), kase.request, kase.sections, kase.loaders);
  const failures = [];
  knownKeys(kase.expect, SECTION_LOADER_KEYS, failures);
  comparePage(kase.expect, output, "", failures);
  return failures;
}

// ---- admin cases ---------------------------------------------------------------------------

function checkContent(content, site, before, failures) {
  if (!content) return;
  if ("unchanged" in content && content.unchanged !== (site.revision === before)) {
    failures.push(`content.unchanged:\n    expected ${content.unchanged}\n    actual   ${site.revision === before}`);
  }
  if ("blockCount" in content && content.blockCount !== site.blockCount) {
    failures.push(`content.blockCount:\n    expected ${content.blockCount}\n    actual   ${site.blockCount}`);
  }
  for (const [name, want] of Object.entries(content.blocks ?? {})) {
    const text = site.block(name);
    const got = text === null ? null : JSON.parse(text);
    if (!isDeepEqual(got, want)) failures.push(`content.blocks.${name}:\n    expected ${show(want)}\n    actual   ${show(got)}`);
  }
}

function checkCaches(expect, site, failures) {
  for (const key of ["loaderCacheEntries", "edgeCacheEntries"]) {
    if (key in expect && expect[key] !== site[key]) {
      failures.push(`${key}:\n    expected ${expect[key]}\n    actual   ${site[key]}`);
    }
  }
}

/** The Fast Deploy hook a case's host answers with, or none. */
function kvHook(host) {
  if (typeof host.kvError === "string") {
    return () => {
      throw new HostFailure(host.kvError);
    };
  }
  return host.kvWritten === undefined ? undefined : () => host.kvWritten === true;
}

function flatten(pairList) {
  return pairList.flat();
}

function pairsOf(flat) {
  const out = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
}

const ADMIN_KEYS = ["outcome", "job", "status", "headers", "body", "content", "loaderCacheEntries", "edgeCacheEntries"];

function runAdminCase(kase) {
  const site = siteFor(kase);
  const before = site.revision;
  const subst = (s) => s.replaceAll("{revision}", site.revision).replaceAll("{schemaEtag}", schemaEtag(site));
  const r = kase.request ?? {};
  const body = r.body === undefined || r.body === null ? undefined : typeof r.body === "string" ? r.body : JSON.stringify(r.body);
  const outcome = site.handleAdmin(
    {
      method: r.method ?? "GET",
      path: r.path ?? "/",
      query: r.query ?? "",
      headers: flatten(pairs(r.headers).map(([n, v]) => [n, subst(v)])),
      body: body === undefined ? undefined : Buffer.from(body),
    },
    nowMs(kase.now),
  );
  const host = kase.host ?? {};
  const job = outcome.job === null ? null : JSON.parse(outcome.job);
  let response = null;
  switch (outcome.kind) {
    case "pass":
      break;
    case "respond":
      response = outcome.response();
      break;
    case "reload":
      response = outcome.applyReload(kvHook(host));
      break;
    case "purge":
      response = outcome.finishPurge();
      break;
    case "preview":
      response = outcome.finishPreview(JSON.stringify(host.render ?? { sections: [] }));
      break;
    case "invoke":
      response = outcome.finishInvoke(JSON.stringify(host.invoke?.results ?? []), flatten(pairs(host.invoke?.headers)));
      break;
    default:
      throw new Error(`unknown outcome ${outcome.kind}`);
  }
  const expect = kase.expect ?? {};
  const failures = [];
  knownKeys(expect, ADMIN_KEYS, failures);
  checkAnswer(expect, { outcome: outcome.kind, job, response }, subst, "subset", failures);
  checkContent(expect.content, site, before, failures);
  checkCaches(expect, site, failures);
  return failures;
}

/** The schema's ETag, read the way a client does: from `/live/_meta`. */
function schemaEtag(site) {
  if (!site.hasSchema) return "";
  const outcome = site.handleAdmin({ method: "GET", path: "/live/_meta", query: "", headers: [] }, nowMs());
  const headers = pairsOf(outcome.response().headers);
  return headers.find(([n]) => n.toLowerCase() === "etag")?.[1] ?? "";
}

// ---- page JSON cases ----------------------------------------------------------------------

const PAGE_JSON_KEYS = ["outcome", "job", "rounds", "writtenSections", "status", "headers", "body"];

function runPageJsonCase(kase) {
  const site = siteFor(kase);
  const host = hostOf(kase);
  const pageJson = site.pageJson(requestForm(kase.request ?? {}));
  let outcome = "pass";
  let job = null;
  let rounds = null;
  let written = null;
  let response = null;
  if (pageJson && pageJson.kind === "respond") {
    outcome = "respond";
    response = pageJson.response();
  } else if (pageJson) {
    outcome = "resolve";
    job = JSON.parse(pageJson.job);
    if (pageJson.draftFetch !== null) {
      // The case's draft API: a listed URL answers its body (a string as is), any other fails.
      const body = kase.drafts?.[JSON.parse(pageJson.draftFetch).url];
      pageJson.provideDraft(body === undefined ? null : Buffer.from(typeof body === "string" ? body : JSON.stringify(body)));
    }
    const resolution = pageJson.resolve(kase.host?.dropSections ?? []);
    rounds = drive(resolution, host, kase.loaders).rounds;
    written = resolution.pageJsonSections();
    response = resolution.pageJsonResponse(null);
  }
  const expect = kase.expect ?? {};
  const failures = [];
  knownKeys(expect, PAGE_JSON_KEYS, failures);
  const subst = (s) => s.replaceAll("{revision}", site.revision);
  checkAnswer(expect, { outcome, job, response }, subst, "exact", failures);
  if ("rounds" in expect && !isDeepEqual(expect.rounds, rounds)) {
    failures.push(`rounds:\n    expected ${show(expect.rounds)}\n    actual   ${show(rounds)}`);
  }
  if ("writtenSections" in expect && !isDeepEqual(expect.writtenSections, written)) {
    failures.push(`writtenSections:\n    expected ${show(expect.writtenSections)}\n    actual   ${show(written)}`);
  }
  return failures;
}

// ---- step cases ----------------------------------------------------------------------------

const COMMON_KEYS = ["revision", "content", "loaderCacheEntries", "edgeCacheEntries"];

function reloadStep(step, site, failures) {
  const body = typeof step.body === "string" ? step.body : JSON.stringify(step.body);
  let hook;
  if (step.hook) {
    hook =
      typeof step.hook.error === "string"
        ? () => {
            throw new HostFailure(step.hook.error);
          }
        : () => step.hook.kvWritten === true;
  }
  let response = null;
  const code = errorCode(() => {
    response = JSON.parse(site.reload(body, nowMs(step.now), hook));
  });
  const expect = step.expect ?? {};
  if (response && "response" in expect && !holds(expect.response, response, (s) => s.replaceAll("{revision}", site.revision))) {
    failures.push(`response:\n    expected ${show(expect.response)}\n    actual   ${show(response)}`);
  }
  if ((expect.error ?? null) !== code) failures.push(`error:\n    expected ${show(expect.error ?? null)}\n    actual   ${show(code)}`);
}

function edgeStep(step, site, failures) {
  const expect = step.expect ?? {};
  let plan = null;
  const code = errorCode(() => {
    plan = site.edgePlan(requestForm(step.request ?? {}), step.hints === undefined ? undefined : JSON.stringify(step.hints));
  });
  if ((expect.error ?? null) !== code) failures.push(`error:\n    expected ${show(expect.error ?? null)}\n    actual   ${show(code)}`);
  if (!plan) return;
  let form;
  let store = null;
  if (step.origin) {
    const origin = { status: step.origin.status ?? 200, headers: pairs(step.origin.headers) };
    form = JSON.parse(plan.afterOrigin(JSON.stringify(origin)));
    store = form.storeHeaders;
  } else {
    form = JSON.parse(plan.json);
  }
  const subst = (s) => s.replaceAll("{revision}", site.revision);
  if ("plan" in expect && !holds(expect.plan, form, subst))
    failures.push(`plan:\n    expected ${show(expect.plan)}\n    actual   ${show(form)}`);
  checkHeaders(expect.headers, form.headers, subst, failures);
  if ("storeHeaders" in expect) {
    if (expect.storeHeaders === null || store === null) {
      if (expect.storeHeaders !== store)
        failures.push(`storeHeaders:\n    expected ${show(expect.storeHeaders)}\n    actual   ${show(store)}`);
    } else {
      checkHeaders(expect.storeHeaders, store, subst, failures);
    }
  }
  if ("evict" in expect && !isDeepEqual(expect.evict, form.evict))
    failures.push(`evict:\n    expected ${show(expect.evict)}\n    actual   ${show(form.evict)}`);
}

/** Drives a resolution out of order on purpose; the error code the addon throws. */
function misuse(kind, resolution, host) {
  const first = () => {
    const step = JSON.parse(resolution.advance(null, host));
    assert.equal(step.step, "needLoaders", "the misuse case needs a loader round");
    return step.value;
  };
  switch (kind) {
    case "provideUnknown":
      first();
      return errorCode(() => resolution.advance(JSON.stringify([{ id: NEVER_HANDED_OUT, value: null }]), host));
    case "provideTwice": {
      const call = first()[0];
      return errorCode(() =>
        resolution.advance(
          JSON.stringify([
            { id: call.id, value: null },
            { id: call.id, value: null },
          ]),
          host,
        ),
      );
    }
    case "nextAfterDone":
    case "provideAfterDone": {
      let given = null;
      for (;;) {
        const step = JSON.parse(resolution.advance(given, host));
        if (step.step === "done") break;
        given = JSON.stringify(step.value.map((c) => ({ id: c.id, value: null })));
      }
      const again = kind === "nextAfterDone" ? null : JSON.stringify([{ id: 0, value: null }]);
      return errorCode(() => resolution.advance(again, host));
    }
    default:
      throw new Error(`unknown misuse ${kind}`);
  }
}

function resolveStep(kase, step, site, host, failures) {
  const form = requestForm(step.request ?? {});
  const resolution = step.draft ? site.resolveInDraft(form, JSON.stringify(step.draft)) : site.resolve(form);
  const expect = step.expect ?? {};
  if (step.misuse) {
    const code = misuse(step.misuse, resolution, host);
    if ((expect.error ?? null) !== code) failures.push(`error:\n    expected ${show(expect.error ?? null)}\n    actual   ${show(code)}`);
    return;
  }
  const output = drive(resolution, host, step.loaders ?? kase.loaders);
  if ("rounds" in expect && !isDeepEqual(expect.rounds, output.rounds)) {
    failures.push(`rounds:\n    expected ${show(expect.rounds)}\n    actual   ${show(output.rounds)}`);
  }
  comparePage(expect.page, output, "page", failures);
}

function runStepCase(kase) {
  const site = siteFor(kase);
  const host = hostOf(kase);
  const failures = [];
  kase.steps.forEach((step, index) => {
    const before = site.revision;
    const stepFailures = [];
    const expect = step.expect ?? {};
    let own;
    switch (step.do) {
      case "reload":
        reloadStep(step, site, stepFailures);
        own = ["response", "error"];
        break;
      case "edge":
        edgeStep(step, site, stepFailures);
        own = ["plan", "headers", "storeHeaders", "evict", "error"];
        break;
      case "purge": {
        const keys = site.purge(step.target).sort();
        if ("keys" in expect && !isDeepEqual(expect.keys, keys))
          stepFailures.push(`keys:\n    expected ${show(expect.keys)}\n    actual   ${show(keys)}`);
        own = ["keys"];
        break;
      }
      case "purgeLoaders":
        site.purgeLoaders();
        own = [];
        break;
      case "resolve":
        resolveStep(kase, step, site, host, stepFailures);
        own = ["page", "rounds", "error"];
        break;
      case "sectionLoaders": {
        const output = sectionLoadersOutput(site, step.request, step.sections, step.loaders ?? kase.loaders);
        const sectionExpect = Object.fromEntries(SECTION_LOADER_KEYS.filter((k) => k in expect).map((k) => [k, expect[k]]));
        comparePage(sectionExpect, output, "", stepFailures);
        own = SECTION_LOADER_KEYS;
        break;
      }
      default:
        throw new Error(`unknown step ${step.do}`);
    }
    knownKeys(expect, [...COMMON_KEYS, ...own], stepFailures);
    if ("revision" in expect) {
      const got = site.revision === before ? "unchanged" : "changed";
      if (expect.revision !== got) stepFailures.push(`revision:\n    expected ${expect.revision}\n    actual   ${got}`);
    }
    checkContent(expect.content, site, before, stepFailures);
    checkCaches(expect, site, stepFailures);
    failures.push(...stepFailures.map((f) => `step ${index} (${step.do}): ${f}`));
  });
  return failures;
}

// ---- edge exchange cases (README, "Exchange cases") ----------------------------------------

const EXCHANGE_KEYS = ["trace", "status", "headers", "body", "failed", "deadlineMs", "refreshTrace"];

/** Answers a step of `exchange` with the case's time. */
function exchangeAnswer(exchange, form, now) {
  exchange.answer(JSON.stringify({ ...form, nowMs: now }));
}

/** Answers the pending `askOrigin` from the case's `origin`. */
function askOrigin(exchange, origin, host, driven, now) {
  host.originRequests += 1;
  if ("fail" in origin || "hang" in origin) {
    exchangeAnswer(exchange, { answer: "originFailed", reason: origin.fail ?? "deadline" }, now);
    return;
  }
  driven.originBody = origin.body ?? "";
  exchangeAnswer(exchange, { answer: "origin", status: origin.status ?? 200, headers: pairs(origin.headers) }, now);
}

/** Drives an exchange to its end, or (`pauseAtOrigin`) to its first askOrigin or follow. */
function driveExchange(exchange, origin, step, host, driven, now, pauseAtOrigin) {
  for (;;) {
    const next = JSON.parse(exchange.nextStep());
    driven.trace.push(next.step);
    switch (next.step) {
      case "lookup": {
        const copy = host.store.get(next.key);
        if (copy) driven.lookedUp = copy.body;
        exchangeAnswer(exchange, { answer: "lookup", copy: copy ? { status: copy.status, headers: copy.headers } : null }, now);
        break;
      }
      case "askOrigin":
      case "follow":
        driven.deadline = next.deadlineMs;
        if (pauseAtOrigin) return;
        if (next.step === "follow") throw new Error("a lone exchange follows a flight nobody flies");
        askOrigin(exchange, origin, host, driven, now);
        break;
      case "delete":
        for (const key of next.keys) host.store.delete(key);
        break;
      case "refresh":
        driven.refresh = exchange.takeRefresh();
        break;
      case "respond": {
        const body = next.body === "stored" ? driven.lookedUp : next.body === "origin" ? driven.originBody : "";
        if (next.store) {
          const kept = step.keepRefused !== true;
          if (kept) host.store.set(next.store.key, { status: next.store.status, headers: next.store.headers, body });
          exchangeAnswer(exchange, { answer: "kept", kept }, now);
        }
        driven.response = { status: next.status, headers: next.headers, body };
        break;
      }
      case "settle":
        break;
      case "fail":
        driven.failed = true;
        break;
      case "done":
        return;
      default:
        throw new Error(`unknown step ${next.step}`);
    }
  }
}

const newDriven = () => ({ trace: [], response: null, failed: false, deadline: null, refresh: null, lookedUp: null, originBody: null });

function exchangeOf(site, step) {
  const hints = step.hints === undefined ? undefined : JSON.stringify(step.hints);
  return site.edgeExchange(requestForm(step.request), hints, step.noStore !== true);
}

function checkDriven(expect, driven, refreshed, at, failures) {
  const got = {
    trace: driven.trace,
    status: driven.response?.status ?? null,
    body: driven.response?.body ?? null,
    failed: driven.failed,
    deadlineMs: driven.deadline ?? null,
    refreshTrace: refreshed?.trace ?? null,
  };
  for (const [name, value] of Object.entries(got)) {
    if (name in (expect ?? {}) && !isDeepEqual(expect[name], value))
      failures.push(`${at}${name}:\n    expected ${show(expect[name])}\n    actual   ${show(value)}`);
  }
  const headerFailures = [];
  checkHeaders(expect?.headers, driven.response?.headers ?? [], (s) => s, headerFailures);
  failures.push(...headerFailures.map((f) => `${at}${f}`));
}

function runExchangeCase(kase) {
  const site = siteFor(kase);
  const host = { store: new Map(), originRequests: 0 };
  const failures = [];
  kase.steps.forEach((step, index) => {
    const before = host.originRequests;
    const expect = step.expect ?? {};
    const own = [];
    let known;
    const now = nowMs(step.request?.now);
    switch (step.do) {
      case "exchange": {
        const exchange = exchangeOf(site, step);
        const driven = newDriven();
        driveExchange(exchange, step.origin ?? {}, step, host, driven, now, false);
        let refreshed = null;
        if (driven.refresh) {
          refreshed = newDriven();
          driveExchange(driven.refresh, step.refreshOrigin ?? step.origin ?? {}, step, host, refreshed, now, false);
        }
        checkDriven(expect, driven, refreshed, "", own);
        known = EXCHANGE_KEYS;
        break;
      }
      case "collapse": {
        const leader = exchangeOf(site, step);
        const led = newDriven();
        driveExchange(leader, step.origin, step, host, led, now, true);
        const followers = Array.from({ length: step.followers }, () => {
          const follower = exchangeOf(site, step);
          const driven = newDriven();
          driveExchange(follower, step.origin, step, host, driven, now, true);
          return [follower, driven];
        });
        if (led.trace.at(-1) === "askOrigin") askOrigin(leader, step.origin, host, led, now);
        driveExchange(leader, step.origin, step, host, led, now, false);
        for (const [follower, driven] of followers) {
          if (driven.trace.at(-1) === "follow") exchangeAnswer(follower, { answer: "followed" }, now);
          else askOrigin(follower, step.origin, host, driven, now);
          driveExchange(follower, step.origin, step, host, driven, now, false);
        }
        knownKeys(expect.leader, EXCHANGE_KEYS, own);
        knownKeys(expect.followers, EXCHANGE_KEYS, own);
        checkDriven(expect.leader, led, null, "leader ", own);
        for (const [n, [, driven]] of followers.entries()) checkDriven(expect.followers, driven, null, `follower ${n} `, own);
        known = ["leader", "followers"];
        break;
      }
      case "purge":
        for (const key of site.purge(step.target)) host.store.delete(key);
        known = [];
        break;
      default:
        throw new Error(`unknown step ${step.do}`);
    }
    knownKeys(expect, [...known, "originRequests", "storedCopies", "flightsInAir"], own);
    const got = { originRequests: host.originRequests - before, storedCopies: host.store.size, flightsInAir: site.edgeFlightsInAir };
    for (const [name, value] of Object.entries(got)) {
      if (name in expect && expect[name] !== value) own.push(`${name}:\n    expected ${show(expect[name])}\n    actual   ${show(value)}`);
    }
    failures.push(...own.map((f) => `step ${index} (${step.do}): ${f}`));
  });
  return failures;
}

// ---- the suites ----------------------------------------------------------------------------

const RUNNERS = {
  matchers: runPageCase,
  resolution: runPageCase,
  admin: runAdminCase,
  "page-json": runPageJsonCase,
  "section-loaders": runSectionLoaderCase,
  reload: runStepCase,
  edge: runStepCase,
  draft: runStepCase,
  "loader-cache": runStepCase,
  "edge-exchange": runExchangeCase,
};

/** Runs the cases of `suite` in `files` (`[{name, cases}]`, a case file's name and parsed
 * cases) through `engine`: how many ran, and each failure (`file :: case`, then what failed). */
function runSuite(engine, suite, files) {
  const run = RUNNERS[suite];
  if (!run) throw new Error(`no runner for the conformance suite ${suite}`);
  addon = engine;
  const failures = [];
  let count = 0;
  for (const { name, cases } of files) {
    for (const kase of cases) {
      count += 1;
      let caseFailures;
      try {
        caseFailures = run(kase);
      } catch (error) {
        caseFailures = [`threw ${error.code ?? ""} ${error.stack}`];
      }
      if (caseFailures.length > 0) failures.push(`${suite}/${name} :: ${kase.name}\n  ${caseFailures.join("\n  ")}`);
    }
  }
  return { count, failures };
}

/** The suites a runner drives. */
const SUITES = Object.keys(RUNNERS);

module.exports = { SUITES, runSuite };
