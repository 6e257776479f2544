//! The C programs under `valgrind --leak-check=full --error-exitcode=1`, against the library a
//! host ships: the release build (`cargo build --release -p sitefile-ffi`, what
//! `scripts/install-ffi.sh` installs), built here when missing. Release code is not debug code
//! with optimisations: a dependency may take another path under `debug_assertions` (sonic-rs's
//! string escaper loads 32 bytes at a string's tail, reading up to 31 bytes past its heap block
//! — memcheck's "Invalid read of size 16" in `format_string` — in release only, unless the
//! `valgrind-clean` feature turns on its `sanitize`), so the shipped library is what must be
//! clean.
//!
//! Every program must show no memory error and no definite or indirect leak. The release
//! library is stripped, so valgrind cannot name its frames (for named frames, build it with
//! `CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=line-tables-only`, as a
//! failure's hint says): "possibly lost" blocks (a pointer into the middle of an allocation, as
//! hashbrown tables have) cannot be told apart from the process-wide statics that own them, and
//! are checked on the debug build instead, where `valgrind.supp` names each such static with
//! what owns it (`the_debug_library_loses_nothing_possibly`). Still-reachable blocks (about
//! 160 KB, the same for every program) are those statics (compiled patterns, interned keys),
//! not leaks.
//!
//! Not run by a plain `cargo test` (`test = false` in `ffi/Cargo.toml`): `scripts/ffi.sh`
//! installs valgrind when it is missing and runs `cargo test --workspace --test valgrind`.
//! Without valgrind every test here fails; none skips.

mod common;

use common::{
    cjson_flags, compile_against, conformance_dir, corpus_requests, crate_dir, library_dir,
    release_library_dir, root, run_ok,
};
use sitefile_benches::{corpus_available, corpus_dir, urls};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Which `libsitefile` a program links and how valgrind's report is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Library {
    /// The release build a host ships (stripped): no error, no definite or indirect leak.
    Release,
    /// This test's debug build (`target/debug`, named frames): no error and nothing lost, a
    /// "possibly lost" block included unless `valgrind.supp` names its owner.
    Debug,
}

impl Library {
    /// Compiles `source` against this library into `CARGO_TARGET_TMPDIR/valgrind-<profile>-<name>`.
    fn compile(self, source: &Path, name: &str, extra: &[&str]) -> PathBuf {
        let (dir, profile) = match self {
            Library::Release => (release_library_dir(), "release"),
            Library::Debug => (library_dir(), "debug"),
        };
        let exe = compile_against(&dir, source, &format!("valgrind-{profile}-{name}"), extra);
        // cargo puts target/<profile>/deps on LD_LIBRARY_PATH, which the loader searches before
        // the program's runpath: valgrind runs without it, and the program must load this
        // library, not the test's own build of it.
        let loaded = Command::new(&exe)
            .env("LD_TRACE_LOADED_OBJECTS", "1")
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .unwrap_or_else(|e| panic!("cannot list what {} loads: {e}", exe.display()));
        let so = dir.join("libsitefile.so");
        assert!(
            String::from_utf8_lossy(&loaded.stdout).contains(&format!("=> {}", so.display())),
            "{} does not load {}:\n{}",
            exe.display(),
            so.display(),
            String::from_utf8_lossy(&loaded.stdout)
        );
        exe
    }

    /// The leak kinds valgrind counts as errors.
    fn leak_kinds(self) -> &'static str {
        match self {
            Library::Release => "--errors-for-leak-kinds=definite,indirect",
            Library::Debug => "--errors-for-leak-kinds=definite,indirect,possible",
        }
    }
}

/// `valgrind` with the checks for `library`, ready for the program and its arguments.
fn valgrind(library: Library) -> Command {
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
    // The program's runpath names its library (checked by `Library::compile`); cargo's
    // LD_LIBRARY_PATH would load the test's debug build instead.
    command.env_remove("LD_LIBRARY_PATH");
    command.args([
        "--leak-check=full",
        library.leak_kinds(),
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
/// report no error and nothing lost (of the kinds `library` checks).
fn clean(library: Library, program: &Path, args: &[&Path], expected: &str) {
    let run = run_ok(valgrind(library).arg(program).args(args), expected);
    let report = String::from_utf8_lossy(&run.stderr);
    let hint = match library {
        Library::Release => {
            "\n(the release library is stripped: for named frames, build it with \
             CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=line-tables-only)"
        }
        Library::Debug => "",
    };
    assert!(
        report.contains("ERROR SUMMARY: 0 errors from 0 contexts"),
        "{report}{hint}"
    );
    let lost = |kind: &str| report.contains(&format!("{kind} lost: 0 bytes"));
    assert!(
        report.contains("All heap blocks were freed")
            || (lost("definitely")
                && lost("indirectly")
                && (library == Library::Release || lost("possibly"))),
        "{report}{hint}"
    );
}

/// A C test program of `ffi/tests/c/`.
fn c_test(name: &str) -> PathBuf {
    crate_dir().join("tests/c").join(name)
}

/// The conformance runner (`tests/c/conformance.c`) with cJSON, against `library`.
fn conformance_runner(library: Library) -> PathBuf {
    let flags = cjson_flags();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    library.compile(&c_test("conformance.c"), "conformance", &flags)
}

#[test]
fn the_api_program_is_clean() {
    let exe = Library::Release.compile(&c_test("api.c"), "api", &[]);
    clean(
        Library::Release,
        &exe,
        &[&root().join("examples/storefront")],
        "sitefile C API: all checks passed",
    );
}

#[test]
fn the_admin_and_edge_program_is_clean() {
    let exe = Library::Release.compile(&c_test("admin.c"), "admin", &[]);
    clean(
        Library::Release,
        &exe,
        &[],
        "sitefile C admin and edge: all checks passed",
    );
}

#[test]
fn the_host_callbacks_program_is_clean() {
    let exe = Library::Release.compile(&c_test("host.c"), "host", &[]);
    clean(
        Library::Release,
        &exe,
        &[&c_test("host-content.json")],
        "sitefile C host callbacks: all checks passed",
    );
}

#[test]
fn the_installed_program_is_clean() {
    let exe = Library::Release.compile(&c_test("installed.c"), "installed", &[]);
    clean(Library::Release, &exe, &[], "resolves pages");
}

#[test]
fn the_c_host_example_is_clean() {
    let exe = Library::Release.compile(&root().join("examples/c-host/main.c"), "c-host", &[]);
    let site = root().join("examples/storefront");
    for url in [
        "https://storefront.example/",
        "https://storefront.example/shoes",
        "https://storefront.example/trail-runner/p",
    ] {
        clean(
            Library::Release,
            &exe,
            &[&site, Path::new(url)],
            "\"page\":\"pages-",
        );
    }
}

/// The conformance runner over every suite it runs (`tests/conformance.rs`): a fresh site per
/// case, every call's results freed.
#[test]
fn the_conformance_runner_is_clean() {
    let exe = conformance_runner(Library::Release);
    clean(
        Library::Release,
        &exe,
        &[&conformance_dir()],
        "sitefile C conformance: all cases passed",
    );
}

#[test]
fn the_threads_program_is_clean() {
    let exe = Library::Release.compile(&c_test("threads.c"), "threads", &["-pthread"]);
    // Fewer rounds: valgrind runs one thread at a time.
    clean(
        Library::Release,
        &exe,
        &[Path::new("5")],
        "none mixed; all checks passed",
    );
}

/// Every corpus page through the C API (`tests/c/corpus.c`, as `tests/corpus.rs` runs it):
/// loading real content, resolving, the long strings' kept JSON, freeing the site.
#[test]
fn the_corpus_program_is_clean() {
    if !corpus_available("the_corpus_program_is_clean") {
        return;
    }
    let exe = Library::Release.compile(&c_test("corpus.c"), "corpus", &[]);
    for (site, urls) in urls() {
        let (_, requests) = corpus_requests(&site, &urls);
        clean(
            Library::Release,
            &exe,
            &[&corpus_dir().join(&site), &requests],
            "",
        );
    }
}

/// "Possibly lost" blocks, which the stripped release library cannot attribute, on the debug
/// build whose frames `valgrind.supp` matches, for `admin.c`: it fills the User-Agent patterns'
/// lazy-DFA tables and the static pattern cache the suppressions describe (a few seconds). The
/// conformance runner fills more of them, but takes two minutes in a debug build on 2 cores; a
/// leak of ours is definite or indirect, which every release run checks.
#[test]
fn the_debug_library_loses_nothing_possibly() {
    let exe = Library::Debug.compile(&c_test("admin.c"), "admin", &[]);
    clean(
        Library::Debug,
        &exe,
        &[],
        "sitefile C admin and edge: all checks passed",
    );
}
