//! Resolution over the corpus: a page per URL, loading from a directory and a bundle, the
//! revision and route lookup alone.

// `criterion_group!` defines a public function it gives no documentation.
#![allow(missing_docs)]

use criterion::BatchSize;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use sitefile_benches::{
    bundle_snapshot, load_site, request, scaled_site_dir, site_bundle, site_files, urls,
};
use sitefile_core::content::{Snapshot, blocks_from_files, plan_reload};
use sitefile_core::resolve::{RequestOptions, ResolveConfig, Runtime};
use sitefile_core::value::{Value, intern};
use sitefile_core::{NoHost, Request};
use std::hint::black_box;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Resolves every request on `runtime`; with `serialise`, also writes each page as the JSON bytes
/// a binding hands its host.
fn resolve_all(runtime: &Runtime, requests: &[Request], options: &RequestOptions, serialise: bool) {
    for r in requests {
        let page = runtime
            .resolve_page_with(r.clone(), options.clone(), &NoHost)
            .run(|_| Ok(Value::Null));
        if serialise {
            black_box(page.to_json_bytes());
        } else {
            black_box(page);
        }
    }
}

fn resolve_pages(c: &mut Criterion) {
    let mut group = c.benchmark_group("resolve_page");
    for (site, urls) in urls() {
        let runtime = Runtime::new(load_site(&site), ResolveConfig::by_convention());
        let requests: Vec<_> = urls.iter().map(|u| request(u)).collect();
        // One iteration resolves every URL of the site; divide by the count for a page.
        // `warm` is the steady state (page and layout caches filled); `cold` bypasses them, as
        // a draft or preview request does, so every request runs the whole synchronous pass;
        // `+serialise` also writes the page as the JSON bytes a binding hands its host. The
        // content keeps the JSON of its large static subtrees once a page has written them, and
        // that survives the bypass (it belongs to the content, not to a cache of pages): every
        // iteration but the first finds it filled. `first_serialise` has the cost without it.
        let variants = [
            ("warm", false, false),
            ("cold", true, false),
            ("warm+serialise", false, true),
            ("cold+serialise", true, true),
        ];
        for (label, bypass_caches, serialise) in variants {
            let options = RequestOptions {
                bypass_caches,
                ..RequestOptions::default()
            };
            group.bench_with_input(
                BenchmarkId::new(format!("{label}/{site} ({} urls)", requests.len()), ""),
                &requests,
                |b, requests| b.iter(|| resolve_all(&runtime, requests, &options, serialise)),
            );
        }
    }
    group.finish();
}

/// Cold resolve + serialise of every URL of a site on content no page has been written from
/// yet: each iteration gets a freshly loaded runtime (loading is not timed), so the content's
/// kept JSON is written by these very pages, as after a deploy or reload. The untimed setup
/// also resolves every URL once without writing it, so what else a first request builds
/// lazily (route expressions, parsed matchers) is not counted here: only the JSON is cold.
fn first_serialise(c: &mut Criterion) {
    let mut group = c.benchmark_group("resolve_page/first_serialise");
    // Each iteration loads a site untimed: keep the number of iterations small.
    group.sample_size(10);
    group.warm_up_time(std::time::Duration::from_millis(300));
    group.measurement_time(std::time::Duration::from_secs(1));
    let options = RequestOptions {
        bypass_caches: true,
        ..RequestOptions::default()
    };
    for (site, urls) in urls() {
        let requests: Vec<_> = urls.iter().map(|u| request(u)).collect();
        group.bench_with_input(
            BenchmarkId::new(
                format!("cold+serialise/{site} ({} urls)", requests.len()),
                "",
            ),
            &requests,
            |b, requests| {
                b.iter_batched(
                    || {
                        let runtime =
                            Runtime::new(load_site(&site), ResolveConfig::by_convention());
                        resolve_all(&runtime, requests, &options, false);
                        runtime
                    },
                    |runtime| {
                        resolve_all(&runtime, requests, &options, true);
                        runtime
                    },
                    BatchSize::PerIteration,
                )
            },
        );
    }
    group.finish();
}

/// A loader answer of about 20 KB: a product list as a commerce loader returns one.
fn loader_answer_json() -> String {
    let products: Vec<String> = (0..40)
        .map(|i| {
            format!(
                r#"{{"productID":"{i}","name":"Óculos de sol \"modelo {i}\"","url":"/oculos-{i}/p","description":"<p class=\"desc\">Armação em acetato, lentes com proteção UV400 — ideal para o dia a dia. Modelo {i}, coleção verão.</p>","offers":{{"price":{}.9,"listPrice":{}.9,"availability":"https://schema.org/InStock"}},"image":[{{"url":"https://cdn.example.com/img/{i}/1.jpg","alternateName":"frente"}},{{"url":"https://cdn.example.com/img/{i}/2.jpg","alternateName":"lado"}}],"additionalProperty":[{{"name":"cor","value":"preto"}},{{"name":"material","value":"acetato"}}]}}"#,
                100 + i,
                150 + i
            )
        })
        .collect();
    format!(r#"{{"products":[{}],"total":40}}"#, products.join(","))
}

/// Serialising every page of a site whose loaders each answer a ~20 KB object parsed from text
/// per call, as a binding parses its host's answer: the loader path, where every value is
/// written once (the corpus's own loaders answer `null`, which hides it). Each iteration
/// resolves the pages afresh, untimed, so every answer is new; only `to_json_bytes` is timed.
/// The content's kept JSON is warm after the first iteration, as in steady state.
fn loader_answers(c: &mut Criterion) {
    let mut group = c.benchmark_group("resolve_page/loader_answers");
    group.sample_size(30);
    let answer = loader_answer_json();
    let options = RequestOptions {
        bypass_caches: true,
        ..RequestOptions::default()
    };
    // The corpus site whose pages call the most loaders.
    let site = "otica-isabela";
    let runtime = Runtime::new(load_site(site), ResolveConfig::by_convention());
    let requests: Vec<_> = urls()[site].iter().map(|u| request(u)).collect();
    let mut calls = 0;
    for r in &requests {
        runtime
            .resolve_page_with(r.clone(), options.clone(), &NoHost)
            .run(|_| {
                calls += 1;
                Ok(Value::Null)
            });
    }
    let label = format!(
        "serialise, {calls} answers of {} KB/{site} ({} urls)",
        answer.len() / 1000,
        requests.len()
    );
    group.bench_function(BenchmarkId::new(label, ""), |b| {
        b.iter_batched(
            || {
                requests
                    .iter()
                    .map(|r| {
                        runtime
                            .resolve_page_with(r.clone(), options.clone(), &NoHost)
                            .run(|_| Value::from_json_str(&answer).map_err(|e| e.0))
                    })
                    .collect::<Vec<_>>()
            },
            |pages| {
                for page in &pages {
                    black_box(page.to_json_bytes());
                }
                pages
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

fn load(c: &mut Criterion) {
    let mut group = c.benchmark_group("load");
    group.sample_size(20);
    for site in ["lojaintegradar", "otica-isabela", "abracasa"] {
        let files = site_files(site);
        group.bench_function(BenchmarkId::new("directory", site), |b| {
            b.iter_batched(|| files.clone(), blocks_from_files, BatchSize::LargeInput)
        });
        let bundle = site_bundle(site);
        group.bench_function(BenchmarkId::new("bundle", site), |b| {
            b.iter_batched(|| bundle.clone(), bundle_snapshot, BatchSize::LargeInput)
        });
        group.bench_function(BenchmarkId::new("bundle+revision", site), |b| {
            b.iter_batched(
                || bundle.clone(),
                |bytes| bundle_snapshot(bytes).revision().len(),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

fn revision_and_routes(c: &mut Criterion) {
    let mut group = c.benchmark_group("routes");
    for (site, urls) in urls() {
        let snapshot = load_site(&site);
        let paths: Vec<String> = urls.iter().map(|u| request(u).path().to_string()).collect();
        group.bench_function(
            BenchmarkId::new(format!("lookup ({} paths)", paths.len()), &site),
            |b| {
                b.iter(|| {
                    for p in &paths {
                        black_box(snapshot.routes().find(p));
                    }
                })
            },
        );
    }
    group.finish();
    let bundle = site_bundle("lojaintegradar");
    c.bench_function("revision/lojaintegradar (cold)", |b| {
        b.iter_batched(
            || bundle_snapshot(bundle.clone()),
            |s| s.revision().len(),
            BatchSize::LargeInput,
        )
    });
    // A reload that changes one page block: the other blocks keep their digests.
    let current = bundle_snapshot(bundle);
    current.revision();
    let body = one_block_delta(&current);
    let now = "2026-06-01T12:00:00Z".parse().expect("a valid instant");
    c.bench_function("revision/lojaintegradar (one-block delta reload)", |b| {
        b.iter(|| black_box(plan_reload(&current, &body, now).map(|o| o.response.revision)))
    });
}

/// One-block delta reloads through the site (what the editor's every save costs: the new
/// snapshot, its revision, routes and every fact derived from it) on corpus sites and on copies
/// of them ten and a hundred times larger, beside a full reload of the largest.
fn scaled_reloads(c: &mut Criterion) {
    use sitefile_core::{Site, SiteSetup};
    let mut group = c.benchmark_group("reload");
    group.sample_size(20);
    let now = "2026-06-01T12:00:00Z".parse().expect("a valid instant");
    for (site, factor) in [
        ("lojaintegradar", 1),
        ("lojaintegradar", 10),
        ("lojaintegradar", 100),
        ("dryzunstore", 1),
        ("dryzunstore", 10),
        ("dryzunstore", 100),
    ] {
        let snapshot = match factor {
            1 => load_site(site),
            _ => {
                sitefile_site_dir::load(&scaled_site_dir(site, factor))
                    .unwrap_or_else(|e| panic!("{e}"))
                    .snapshot
            }
        };
        let label = format!("{site} x{factor} ({} blocks)", snapshot.len());
        // Two edits of one page block, alternated so that every reload changes the content.
        let edits = [
            one_block_delta_set(&snapshot, true),
            one_block_delta_set(&snapshot, false),
        ];
        let setup = SiteSetup::new(
            ResolveConfig::by_convention(),
            Default::default(),
            Default::default(),
        );
        let Ok(handle) = Site::new(snapshot, setup) else {
            panic!("{site}: the default setup is valid");
        };
        let mut turn = 0usize;
        group.bench_function(BenchmarkId::new("one-block delta", &label), |b| {
            b.iter(|| {
                turn += 1;
                black_box(handle.reload(&edits[turn % 2], now).expect("a valid delta"))
            })
        });
        if factor == 100 && site == "lojaintegradar" {
            let full = handle.snapshot().canonical_bytes().to_vec();
            group.sample_size(10);
            group.bench_function(BenchmarkId::new("full", &label), |b| {
                b.iter(|| black_box(handle.reload(&full, now).expect("a valid body")))
            });
            group.sample_size(20);
        }
    }
    group.finish();
}

/// A delta reload body that adds a key to the first page block of `snapshot`.
fn one_block_delta(snapshot: &Snapshot) -> Vec<u8> {
    one_block_delta_set(snapshot, true)
}

/// A delta reload body that sets key `benchEdit` of the first page block of `snapshot` to
/// `value`.
fn one_block_delta_set(snapshot: &Snapshot, value: bool) -> Vec<u8> {
    let mut pages: Vec<(&str, &Value)> = snapshot
        .blocks()
        .filter(|(name, _)| name.starts_with("pages-"))
        .collect();
    pages.sort_unstable_by_key(|(name, _)| *name);
    let Some((name, Value::Object(page))) = pages.first() else {
        panic!("lojaintegradar has page blocks");
    };
    let mut entries = page.entries().to_vec();
    entries.push((intern("benchEdit"), Value::from(value)));
    let blocks = Value::object(vec![(intern(name), Value::object(entries))]);
    Value::object(vec![(intern("blocks"), blocks)])
        .to_json_string()
        .into_bytes()
}

/// `GET /.sitefile` through the site's admin protocol: the first answer writes the canonical
/// bundle, later ones serve it as it is.
fn admin_content_read(c: &mut Criterion) {
    use sitefile_core::admin::AdminRequest;
    use sitefile_core::{Site, SiteSetup};
    let mut group = c.benchmark_group("admin");
    for site in ["lojaintegradar", "abracasa"] {
        let setup = SiteSetup::new(
            ResolveConfig::by_convention(),
            Default::default(),
            Default::default(),
        );
        let Ok(site_handle) = Site::new(load_site(site), setup) else {
            panic!("{site}: the default setup is valid");
        };
        let read = AdminRequest::new("GET", "/.sitefile");
        let now = "2026-06-01T12:00:00Z".parse().expect("a valid instant");
        group.bench_function(BenchmarkId::new("GET /.sitefile", site), |b| {
            b.iter(|| black_box(site_handle.handle_admin(&read, now)))
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    resolve_pages,
    first_serialise,
    loader_answers,
    load,
    revision_and_routes,
    scaled_reloads,
    admin_content_read
);
criterion_main!(benches);
