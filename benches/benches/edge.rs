//! Edge policy per request: cache-key building and profile detection (target: under 1 µs
//! each), over the corpus URLs with a phone user agent, tracking parameters and geo headers.

// `criterion_group!` defines a public function it gives no documentation.
#![allow(missing_docs)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sitefile_benches::urls;
use sitefile_core::Request;
use sitefile_core::edge::WorkerOptions;
use sitefile_core::edge::{KeyContext, build_cache_key, detect_profile};
use std::hint::black_box;

const UA: &str = "Mozilla/5.0 (Linux; Android 13; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36";

fn requests() -> Vec<Request> {
    urls()
        .into_values()
        .flatten()
        .filter_map(|u| {
            let sep = if u.contains('?') { '&' } else { '?' };
            Request::new(&format!("{u}{sep}utm_source=newsletter&page=2&gclid=abc"))
                .ok()
                .map(|r| {
                    r.with_header("user-agent", UA)
                        .with_header("cf-ipcountry", "BR")
                        .with_header("cf-region-code", "SP")
                })
        })
        .collect()
}

fn edge(c: &mut Criterion) {
    let requests = requests();
    let options = WorkerOptions::default();
    let ctx = KeyContext {
        version: Some("3f9a1b2c"),
        uses_location: true,
        cohort: Some("HeroTest:1:50"),
        segment: None,
    };
    let one = &requests[requests.len() / 2];

    let mut group = c.benchmark_group("edge");
    group.bench_function("cache_key/one", |b| {
        b.iter(|| build_cache_key(black_box(one), &options, &ctx))
    });
    group.bench_function("profile/one", |b| {
        b.iter(|| detect_profile(black_box(one).url(), None))
    });
    group.throughput(Throughput::Elements(requests.len() as u64));
    group.bench_function(format!("cache_key/corpus ({} urls)", requests.len()), |b| {
        b.iter(|| {
            for r in &requests {
                black_box(build_cache_key(r, &options, &ctx));
            }
        })
    });
    group.bench_function(format!("profile/corpus ({} urls)", requests.len()), |b| {
        b.iter(|| {
            for r in &requests {
                black_box(detect_profile(r.url(), None));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, edge);
criterion_main!(benches);
