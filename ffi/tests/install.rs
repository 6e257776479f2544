//! `scripts/install-ffi.sh` and `sitefile.pc`: the library this build made is installed under a
//! temporary prefix (`--from`, no second cargo build), and a C program is built the way a user
//! builds one — `cc app.c $(pkg-config --cflags --libs sitefile)` — then linked statically
//! with `pkg-config --static`. No C compiler or pkg-config is a failure, not a skip.

mod common;

use common::{compiler, crate_dir, install, root, run_ok};
use std::path::Path;
use std::process::Command;

/// `pkg-config ARGS sitefile` against the prefix's `.pc` only.
fn pkg_config(prefix: &Path, args: &[&str]) -> String {
    common::pkg_config(args, "sitefile", Some(&prefix.join("lib/pkgconfig")))
}

#[test]
fn an_installed_sitefile_builds_with_pkg_config() {
    let prefix = install("install-prefix");
    for file in [
        "include/sitefile.h",
        "lib/libsitefile.so",
        "lib/libsitefile.a",
        "lib/pkgconfig/sitefile.pc",
    ] {
        assert!(prefix.join(file).is_file(), "{file} was not installed");
    }
    assert_eq!(
        std::fs::read(prefix.join("include/sitefile.h")).unwrap(),
        std::fs::read(root().join("include/sitefile.h")).unwrap()
    );
    assert_eq!(
        pkg_config(&prefix, &["--modversion"]),
        env!("CARGO_PKG_VERSION")
    );

    // Exactly what a user types, in a shell.
    let app = crate_dir().join("tests/c/installed.c");
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("installed-app");
    run_ok(
        Command::new("sh")
            .arg("-c")
            .arg(r#""$CC" -std=c11 -Wall -Wextra -Werror -pedantic "$APP" -o "$EXE" $(pkg-config --cflags --libs sitefile)"#)
            .env("CC", compiler())
            .env("APP", &app)
            .env("EXE", &exe)
            .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig")),
        "",
    );
    let run = run_ok(
        Command::new(&exe).env("LD_LIBRARY_PATH", prefix.join("lib")),
        "resolves pages",
    );
    assert!(
        String::from_utf8_lossy(&run.stdout)
            .contains(&format!("installed sitefile {}", env!("CARGO_PKG_VERSION")))
    );
}

#[test]
fn an_installed_sitefile_links_statically_with_its_private_libraries() {
    let prefix = install("install-prefix-static");
    // `pkg-config --static --libs` minus the shared library: the archive itself, then
    // Libs.private.
    let private: Vec<String> = pkg_config(&prefix, &["--static", "--libs"])
        .split_whitespace()
        .filter(|flag| !flag.starts_with("-L") && *flag != "-lsitefile")
        .map(str::to_string)
        .collect();
    assert!(private.iter().any(|f| f == "-lpthread"), "{private:?}");
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("installed-app-static");
    let out = Command::new(compiler())
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg(format!(
            "-I{}",
            pkg_config(&prefix, &["--variable=includedir"])
        ))
        .arg(crate_dir().join("tests/c/installed.c"))
        .arg("-o")
        .arg(&exe)
        .arg(prefix.join("lib/libsitefile.a"))
        .args(&private)
        .output()
        .expect("the C compiler runs");
    assert!(
        out.status.success(),
        "static link failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // No shared libsitefile is needed, none is on the path: the archive was linked in.
    run_ok(
        Command::new(&exe).env_remove("LD_LIBRARY_PATH"),
        "resolves pages",
    );
    let needed = Command::new("readelf")
        .arg("-d")
        .arg(&exe)
        .output()
        .expect("readelf (binutils, which the C compiler needs) runs");
    assert!(needed.status.success());
    assert!(!String::from_utf8_lossy(&needed.stdout).contains("libsitefile"));
}
