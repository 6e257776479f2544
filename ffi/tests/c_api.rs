//! The C API through its public header: `tests/c/api.c`, compiled with the system C compiler
//! (`cc`, `-Wall -Wextra -Werror`) against `include/sitefile.h` and the built `libsitefile`
//! shared library, run on `examples/storefront`. No C compiler is a failure, not a skip.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory holding this build's `libsitefile.so` (cargo builds the library's cdylib
/// next to the test binaries, in `target/<profile>/deps`).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let deps = exe
        .parent()
        .expect("the test binary's directory")
        .to_path_buf();
    let so = deps.join(format!(
        "{}sitefile{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(so.exists(), "{} was not built", so.display());
    deps
}

#[test]
fn the_c_program_drives_the_public_api() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = crate_dir.parent().expect("the workspace root");
    let lib = library_dir();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sitefile-c-api");
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let compiled = Command::new(&compiler)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g"])
        .arg("-I")
        .arg(root.join("include"))
        .arg(crate_dir.join("tests/c/api.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lsitefile")
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{compiler}`: {e}"));
    assert!(
        compiled.status.success(),
        "the C test does not compile:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );

    let run = Command::new(&exe)
        .arg(root.join("examples/storefront"))
        .output()
        .expect("the C test runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "the C test failed ({}):\n{stdout}\n{stderr}",
        run.status
    );
    assert!(
        stdout.contains("sitefile C API: all checks passed"),
        "{stdout}"
    );
}
