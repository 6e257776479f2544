//! `include/sitefile.h` is what the pinned cbindgen makes of the crate: this test regenerates
//! it and fails on any difference. `SITEFILE_BLESS=1` rewrites the committed header instead.

use std::path::Path;

#[test]
fn the_committed_header_is_what_cbindgen_generates() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("ffi/cbindgen.toml parses");
    // From the sources, not `cargo metadata`: no cargo run, nothing to fetch.
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");

    let path = crate_dir.join("../include/sitefile.h");
    if std::env::var_os("SITEFILE_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("include/sitefile.h is writable");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/sitefile.h is stale: regenerate it with \
         `SITEFILE_BLESS=1 cargo test -p sitefile-ffi --test header` and commit it"
    );
}
