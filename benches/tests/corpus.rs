//! Every URL of the shared corpus (`../shared/corpus/urls.txt`, or `$SITEFILE_CORPUS`) resolves
//! for desktop and mobile visitors, with loaders answered by stub data. Prints per-site counts
//! of warnings and errors the content really contains; each page's `to_json_bytes` is the bytes
//! serde_json writes. Without a corpus it says so and passes,
//! unless `CI=true`.

use sitefile_benches::{
    DESKTOP, MOBILE, bundle_snapshot, corpus_available, load_site, site_bundle, urls,
};
use sitefile_core::Request;
use sitefile_core::resolve::{LoaderCall, ResolveConfig, Runtime};
use sitefile_core::value::{Value, intern};

#[derive(Default, Debug)]
struct Counts {
    urls: usize,
    sections: usize,
    /// Pages whose SEO resolved to something.
    seo: usize,
    loader_calls: usize,
    warnings: usize,
    errors: usize,
}

/// A site's canonical bundle, read lazily and digested from its bytes without parsing, has the
/// revision of the same content parsed from its directory.
#[test]
fn a_canonical_bundle_has_the_revision_of_its_directory() {
    if !corpus_available("a_canonical_bundle_has_the_revision_of_its_directory") {
        return;
    }
    for site in urls().keys() {
        let bundled = bundle_snapshot(site_bundle(site));
        assert_eq!(bundled.revision(), load_site(site).revision(), "{site}");
    }
}

#[test]
fn every_corpus_url_resolves_on_desktop_and_mobile() {
    if !corpus_available("every_corpus_url_resolves_on_desktop_and_mobile") {
        return;
    }
    let by_site = urls();
    assert_eq!(by_site.len(), 6, "six corpus sites");
    let mut failures = Vec::new();
    for (site, urls) in &by_site {
        let snapshot = load_site(site);
        let runtime = Runtime::new(snapshot, ResolveConfig::by_convention());
        let mut counts = Counts::default();
        for url in urls {
            for ua in [DESKTOP, MOBILE] {
                let request = Request::new(url)
                    .unwrap()
                    .with_header("user-agent", ua)
                    .with_now("2026-06-01T12:00:00Z".parse().unwrap());
                let mut calls = 0;
                let mut stub = |call: &LoaderCall| {
                    calls += 1;
                    Ok(Value::object(vec![(
                        intern("stub"),
                        Value::string(&call.key),
                    )]))
                };
                let page = runtime.resolve_page(request.clone()).run(&mut stub);
                // Again: the page cache, the sections it keeps converted and their kept JSON
                // must make the very same page.
                let again = runtime.resolve_page(request).run(&mut stub);
                calls /= 2;
                counts.urls += 1;
                counts.sections += page.sections.len();
                counts.seo += usize::from(page.seo.is_some());
                counts.loader_calls += calls;
                counts.warnings += page.effects.warnings.len();
                counts.errors += page.effects.errors.len();
                if page.page.is_none() {
                    failures.push(format!("{site} {url}: no page"));
                }
                // Twice: the first write may fill the JSON the content keeps, the second copies it.
                let expected = serde_json::to_vec(&page).unwrap();
                for write in ["first", "second"] {
                    if page.to_json_bytes() != expected {
                        failures.push(format!(
                            "{site} {url}: to_json_bytes differs from serde_json ({write} write)"
                        ));
                    }
                }
                if again != page || again.to_json_bytes() != expected {
                    failures.push(format!("{site} {url}: resolved again, the page differs"));
                }
                if page.sections.is_empty() {
                    failures.push(format!("{site} {url}: no sections"));
                }
                for e in &page.effects.errors {
                    if ["depth", "cycle", "size"].contains(&e.context.as_str()) {
                        failures.push(format!("{site} {url}: {} {}", e.context, e.message));
                    }
                }
            }
        }
        eprintln!("{site}: {counts:?}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
