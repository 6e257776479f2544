/**
 * Fetching a draft (spec "Draft preview mode"): the core decides whether a request renders a
 * draft, which URL holds it and the bounds of the fetch (`{url, timeoutMs, maxBytes}`); this
 * module only performs the fetch and hands the body back. The core keeps the drafts it was
 * handed, so a draft is fetched once while an editor previews page after page.
 */

import { native } from "./errors";
import { requestJson } from "./resolve";
import type { Site } from "./setup";
import type { NativeDraft } from "../index";

/** A draft fetch as the core words it. */
interface DraftFetch {
  /** Where the draft is. */
  url: string;
  /** How long the fetch may take, body included. */
  timeoutMs: number;
  /** The most bytes to read. */
  maxBytes: number;
}

/** A response's body, or `null` past `max` bytes (the rest is not read: leaving the loop
 * cancels the stream). */
async function boundedBody(response: Response, max: number): Promise<Buffer | null> {
  if (Number(response.headers.get("content-length") ?? 0) > max) {
    await response.body?.cancel();
    return null;
  }
  if (response.body === null) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > max) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Performs the draft fetch the core asked for (`form`, its JSON), bypassing every cache
 * (`cache` is not in Node's `RequestInit` type, but Next's `fetch` and Node's read it) and
 * following no redirect: the body, or `null` for a failure, a non-2xx answer (a redirect
 * included), or a body not read within the fetch's timeout and size cap.
 */
export async function fetchDraftBody(form: string): Promise<Buffer | null> {
  const fetchOf = JSON.parse(form) as DraftFetch;
  const signal = AbortSignal.timeout(fetchOf.timeoutMs);
  try {
    // Redirects are not followed: the core admitted this URL, not wherever it points.
    const response = await fetch(fetchOf.url, { cache: "no-store", redirect: "manual", signal } as RequestInit);
    if (!response.ok) {
      await response.body?.cancel();
      return null;
    }
    return await boundedBody(response, fetchOf.maxBytes);
  } catch {
    return null;
  }
}

/**
 * The draft a page request renders (core `Site::page_draft`), fetched when the core does not
 * have it: `url` and `headers` are the request's; `trustForwardedHeader` when the draft
 * middleware forwarded the pointer (and removed any client copy).
 */
export async function pageDraft(site: Site, url: string, headers: Headers, trustForwardedHeader: boolean): Promise<NativeDraft> {
  const form = requestJson({ url, headers }, site);
  const draft = native(() => site.native.pageDraft(form, trustForwardedHeader));
  const fetchForm = draft.fetch;
  if (fetchForm !== null) draft.provide(await fetchDraftBody(fetchForm));
  return draft;
}
