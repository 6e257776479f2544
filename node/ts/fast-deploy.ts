/**
 * Fast Deploy on an edge worker's KV namespace (`PLATFORM_KV`): the core decides what to read,
 * when, and what a read or a reload changes (`NativeFastDeploy`); this module reads and writes
 * the namespace.
 */

import { ownedBytes } from "./admin";
import { withDeadline } from "./deadline";
import { messageOf, native } from "./errors";
import { type Site, addon, envOf } from "./setup";
import type * as Native from "../index";
import type { Synced } from "./generated/boundary.gen";

/** The longest a read of the namespace may take before the pass gives it up as failed. */
const KV_READ_DEADLINE_MS = 10_000;

/** The longest a write of the namespace may take before the reload gives it up as failed. */
const KV_WRITE_DEADLINE_MS = 30_000;

/** Whether a build leaves the site's content out of what it bundles (the spec's build option
 * `fastDeploy`: `true`, or `"auto"`, the default, when `PLATFORM_SEEDED_DEPLOY` is set in the
 * build's environment): the content then comes from `PLATFORM_KV`. A bad option is an
 * `INVALID_CONFIG` error naming it. */
export function buildLeavesContentOut(option: boolean | string | undefined): boolean {
  const env = JSON.stringify(envOf(process.env));
  return native(() => addon.fastDeployStripsContent(String(option ?? "auto"), env));
}

/** A KV namespace as workerd binds it: the calls Fast Deploy makes. */
export interface KvNamespace {
  get(key: string, type: "arrayBuffer"): Promise<ArrayBuffer | null>;
  put(key: string, value: ArrayBuffer | ArrayBufferView | string): Promise<void>;
}

/** A step of a pass over the store (`NativeKvSync.nextStep`): a read, then how the pass ended
 * (the addon writes `done` beside the core's {@link Synced}). */
type SyncStep = { step: "get"; key: string } | ({ step: "done" } & Synced);

/** `value` as a KV namespace binding, when it is one. */
function kvNamespace(value: unknown): KvNamespace | null {
  const kv = value as Partial<KvNamespace> | null | undefined;
  return kv && typeof kv.get === "function" && typeof kv.put === "function" ? (kv as KvNamespace) : null;
}

/** Each site's Fast Deploy, as the first request's environment set it up (every worker entry of
 * a site shares it). */
const fastDeployOf = new WeakMap<Site, KvFastDeploy | null>();

/** Fast Deploy of one site on one KV namespace. */
export class KvFastDeploy {
  /** The first pass (the deployment's snapshot), which every request awaits. */
  private starting: Promise<void> | undefined;
  /** Whether the last pass failed (a failure is logged when it starts, not at every poll). */
  private failing = false;
  /** The reloads, one at a time: each plans on what the one before it served. */
  private reloads: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly site: Site,
    private readonly native: Native.NativeFastDeploy,
    private readonly kv: KvNamespace,
  ) {}

  /** Fast Deploy for `site` in a worker whose environment is `env` (the first call decides):
   * `null` unless `PLATFORM_FAST_DEPLOY` is on in the site's environment, `env.PLATFORM_KV` is a
   * KV namespace and a deployment id resolves (`PLATFORM_DEPLOYMENT_ID`, then `BUILD_HASH`). */
  static of(site: Site, env: unknown): KvFastDeploy | null {
    const known = fastDeployOf.get(site);
    if (known !== undefined) return known;
    const kv = kvNamespace((env as { PLATFORM_KV?: unknown } | null | undefined)?.PLATFORM_KV);
    const fastDeploy = native(() => site.native.fastDeploy(true));
    if (fastDeploy && !kv) {
      console.error(
        "sitefile: PLATFORM_FAST_DEPLOY is on but the worker has no KV namespace bound as PLATFORM_KV: " +
          "Fast Deploy is off and reloads are not kept",
      );
    }
    const made = fastDeploy && kv ? new KvFastDeploy(site, fastDeploy, kv) : null;
    fastDeployOf.set(site, made);
    return made;
  }

  /** The deployment whose snapshot the site follows. */
  get deploymentId(): string {
    return this.native.deploymentId;
  }

  /** Before a request is served: the first requests wait for the deployment's snapshot; later
   * ones start a read of its revision in the background when one is due (`keepAlive`). */
  async beforeRequest(keepAlive: (work: Promise<unknown>) => void): Promise<void> {
    if (this.starting === undefined) {
      const start = native(() => this.native.due(this.site.now().getTime()));
      this.starting = start ? this.run(start) : Promise.resolve();
    }
    await this.starting;
    const poll = native(() => this.native.due(this.site.now().getTime()));
    if (poll) keepAlive(this.run(poll));
  }

  /** Runs a pass: each read it asks for, answered within its deadline. Never rejects: what
   * fails ends the pass as failed. */
  private async run(sync: Native.NativeKvSync): Promise<void> {
    try {
      for (;;) {
        const step = JSON.parse(sync.nextStep()) as SyncStep;
        if (step.step === "done") return this.ended(step);
        let value: ArrayBuffer | null;
        try {
          value = await withDeadline(this.kv.get(step.key, "arrayBuffer"), KV_READ_DEADLINE_MS);
        } catch (error) {
          sync.answer(null, `reading ${step.key}: ${messageOf(error)}`);
          continue;
        }
        sync.answer(value === null ? null : Buffer.from(value), null);
      }
    } catch (error) {
      try {
        sync.answer(null, messageOf(error));
      } catch {
        // The pass is given up either way: the core hands out another after its lease.
      }
      this.ended({ synced: "failed", message: messageOf(error) });
    }
  }

  private ended(step: Synced): void {
    if (step.synced === "failed") {
      if (!this.failing) {
        console.error(
          `sitefile: Fast Deploy could not read deployment ${this.deploymentId} from PLATFORM_KV (${step.message}); ` +
            "the content serving keeps serving and reloads are refused until a read succeeds",
        );
      }
      this.failing = true;
      return;
    }
    if (this.failing) console.error(`sitefile: Fast Deploy reads PLATFORM_KV again (deployment ${this.deploymentId})`);
    this.failing = false;
    if (step.synced === "loaded") this.site.contentChanged();
  }

  /** Applies an admin reload, after the reloads before it: its snapshot written to the
   * namespace (snapshot, then revision), then served (`kvWritten: true`); a failed write is 503
   * `KV_WRITE_FAILED` with the content unchanged, the serving snapshot put back if the new one
   * was written. */
  reload(outcome: Native.NativeAdminOutcome): Promise<Native.AdminResponseOutput> {
    const done = this.reloads.then(() => this.write(outcome));
    this.reloads = done.catch(() => undefined);
    return done;
  }

  private async write(outcome: Native.NativeAdminOutcome): Promise<Native.AdminResponseOutput> {
    const writes = native(() => outcome.prepareReload(this.native));
    let failure: string | null = null;
    let written = 0;
    for (const { key, value } of writes) {
      try {
        await withDeadline(this.kv.put(key, ownedBytes(value)), KV_WRITE_DEADLINE_MS);
        written += 1;
      } catch (error) {
        failure = `writing ${key}: ${messageOf(error)}`;
        break;
      }
    }
    if (failure !== null && written > 0) {
      for (const { key, value } of native(() => outcome.restoreWrites(this.native))) {
        try {
          await withDeadline(this.kv.put(key, ownedBytes(value)), KV_WRITE_DEADLINE_MS);
        } catch (error) {
          console.error(
            `sitefile: Fast Deploy could not put deployment ${this.deploymentId}'s snapshot back after a failed reload ` +
              `(${messageOf(error)}): PLATFORM_KV holds the refused content until the next reload`,
          );
        }
      }
    }
    return native(() => outcome.commitReload(failure));
  }
}
