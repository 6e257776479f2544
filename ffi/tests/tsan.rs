//! `tests/c/threads.c` under ThreadSanitizer, with no suppression: the library *and its std*
//! built with `-Zsanitizer=thread`, the C program compiled with `-fsanitize=thread`, and not one
//! report allowed.
//!
//! The std must be instrumented too: against the prebuilt std, TSan reports the first use of
//! each `LazyLock` (the futex `Once` that publishes it is not instrumented) and last `Arc` drops
//! (the `Acquire` fence of `Arc::drop`, which TSan does not model) — 22 false reports in a
//! 20-round run, all in std/alloc code paths our own code also runs through, so no suppression
//! could tell them from real races. With std instrumented there are none, and a racy C control
//! linked the same way is reported. Rebuilding std needs its source matching the compiler
//! exactly, which rustup cannot give offline (no `rust-src` component here; crates.io does not
//! carry std, and another release's source does not build with this compiler), so this test
//! uses Debian's own pair, from apt: `rustc-web` and `cargo-web` with `rust-web-src` (the same
//! source package, so always the same version), `-Zbuild-std` and `-Zsanitizer` unlocked with
//! `RUSTC_BOOTSTRAP=1`; the TSan runtime is LLVM's (`libclang-rt-19-dev`), linked into the
//! C program (GCC 12's libtsan lacks the `__tsan_memcpy` family that rustc's LLVM emits).
//!
//! Not run by a plain `cargo test` (`test = false` in `ffi/Cargo.toml`): it installs those
//! packages when missing (as root or with passwordless sudo, `scripts/need.sh`) and builds
//! std and the library in `target/tsan` (about 5 minutes cold on 2 cores). Run it with
//! `cargo test -p sitefile-ffi --locked --test tsan`; without the packages it fails, never
//! skips.

mod common;

use common::{compiler, crate_dir, root, run_ok};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Debian's compiler, cargo and std source (`rustc-web`, `cargo-web`, `rust-web-src`) and
/// LLVM's TSan runtime (`libclang-rt-19-dev`): each file and the package that provides it.
const NEEDED: [(&str, &str); 4] = [
    ("/usr/bin/rustc", "rustc-web"),
    ("/usr/bin/cargo", "cargo-web"),
    (
        "/usr/lib/rustlib/src/rust/library/Cargo.lock",
        "rust-web-src",
    ),
    (RUNTIME, "libclang-rt-19-dev"),
];
const RUNTIME: &str = "/usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.tsan-x86_64.a";
const TARGET: &str = "x86_64-unknown-linux-gnu";

/// Installs what `NEEDED` lists when a file is missing; a file still missing is a failure.
fn ensure_toolchain() {
    for (file, package) in NEEDED {
        if Path::new(file).exists() {
            continue;
        }
        let _ = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source scripts/need.sh && need_install {package} {file}"
            ))
            .current_dir(root())
            .status();
        assert!(
            Path::new(file).exists(),
            "{file} is required by the ThreadSanitizer test and could not be installed \
             (`apt-get install -y {package}`)"
        );
    }
}

/// Builds std and the library (`libsitefile.so`) with `-Zsanitizer=thread` in `target/tsan`,
/// and returns the directory holding the library.
fn build_library() -> PathBuf {
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("tsan");
    let mut command = Command::new("/usr/bin/cargo");
    command
        .args([
            "build",
            "-Zbuild-std",
            "-p",
            "sitefile-ffi",
            "--lib",
            "--locked",
        ])
        .args(["--target", TARGET])
        .current_dir(root())
        // Only what this build sets: nothing from the cargo running this test.
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", std::env::var_os("HOME").unwrap_or_default())
        .env("RUSTC", "/usr/bin/rustc")
        .env("RUSTC_BOOTSTRAP", "1")
        .env("RUSTFLAGS", "-Zsanitizer=thread")
        .env("CARGO_TARGET_DIR", &target_dir);
    if let Some(cargo_home) = std::env::var_os("CARGO_HOME") {
        command.env("CARGO_HOME", cargo_home);
    }
    let built = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run /usr/bin/cargo: {e}"));
    assert!(
        built.status.success(),
        "the ThreadSanitizer build failed:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let lib = target_dir.join(TARGET).join("debug");
    assert!(
        lib.join("libsitefile.so").exists(),
        "{} was not built",
        lib.display()
    );
    lib
}

/// Compiles `tests/c/threads.c` with `-fsanitize=thread` and links it with LLVM's TSan
/// runtime (exported, so the library's instrumentation finds it) and the instrumented library.
fn compile_threads(lib: &Path) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let object = dir.join("tsan-threads.o");
    let exe = dir.join("tsan-threads");
    let compiler = compiler();
    let compiled = Command::new(&compiler)
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-g",
            "-O1",
        ])
        .arg("-fsanitize=thread")
        .arg("-I")
        .arg(root().join("include"))
        .arg("-c")
        .arg(crate_dir().join("tests/c/threads.c"))
        .arg("-o")
        .arg(&object)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{compiler}`: {e}"));
    assert!(
        compiled.status.success(),
        "threads.c does not compile with -fsanitize=thread:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let linked = Command::new(&compiler)
        .arg(&object)
        .args([
            "-Wl,--whole-archive",
            RUNTIME,
            "-Wl,--no-whole-archive",
            "-rdynamic",
        ])
        .arg("-L")
        .arg(lib)
        // DT_RPATH, which outranks LD_LIBRARY_PATH: the uninstrumented library cargo builds
        // for the other tests must never be the one loaded.
        .arg("-Wl,--disable-new-dtags")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lsitefile", "-pthread", "-ldl", "-lm", "-lrt", "-o"])
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{compiler}`: {e}"));
    assert!(
        linked.status.success(),
        "threads.c does not link with the TSan runtime:\n{}",
        String::from_utf8_lossy(&linked.stderr)
    );
    exe
}

#[test]
fn the_threads_program_has_no_data_race() {
    ensure_toolchain();
    let lib = build_library();
    let exe = compile_threads(&lib);
    let loaded = Command::new("ldd")
        .arg(&exe)
        .env(
            "LD_LIBRARY_PATH",
            std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default(),
        )
        .output()
        .expect("ldd runs");
    let loaded = String::from_utf8_lossy(&loaded.stdout);
    assert!(
        loaded.contains(&format!("{}/libsitefile.so", lib.display())),
        "the program must load the instrumented library:\n{loaded}"
    );
    // TSan's own exit code on a report is 66; `halt_on_error=0` lets a run show them all.
    // Reports name functions and lines only with a recent llvm-symbolizer (Debian's default
    // one, LLVM 14, is refused by this runtime).
    let mut options = "halt_on_error=0 second_deadlock_stack=1".to_string();
    if let Some(symbolizer) = ["/usr/lib/llvm-22/bin", "/usr/lib/llvm-19/bin"]
        .iter()
        .map(|dir| Path::new(dir).join("llvm-symbolizer"))
        .find(|path| path.exists())
    {
        options.push_str(&format!(
            " external_symbolizer_path={}",
            symbolizer.display()
        ));
    }
    // Without cargo's LD_LIBRARY_PATH (its `deps` hold the uninstrumented libsitefile.so).
    let run = run_ok(
        Command::new(&exe)
            .arg("200")
            .env_remove("LD_LIBRARY_PATH")
            .env("TSAN_OPTIONS", options),
        "none mixed; all checks passed",
    );
    let report = String::from_utf8_lossy(&run.stderr);
    assert!(!report.contains("ThreadSanitizer"), "{report}");
}
