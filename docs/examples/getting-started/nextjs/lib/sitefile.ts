// The set-up: the sections and loaders `npx sitefile generate` lists in ../sections.gen.ts, and
// the schema it writes for the editor. Content is read from .platform/blocks at the first request.
import { createNextSetup } from "sitefile/setup";
import { conventions, loaders, sections } from "../sections.gen";

export const ensureSetup = createNextSetup({
  sections,
  conventions,
  loaders,
  meta: () => import("../.platform/meta.gen.json").then((m) => m.default),
});
