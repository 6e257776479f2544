//! Shared helpers of the benchmarks: reading the corpus (`../shared/corpus`, or
//! `$SITEFILE_CORPUS`) and building requests.

use sitefile_core::Request;

use sitefile_core::content::{Snapshot, blocks_from_files, load_bundle, write_bundle};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A desktop browser's User-Agent.
pub const DESKTOP: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";

/// Where the corpus lives.
pub fn corpus_dir() -> PathBuf {
    // `$SITEFILE_CORPUS`, else `../shared/corpus` beside the repository, else the shared
    // location on build machines.
    if let Some(dir) = std::env::var_os("SITEFILE_CORPUS") {
        return PathBuf::from(dir);
    }
    let beside = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    if beside.is_dir() {
        beside
    } else {
        PathBuf::from("/work/shared/corpus")
    }
}

/// The files of a site's blocks directory as `(file name, bytes)`.
pub fn site_files(site: &str) -> Vec<(String, Vec<u8>)> {
    let dir = corpus_dir().join(site).join("blocks");
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let path = e.expect("directory entry").path();
            let name = path
                .file_name()
                .expect("file name")
                .to_string_lossy()
                .into_owned();
            (name, std::fs::read(&path).expect("readable block file"))
        })
        .collect()
}

/// Loads a site from its files.
pub fn load_site(site: &str) -> Snapshot {
    Snapshot::from_blocks(blocks_from_files(site_files(site)).0)
}

/// The canonical bundle bytes of a site.
pub fn site_bundle(site: &str) -> Vec<u8> {
    let snapshot = load_site(site);
    write_bundle(snapshot.blocks())
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
