//! What the C tests share: the built library, the C compiler and running programs.

#![allow(dead_code)] // each test binary uses its own part

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `ffi/` crate directory.
pub fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace root.
pub fn root() -> &'static Path {
    crate_dir().parent().expect("the workspace root")
}

/// The directory holding this build's `libsitefile.so` (cargo builds the library's cdylib
/// next to the test binaries, in `target/<profile>/deps`).
pub fn library_dir() -> PathBuf {
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

/// The C compiler: `$CC`, else `cc`.
pub fn compiler() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

/// Compiles one C source against `include/sitefile.h` and the built shared library, with
/// `-Wall -Wextra -Werror -pedantic`, into `CARGO_TARGET_TMPDIR/<name>`. No C compiler is a
/// failure, not a skip.
pub fn compile(source: &Path, name: &str, extra: &[&str]) -> PathBuf {
    compile_against(&library_dir(), source, name, extra)
}

/// [`compile`] against the `libsitefile` in `lib` (linked with an rpath to it: an old-style
/// `DT_RPATH`, which outranks `LD_LIBRARY_PATH`, since `cargo test` puts `target/debug` there,
/// whose `libsitefile.so` is the last `cargo build`'s and may be older than this test's).
pub fn compile_against(lib: &Path, source: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let compiler = compiler();
    let compiled = Command::new(&compiler)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g"])
        .arg("-I")
        .arg(root().join("include"))
        .arg(source)
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(lib)
        .arg(format!("-Wl,--disable-new-dtags,-rpath,{}", lib.display()))
        .arg("-lsitefile")
        .args(extra)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{compiler}`: {e}"));
    assert!(
        compiled.status.success(),
        "{} does not compile:\n{}",
        source.display(),
        String::from_utf8_lossy(&compiled.stderr)
    );
    exe
}

/// Runs a command to its end and asserts it succeeded and printed `expected`.
pub fn run_ok(command: &mut Command, expected: &str) -> Output {
    let run = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "{command:?} failed ({}):\n{stdout}\n{stderr}",
        run.status
    );
    assert!(
        stdout.contains(expected),
        "{command:?}:\n{stdout}\n{stderr}"
    );
    run
}

/// The release library a host installs, built once per test process with `cargo build
/// --release -p sitefile-ffi --locked` into this build's target directory (what
/// `scripts/install-ffi.sh` builds and installs, so a script running both builds it once), and
/// its directory (`target/release`). A failed build is a failure, not a skip.
pub fn release_library_dir() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            // target/<profile>/deps -> target
            let target = library_dir()
                .parent()
                .and_then(Path::parent)
                .expect("the target directory")
                .to_path_buf();
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
            let built = Command::new(&cargo)
                .args(["build", "--release", "--locked", "-p", "sitefile-ffi"])
                .arg("--target-dir")
                .arg(&target)
                .current_dir(root())
                .output()
                .unwrap_or_else(|e| panic!("cannot run `{cargo} build --release`: {e}"));
            assert!(
                built.status.success(),
                "cargo build --release -p sitefile-ffi failed:\n{}",
                String::from_utf8_lossy(&built.stderr)
            );
            let dir = target.join("release");
            let so = dir.join(format!(
                "{}sitefile{}",
                std::env::consts::DLL_PREFIX,
                std::env::consts::DLL_SUFFIX
            ));
            assert!(so.exists(), "{} was not built", so.display());
            dir
        })
        .clone()
}

/// Installs this build's library with `scripts/install-ffi.sh --from` into a fresh prefix
/// `name` under the tests' temporary directory, and returns the prefix.
pub fn install(name: &str) -> PathBuf {
    let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&prefix);
    run_ok(
        Command::new("bash")
            .arg(root().join("scripts/install-ffi.sh"))
            .arg("--from")
            .arg(library_dir())
            .arg(&prefix),
        "installed sitefile",
    );
    prefix
}

/// The request forms of a corpus site's URLs, for a desktop and a mobile visitor (the input of
/// `tests/c/corpus.c`), and the file holding them one per line, in `CARGO_TARGET_TMPDIR`.
pub fn corpus_requests(site: &str, urls: &[String]) -> (Vec<String>, PathBuf) {
    use sitefile_benches::{DESKTOP, MOBILE};
    let forms: Vec<String> = urls
        .iter()
        .flat_map(|url| [DESKTOP, MOBILE].map(|ua| (url, ua)))
        .map(|(url, ua)| {
            serde_json::json!({
                "url": url,
                "headers": [["user-agent", ua]],
                "now": "2026-06-01T12:00:00Z",
                "seed": 7,
            })
            .to_string()
        })
        .collect();
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("corpus-{site}.jsonl"));
    std::fs::write(&file, forms.join("\n")).expect("the requests file is writable");
    (forms, file)
}

/// The compiler flags of Debian's cJSON (`pkg-config --cflags --libs libcjson`), which the
/// conformance runner (`tests/c/conformance.c`) reads its cases with. Installs `libcjson-dev`
/// with `scripts/need.sh` when it is missing (as root or with passwordless sudo); a cJSON that
/// cannot be installed is a failure, not a skip.
pub fn cjson_flags() -> Vec<String> {
    let installed = Command::new("bash")
        .arg("-c")
        .arg("source scripts/need.sh && need_lib libcjson libcjson-dev")
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| panic!("cannot run bash for scripts/need.sh: {e}"));
    assert!(
        installed.status.success(),
        "cJSON is required by the C conformance runner and could not be installed \
         (`apt-get install -y libcjson-dev`):\n{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    pkg_config(&["--cflags", "--libs"], "libcjson", None)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// `pkg-config ARGS MODULE`, trimmed; with `path`, against the `.pc` files there only
/// (`PKG_CONFIG_PATH`).
pub fn pkg_config(args: &[&str], module: &str, path: Option<&Path>) -> String {
    let mut command = Command::new("pkg-config");
    command.args(args).arg(module);
    if let Some(path) = path {
        command.env("PKG_CONFIG_PATH", path);
    }
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run pkg-config (install pkg-config or pkgconf): {e}"));
    assert!(
        out.status.success(),
        "pkg-config {args:?} {module} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The conformance runner (`tests/c/conformance.c`) compiled with cJSON into
/// `CARGO_TARGET_TMPDIR/<name>`.
pub fn conformance_runner(name: &str) -> PathBuf {
    let flags = cjson_flags();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    compile(&crate_dir().join("tests/c/conformance.c"), name, &flags)
}

/// The conformance tree at the repository root (`tests/conformance/`).
pub fn conformance_dir() -> PathBuf {
    root().join("tests/conformance")
}
