// The WebAssembly engine's instantiation for a host that runs one thread and hands over a
// compiled module (`sitefile.workerd.js`): the same napi-rs build the Node fallback loads
// (`sitefile.wasi.cjs`), instantiated synchronously, with no worker threads and no file system.
import { WASI, createContext, instantiateNapiModuleSync } from "@napi-rs/wasm-runtime";

/** The engine's starting memory in 64 KiB pages: its data and stack (node/build.rs links it
 * with 16 MiB). It grows as content needs, up to the host's limit. */
const INITIAL_PAGES = 256;

/** The most pages the memory may grow to (4 GiB, what the build declares). */
const MAXIMUM_PAGES = 65536;

/** The engine's exports (the addon's classes and functions) from its compiled module. */
export function instantiate(engineModule) {
  const memory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: MAXIMUM_PAGES, shared: true });
  const { napiModule } = instantiateNapiModuleSync(engineModule, {
    context: createContext(),
    // Nothing in sitefile runs off the calling thread: no async work, no thread to start.
    asyncWorkPoolSize: 0,
    wasi: new WASI({ version: "preview1" }),
    onCreateWorker() {
      throw new Error("sitefile: the WebAssembly engine starts no threads here");
    },
    overwriteImports(imports) {
      imports.env = { ...imports.env, ...imports.napi, ...imports.emnapi, memory };
      return imports;
    },
    beforeInit({ instance }) {
      for (const name of Object.keys(instance.exports)) {
        if (name.startsWith("__napi_register__")) instance.exports[name]();
      }
    },
  });
  return napiModule.exports;
}
