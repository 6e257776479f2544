/**
 * `pageMetadata`: a resolved page's document head — title, description, canonical URL,
 * robots — from its SEO, with the host's defaults (the core decides; this module converts).
 */

import { native } from "./errors";
import { addon } from "./setup";
import type { ResolvedPage } from "./resolve";

/** The host's fallbacks for a page whose SEO lacks a field. */
export interface MetadataDefaults {
  /** The title when neither the page nor `defaultTitle` gives one. */
  siteName?: string;
  /** The title of a page whose SEO has none. */
  defaultTitle?: string;
  /** The description of a page whose SEO has none. */
  defaultDescription?: string;
}

/** A page's document head (the shape of Next's `Metadata` for these fields). */
export interface PageMetadata {
  title: string | null;
  description: string | null;
  canonical: string | null;
  /** `{index: false, follow: false}` when the page's SEO says `noIndexing`. */
  robots: { index: boolean; follow: boolean } | null;
}

/** The document head of `page` (a page from `resolveDecoPage`). */
export function pageMetadata(page: Pick<ResolvedPage, "seo">, defaults: MetadataDefaults = {}): PageMetadata {
  return JSON.parse(native(() => addon.pageMetadata(JSON.stringify(page.seo ?? null), JSON.stringify(defaults)))) as PageMetadata;
}
