//! Every URL of the shared corpus (`../shared/corpus/urls.txt`, or `$SITEFILE_CORPUS`) resolves
//! for desktop and mobile visitors, with loaders answered by stub data. Prints per-site counts
//! of warnings and errors the content really contains.

use serde_json::json;
use sitefile_core::Request;
use sitefile_core::content::{Snapshot, blocks_from_files};
use sitefile_core::resolve::{ResolveConfig, Runtime};
use sitefile_core::value::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DESKTOP: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";
const MOBILE: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";

fn corpus_dir() -> PathBuf {
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

fn load_site(dir: &Path) -> Snapshot {
    let files = std::fs::read_dir(dir.join("blocks"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    let (blocks, problems) = blocks_from_files(files);
    for p in &problems {
        eprintln!("  load: {p}");
    }
    Snapshot::from_blocks(blocks)
}

#[derive(Default, Debug)]
struct Counts {
    urls: usize,
    sections: usize,
    loader_calls: usize,
    warnings: usize,
    errors: usize,
}

#[test]
fn every_corpus_url_resolves_on_desktop_and_mobile() {
    let corpus = corpus_dir();
    let urls = std::fs::read_to_string(corpus.join("urls.txt")).unwrap_or_else(|e| {
        panic!(
            "the corpus is required at {} (or set SITEFILE_CORPUS): {e}",
            corpus.display()
        )
    });
    let mut by_site: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for line in urls.lines().filter(|l| !l.trim().is_empty()) {
        let (site, url) = line.split_once(' ').expect("`<site> <url>` lines");
        by_site.entry(site).or_default().push(url.trim());
    }
    assert_eq!(by_site.len(), 6, "six corpus sites");
    let mut failures = Vec::new();
    for (site, urls) in &by_site {
        let snapshot = load_site(&corpus.join(site));
        let runtime = Runtime::new(snapshot, ResolveConfig::by_convention());
        let mut counts = Counts::default();
        for url in urls {
            for ua in [DESKTOP, MOBILE] {
                let request = Request::new(url)
                    .unwrap()
                    .with_header("user-agent", ua)
                    .with_now("2026-06-01T12:00:00Z".parse().unwrap());
                let mut calls = 0;
                let page = runtime.resolve_page(request).run(|call| {
                    calls += 1;
                    Ok(Value::from(json!({"stub": call.key})))
                });
                counts.urls += 1;
                counts.sections += page.sections.len();
                counts.loader_calls += calls;
                counts.warnings += page.effects.warnings.len();
                counts.errors += page.effects.errors.len();
                if page.page.is_none() {
                    failures.push(format!("{site} {url}: no page"));
                }
                if page.sections.is_empty() {
                    failures.push(format!("{site} {url}: no sections"));
                }
                for e in &page.effects.errors {
                    if e.context == "depth" || e.context == "cycle" {
                        failures.push(format!("{site} {url}: {} {}", e.context, e.message));
                    }
                }
            }
        }
        eprintln!("{site}: {counts:?}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
