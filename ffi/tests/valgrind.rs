//! The C programs under `valgrind --leak-check=full --error-exitcode=1`: no memory error and
//! nothing lost (definite, indirect or possible leaks are errors). Still-reachable blocks are
//! the process-wide statics the library builds once (compiled patterns, interned keys), not
//! leaks; `valgrind.supp` names the few such statics valgrind can only see as "possibly lost"
//! (a pointer into the middle of their allocation), each with what owns it.
//!
//! Not run by a plain `cargo test` (`test = false` in `ffi/Cargo.toml`): `scripts/ffi.sh`
//! installs valgrind when it is missing and runs `cargo test -p sitefile-ffi --test valgrind`.
//! Without valgrind every test here fails; none skips.

mod common;

use common::{
    compile, conformance_dir, conformance_runner, corpus_requests, crate_dir, root, run_ok,
};
use sitefile_benches::{corpus_available, corpus_dir, urls};
use std::path::Path;
use std::process::Command;

/// `valgrind` with the checks, ready for the program and its arguments.
fn valgrind() -> Command {
    let found = Command::new("valgrind").arg("--version").output();
    match found {
        Ok(out) if out.status.success() => {}
        _ => panic!(
            "valgrind is required by this test and was not found{}: install it \
             (`apt-get install -y valgrind`; scripts/ffi.sh does so on Debian)",
            if std::env::var("CI").as_deref() == Ok("true") {
                " on CI"
            } else {
                ""
            }
        ),
    }
    let mut command = Command::new("valgrind");
    command.args([
        "--leak-check=full",
        "--errors-for-leak-kinds=definite,indirect,possible",
        "--error-exitcode=1",
        "--track-origins=yes",
    ]);
    command.arg(format!(
        "--suppressions={}",
        crate_dir().join("tests/valgrind.supp").display()
    ));
    command
}

/// Runs `program args` under valgrind: it must succeed, print `expected`, and valgrind must
/// report no error and nothing lost.
fn clean(program: &Path, args: &[&Path], expected: &str) {
    let run = run_ok(valgrind().arg(program).args(args), expected);
    let report = String::from_utf8_lossy(&run.stderr);
    assert!(
        report.contains("ERROR SUMMARY: 0 errors from 0 contexts"),
        "{report}"
    );
    assert!(
        report.contains("All heap blocks were freed")
            || (report.contains("definitely lost: 0 bytes")
                && report.contains("indirectly lost: 0 bytes")
                && report.contains("possibly lost: 0 bytes")),
        "{report}"
    );
}

#[test]
fn the_api_program_is_clean() {
    let exe = compile(&crate_dir().join("tests/c/api.c"), "valgrind-api", &[]);
    clean(
        &exe,
        &[&root().join("examples/storefront")],
        "sitefile C API: all checks passed",
    );
}

#[test]
fn the_admin_and_edge_program_is_clean() {
    let exe = compile(&crate_dir().join("tests/c/admin.c"), "valgrind-admin", &[]);
    clean(&exe, &[], "sitefile C admin and edge: all checks passed");
}

#[test]
fn the_host_callbacks_program_is_clean() {
    let exe = compile(&crate_dir().join("tests/c/host.c"), "valgrind-host", &[]);
    clean(
        &exe,
        &[&crate_dir().join("tests/c/host-content.json")],
        "sitefile C host callbacks: all checks passed",
    );
}

#[test]
fn the_installed_program_is_clean() {
    let exe = compile(
        &crate_dir().join("tests/c/installed.c"),
        "valgrind-installed",
        &[],
    );
    clean(&exe, &[], "resolves pages");
}

#[test]
fn the_c_host_example_is_clean() {
    let exe = compile(
        &root().join("examples/c-host/main.c"),
        "valgrind-c-host",
        &[],
    );
    let site = root().join("examples/storefront");
    for url in [
        "https://storefront.example/",
        "https://storefront.example/shoes",
        "https://storefront.example/trail-runner/p",
    ] {
        clean(&exe, &[&site, Path::new(url)], "\"page\":\"pages-");
    }
}

/// The conformance runner over every suite it runs (`tests/conformance.rs`): a fresh site per
/// case, every call's results freed.
#[test]
fn the_conformance_runner_is_clean() {
    let exe = conformance_runner("valgrind-conformance");
    clean(
        &exe,
        &[&conformance_dir()],
        "sitefile C conformance: all cases passed",
    );
}

#[test]
fn the_threads_program_is_clean() {
    let exe = compile(
        &crate_dir().join("tests/c/threads.c"),
        "valgrind-threads",
        &["-pthread"],
    );
    // Fewer rounds: valgrind runs one thread at a time.
    clean(&exe, &[Path::new("5")], "none mixed; all checks passed");
}

/// Every corpus page through the C API (`tests/c/corpus.c`, as `tests/corpus.rs` runs it):
/// loading real content, resolving, the long strings' kept JSON, freeing the site.
#[test]
fn the_corpus_program_is_clean() {
    if !corpus_available("the_corpus_program_is_clean") {
        return;
    }
    let exe = compile(
        &crate_dir().join("tests/c/corpus.c"),
        "valgrind-corpus",
        &[],
    );
    for (site, urls) in urls() {
        let (_, requests) = corpus_requests(&site, &urls);
        clean(&exe, &[&corpus_dir().join(&site), &requests], "");
    }
}
