// Draft preview: `?__draft=<pointer>` on an allowed preview host renders the editor's draft.
import { createDraftMiddleware } from "sitefile/middleware";
import { ensureSetup } from "./lib/sitefile";

export const proxy = createDraftMiddleware({ setup: ensureSetup });

export const config = { matcher: ["/((?!_next/|platform/).*)"] };
