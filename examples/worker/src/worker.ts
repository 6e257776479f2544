// The Worker's main entry (spec: the file that calls `createDecoWorkerEntry`). Content is the
// bundle `sitefile generate` writes; variables and secrets come from the worker's environment
// (`process.env` under `nodejs_compat`); the edge cache is the Cache API (`caches.default`).
import { createAdminSetup, createDecoWorkerEntry, createSiteSetup } from "sitefile";
import blocks from "../.platform/blocks.gen.json";
import meta from "../.platform/meta.gen.json";
import { loaders, sections } from "../sections.gen";
import { app } from "./app";

createSiteSetup({ blocks, sections, loaders });
createAdminSetup({ meta: () => meta });

export default createDecoWorkerEntry(app, { admin: true });
