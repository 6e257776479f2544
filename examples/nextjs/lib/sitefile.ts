// The site's sitefile set-up: its sections, loaders and schema. The root layout, the page and
// the admin route await `ensureSetup()`.
import { createNextSetup } from "sitefile/setup";
import { sections } from "./sections";

export const ensureSetup = createNextSetup({
  sections,
  // Content is read from .platform/blocks at the first request (the default `blocksDir`).
  meta: () => import("../.platform/meta.gen.json").then((m) => m.default),
  renderShell: { css: "/styles.css" },
  loaders: {
    // A loader content can point at, also invokable through /platform/invoke.
    "site/loaders/products.ts": async (props: { count?: number }) =>
      Array.from({ length: props.count ?? 3 }, (_, i) => ({ name: `Product ${i + 1}`, price: 10 * (i + 1) })),
  },
  conventions: { meta: { "./sections/Footer.tsx": { layout: true } } },
});
