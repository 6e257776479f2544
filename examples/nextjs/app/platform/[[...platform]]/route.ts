// Every admin endpoint (/platform/*, and /.sitefile, /live/_meta, /live/previews/* through the
// rewrites of sitefile/config).
import { createDecoRouteHandlers } from "sitefile/route-handlers";
import { ensureSetup } from "../../../lib/sitefile";

export const { GET, POST, OPTIONS } = createDecoRouteHandlers({ setup: ensureSetup });
