// The WebAssembly engine in workerd (Cloudflare Workers, `wrangler dev`, Miniflare): the module
// the host's bundler compiled (workerd compiles no code at run time), instantiated. The
// `sitefile` package's `#engine` import resolves here under the `workerd` and `worker`
// conditions.
import { restoreSetImmediate } from "./sitefile.workerd-immediate.js";
import engineModule from "./sitefile.wasm32-wasi.wasm";
import { instantiate } from "./sitefile.instantiate.js";

restoreSetImmediate();

export default instantiate(engineModule);
