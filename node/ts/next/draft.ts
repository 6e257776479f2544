/**
 * Draft content for the Next.js page (spec "Draft preview mode"): the blocks of the draft the
 * request's pointer names, fetched from where the core says drafts live.
 *
 * The draft middleware forwards an allowed request's pointer in `x-platform-draft` (a client's
 * own copy is removed). The page honours it only on a host the core lets preview — the
 * decision the middleware took — so a forged header on another host is inert even in an app
 * without the middleware. The core turns the pointer into the URL to fetch
 * (`PLATFORM_PREVIEW_API_DOMAINS`); the draft is fetched with `cache: "no-store"`, and a
 * non-2xx answer, a network failure, a body that is not a JSON object of blocks, and a draft
 * that takes over 5 s or 64 MiB to read mean no draft (the page renders published content;
 * the response stays a draft render). The last three drafts fetched are kept, by URL (the
 * pointer's version is in it).
 */

import { native } from "../errors";
import { requestJson } from "../resolve";
import { type Site, addon } from "../setup";

/** The core's draft signals: the `__draft` parameter, the forwarded header. */
const SIGNALS = addon.draftSignals();

/** The request header the middleware forwards the pointer in (`x-platform-draft`). */
export const DRAFT_HEADER = SIGNALS.header;

/** How many fetched drafts are kept. */
const KEPT_DRAFTS = 3;

/** How long fetching a draft may take, body included. */
const DRAFT_TIMEOUT_MS = 5_000;

/** The most bytes read of a draft: as much as a reload body may hold (the core's
 * `DEFAULT_RELOAD_MAX_BYTES`), since a draft is a content map like one. */
const DRAFT_MAX_BYTES = 64 * 1024 * 1024;

/** A draft: block name → block (`null` deletes the block). */
type DraftBlocks = Record<string, unknown>;

/** The drafts fetched last, by fetch URL, oldest first. */
const kept = new Map<string, DraftBlocks>();

/** Whether the core lets `origin`'s host preview `pointer` (its draft decision for
 * `?__draft=<pointer>` on that host). */
function hostMayPreview(site: Site, origin: string, headers: Headers, pointer: string): boolean {
  const url = `${origin}/?${SIGNALS.param}=${encodeURIComponent(pointer)}`;
  const plan = native(() => site.native.edgePlan(requestJson({ url, headers }, site)));
  return (JSON.parse(native(() => plan.draft)) as { state: string }).state === "preview";
}

/** A response's body as text, or `null` past `max` bytes (the rest is not read: leaving the
 * loop cancels the stream). */
async function boundedText(response: Response, max: number): Promise<string | null> {
  if (Number(response.headers.get("content-length") ?? 0) > max) {
    await response.body?.cancel();
    return null;
  }
  if (response.body === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > max) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Fetches a draft's blocks, bypassing every cache (`cache` is not in Node's `RequestInit`
 * type, but Next's `fetch` and Node's read it); `null` for anything but a 2xx JSON object read
 * within {@link DRAFT_TIMEOUT_MS} and {@link DRAFT_MAX_BYTES}. */
async function fetchDraft(url: string): Promise<DraftBlocks | null> {
  const signal = AbortSignal.timeout(DRAFT_TIMEOUT_MS);
  try {
    const response = await fetch(url, { cache: "no-store", signal } as RequestInit);
    if (!response.ok) return null;
    const text = await boundedText(response, DRAFT_MAX_BYTES);
    if (text === null) return null;
    const blocks: unknown = JSON.parse(text);
    return blocks !== null && typeof blocks === "object" && !Array.isArray(blocks) ? (blocks as DraftBlocks) : null;
  } catch {
    return null;
  }
}

/**
 * The draft blocks to render a request with: `null` when it carries no forwarded pointer, its
 * host may not preview, no API domain admits the pointer, or the draft cannot be fetched.
 * `origin` is the request's origin, `headers` all its headers.
 */
export async function draftBlocks(site: Site, origin: string, headers: Headers): Promise<DraftBlocks | null> {
  const pointer = headers.get(DRAFT_HEADER);
  if (pointer === null || !hostMayPreview(site, origin, headers, pointer)) return null;
  const url = site.native.draftFetchUrl(pointer);
  if (url === null) return null;
  let blocks = kept.get(url) ?? null;
  if (blocks !== null) {
    kept.delete(url);
  } else {
    blocks = await fetchDraft(url);
    if (blocks === null) return null;
  }
  kept.set(url, blocks);
  for (const oldest of kept.keys()) {
    if (kept.size <= KEPT_DRAFTS) break;
    kept.delete(oldest);
  }
  return blocks;
}
