/**
 * `sdk/experiments`: N-way experiments whose configurations live in a key-value store, keyed
 * by hostname. A loader asks `resolveExperimentVariant(key)` while its page resolves; the core
 * draws the visitor's arm in proportion to the weights and keeps it sticky in the
 * `platform_segment` cookie the finished page sets.
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { native } from "./errors";
import type { NativeResolution } from "../index";

/** Where experiment configurations live: `get(hostname)` answers the configuration (JSON text
 * or an object: `{version, experiments: [{key, variants: [{id, weight, payload}]}]}`) or
 * nothing. A Cloudflare KV namespace fits. */
export interface ExperimentsStore {
  get(hostname: string): unknown;
}

/** The arm a visitor is in. */
export interface ExperimentAssignment {
  experimentKey: string;
  variantId: string;
  payload: unknown;
  /** Drawn by this request (not read back from the cookie). */
  isFresh: boolean;
}

interface Scope {
  resolution: NativeResolution;
  /** The page's URL; its hostname keys the configuration. */
  url: string;
  store: ExperimentsStore | undefined;
  /** The configuration's JSON text, read once per request. */
  config?: Promise<string | null>;
}

const current = new AsyncLocalStorage<Scope>();

/** Runs a loader of `resolution` where `resolveExperimentVariant` can see it.
 * @internal */
export function experimentScope(resolution: NativeResolution, url: string, store: ExperimentsStore | undefined) {
  const scope: Scope = { resolution, url, store };
  return <T>(f: () => T): T => current.run(scope, f);
}

async function configText(scope: Scope): Promise<string | null> {
  if (!scope.store) return null;
  const value: unknown = await scope.store.get(new URL(scope.url).hostname);
  if (value === null || value === undefined) return null;
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * The visitor's arm of experiment `key`, or `null` when the site has no experiments store, the
 * configuration has no such experiment, or the caller is not a loader of a resolving page.
 * Sticky across requests through the `platform_segment` cookie.
 */
export async function resolveExperimentVariant(key: string): Promise<ExperimentAssignment | null> {
  const scope = current.getStore();
  if (!scope) return null;
  scope.config ??= configText(scope);
  const config = await scope.config;
  if (config === null) return null;
  const assignment = native(() => scope.resolution.assignExperiment(config, key));
  return assignment === null ? null : (JSON.parse(assignment) as ExperimentAssignment);
}
