//! Shared helpers of the benchmarks and the corpus test: reading the corpus
//! (`$SITEFILE_CORPUS`, else `../shared/corpus` beside the repository) and building requests.

mod scale;

pub use scale::{scaled_blocks, scaled_site_dir, write_scaled_site};
use sitefile_core::{Request, Snapshot, load_bundle};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A desktop browser's User-Agent.
pub const DESKTOP: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";

/// A phone browser's User-Agent.
pub const MOBILE: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";

/// Where the corpus lives: `$SITEFILE_CORPUS`, else `../shared/corpus` relative to the
/// repository root.
pub fn corpus_dir() -> PathBuf {
    match std::env::var_os("SITEFILE_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"),
    }
}

/// Whether the corpus is there, for a test that needs it. Without one the test should pass
/// without running: this says so on one line of stderr (written past the test harness's
/// capture, so `cargo test` shows it; `.config/nextest.toml` shows the corpus test's output
/// under nextest) and answers `false`. With `CI=true` a missing corpus is a failure instead: CI
/// must run every test.
pub fn corpus_available(test: &str) -> bool {
    let dir = corpus_dir();
    if dir.join("urls.txt").is_file() {
        return true;
    }
    let why = format!(
        "no corpus at {} (set SITEFILE_CORPUS, or place it at ../shared/corpus beside the repository)",
        dir.display()
    );
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{test}: {why}; CI=true requires the corpus"
    );
    // A failed write to stderr leaves nothing better to report it on.
    let _ = writeln!(std::io::stderr(), "{test}: did not run: {why}");
    false
}

/// The files of a site's blocks directory as `(file name, bytes)`.
pub fn site_files(site: &str) -> Vec<(String, Vec<u8>)> {
    let root = corpus_dir().join(site);
    let dir = sitefile_site_dir::blocks_dir(&root)
        .unwrap_or_else(|| panic!("{}: no blocks directory", root.display()));
    sitefile_site_dir::read_block_files(&dir)
        .unwrap_or_else(|e| panic!("{e}"))
        .files
}

/// Loads a site the way the command line does.
pub fn load_site(site: &str) -> Snapshot {
    sitefile_site_dir::load(&corpus_dir().join(site))
        .unwrap_or_else(|e| panic!("{e}"))
        .snapshot
}

/// The canonical bundle bytes of a site.
pub fn site_bundle(site: &str) -> Vec<u8> {
    load_site(site).canonical_bytes().to_vec()
}

/// Loads a site from bundle bytes.
pub fn bundle_snapshot(bytes: Vec<u8>) -> Snapshot {
    load_bundle(bytes).expect("a valid bundle")
}

/// The corpus URLs by site.
pub fn urls() -> BTreeMap<String, Vec<String>> {
    let text = std::fs::read_to_string(corpus_dir().join("urls.txt")).expect("corpus urls.txt");
    let mut by_site: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Some((site, url)) = line.split_once(' ') {
            by_site
                .entry(site.to_string())
                .or_default()
                .push(url.trim().to_string());
        }
    }
    by_site
}

/// A desktop request for `url` at a fixed instant.
pub fn request(url: &str) -> Request {
    Request::new(url)
        .expect("corpus URLs are absolute")
        .with_header("user-agent", DESKTOP)
        .with_now("2026-06-01T12:00:00Z".parse().expect("a valid instant"))
}
