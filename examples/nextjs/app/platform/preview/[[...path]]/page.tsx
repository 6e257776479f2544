// The preview page: the admin route redirects preview GETs here, so previewed sections render
// as the site renders them and client components hydrate.
import { createDecoPreviewPage } from "sitefile/page";
import { ensureSetup } from "../../../../lib/sitefile";

export default createDecoPreviewPage({ setup: ensureSetup });
