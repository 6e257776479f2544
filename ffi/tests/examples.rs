//! `examples/c-host` and `examples/python-host` run as their READMEs say: the C host is built
//! with its Makefile against a prefix `scripts/install-ffi.sh --from` installed (pkg-config),
//! the Python host loads this build's library through ctypes; both print the storefront's
//! page, byte for byte the same. No make, C compiler, pkg-config or python3 is a failure.

mod common;

use common::{compile, compiler, install, library_dir, root, run_ok};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const URLS: [(&str, &str); 3] = [
    ("https://storefront.example/", "pages-home"),
    ("https://storefront.example/shoes", "pages-category"),
    ("https://storefront.example/trail-runner/p", "pages-product"),
];

fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// The page a host printed, checked to be the one `want` names with canned loader data in it.
fn page(stdout: &[u8], want: &str) -> Value {
    let page: Value = serde_json::from_slice(stdout).unwrap_or_else(|e| {
        panic!(
            "the host printed no page JSON ({e}):\n{}",
            String::from_utf8_lossy(stdout)
        )
    });
    assert_eq!(page["page"], want, "{page}");
    assert!(page["revision"].is_string(), "{page}");
    assert!(page.to_string().contains("Trail runner"), "{page}");
    page
}

#[test]
fn the_c_host_example_builds_with_its_makefile_and_prints_the_page() {
    let prefix = install("c-host-prefix");
    let exe = tmp("c-host");
    let _ = std::fs::remove_file(&exe);
    run_ok(
        Command::new("make")
            .arg("-C")
            .arg(root().join("examples/c-host"))
            .arg(format!("OUT={}", exe.display()))
            .arg(format!("CC={}", compiler()))
            .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig")),
        "",
    );
    // As its README runs it: from its directory, with the default site and URL.
    let run = run_ok(
        Command::new(&exe)
            .current_dir(root().join("examples/c-host"))
            .env("LD_LIBRARY_PATH", prefix.join("lib")),
        "\"page\":\"pages-category\"",
    );
    let page = page(&run.stdout, "pages-category");
    assert_eq!(page["params"]["slug"], "shoes");
    assert!(String::from_utf8_lossy(&run.stderr).contains(
        "c-host: loader vtex/loaders/intelligentSearch/productListingPage.ts (call 0): canned data"
    ));
}

#[test]
fn the_python_host_example_prints_the_c_hosts_page_through_ctypes() {
    let c_host = compile(&root().join("examples/c-host/main.c"), "c-host-direct", &[]);
    let lib = library_dir().join("libsitefile.so");
    let site = root().join("examples/storefront");
    for (url, want) in URLS {
        let python = run_ok(
            Command::new("python3")
                .arg(root().join("examples/python-host/host.py"))
                .arg(&site)
                .arg(url)
                .env("SITEFILE_LIB", &lib),
            "\"page\":",
        );
        page(&python.stdout, want);
        let c = run_ok(Command::new(&c_host).arg(&site).arg(url), "\"page\":");
        assert_eq!(
            String::from_utf8_lossy(&python.stdout),
            String::from_utf8_lossy(&c.stdout),
            "{url}: the Python and C hosts printed different pages"
        );
    }
}
