//! napi-rs's build set-up, and the WebAssembly engine's memory made to fit an edge isolate.

/// The WebAssembly engine's stack: napi-rs links 64 MiB, which a Workers isolate (128 MB in
/// all) cannot spare; the deepest content the core accepts (`MAX_PARSE_DEPTH`,
/// `MAX_RESOLVED_NESTING`) resolves within 8 MiB (the Node suites' deep-nesting cases run on
/// this engine in the release rehearsal).
const WASM_STACK_BYTES: u32 = 8 * 1024 * 1024;

/// The memory the engine starts with: its data and stack, rounded up to 16 MiB. The loaders
/// create the imported memory with at least this (`sitefile.workerd.js`: 256 pages).
const WASM_INITIAL_MEMORY_BYTES: u32 = 16 * 1024 * 1024;

fn main() {
    napi_build::setup();
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        // After napi-rs's own arguments: the linker takes the last of each.
        println!("cargo:rustc-link-arg=-zstack-size={WASM_STACK_BYTES}");
        println!("cargo:rustc-link-arg=--initial-memory={WASM_INITIAL_MEMORY_BYTES}");
    }
}
