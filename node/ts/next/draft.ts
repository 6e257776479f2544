/**
 * Draft content for the Next.js page (spec "Draft preview mode").
 *
 * The draft middleware forwards an allowed request's pointer in `x-platform-draft` (a client's
 * own copy is removed). The page honours it only on a host the core lets preview — the
 * decision the middleware took — so a forged header on another host is inert even in an app
 * without the middleware. Where the draft is fetched from, within which bounds, and how many
 * drafts are kept is the core's; `../draft` performs the fetch.
 */

import { pageDraft } from "../draft";
import { type Site, addon } from "../setup";
import type { NativeDraft } from "../../index";

/** The request header the middleware forwards the pointer in (`x-platform-draft`). */
export const DRAFT_HEADER = addon.draftSignals().header;

/**
 * The draft to render a Next page request with, or `null` for the published content (no
 * forwarded pointer, a host that may not preview, no API domain admits the pointer, the fetch
 * failed): `origin` is the request's origin, `headers` all its headers (the core checks the
 * host as its edge does: `Host`, or `X-Forwarded-Host` where the site trusts it). Only the
 * forwarded pointer counts here, never the draft cookie: the middleware reads the cookie and
 * forwards what it allows.
 */
export async function forwardedDraft(site: Site, origin: string, headers: Headers): Promise<NativeDraft | null> {
  if (!headers.has(DRAFT_HEADER)) return null;
  const forwarded = new Headers(headers);
  forwarded.delete("cookie");
  const draft = await pageDraft(site, `${origin}/`, forwarded, true);
  return draft.ready ? draft : null;
}
