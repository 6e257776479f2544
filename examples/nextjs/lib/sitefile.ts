// The site's sitefile set-up: its sections, loaders and schema. The root layout, the page and
// the admin route await `ensureSetup()`. `npx sitefile generate` writes the registry of
// sections and loaders (../sections.gen.ts) and the schema (../.platform/meta.gen.json).
import { createNextSetup } from "sitefile/setup";
import { registerLanguageMatcher } from "../matchers/language";
import { conventions, loaders, sections } from "../sections.gen";

export const ensureSetup = createNextSetup({
  sections,
  conventions,
  // Content is read from .platform/blocks at the first request (the default `blocksDir`).
  meta: () => import("../.platform/meta.gen.json").then((m) => m.default),
  renderShell: { css: "/styles.css" },
  // The loaders content can point at (site/loaders/products.ts), also invokable through
  // /platform/invoke.
  loaders,
  // A custom matcher content uses in a variant rule (pages-offers.json).
  customMatchers: [registerLanguageMatcher],
});
