//! The C API's boundary: one page resolution per corpus URL through `sitefile_resolve_begin`,
//! `sitefile_resolution_next` and the frees, against the same work on the Rust `Site` (the
//! request form parsed, the page resolved, its step written as JSON). Same process, same
//! (system) allocator as `libsitefile`, same request forms: the difference is the boundary —
//! C strings in and out, the handles, the panic guard. The sites are set up with no loaders
//! registered (`{"loaders": []}`), so every page is one step: the boundary crossed by a page
//! resolution, not a host's loader answers.
//!
//!   cargo bench -p sitefile-benches --bench ffi

// The benchmark calls the C API, whose entry points are `unsafe`.
#![allow(unsafe_code)]
// `criterion_group!` defines a public function it gives no documentation.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use sitefile::{
    sitefile_resolution, sitefile_resolution_free, sitefile_resolution_next,
    sitefile_resolve_begin, sitefile_site, sitefile_site_free, sitefile_site_from_dir,
    sitefile_status, sitefile_string_free, sitefile_string_len,
};
use sitefile_benches::{DESKTOP, corpus_dir, urls};
use sitefile_core::resolve::Step;
use sitefile_core::{NoHost, RequestForm, Site, SiteSetup, Value};
use std::ffi::{CString, c_char};
use std::hint::black_box;

/// The request form of a desktop visit to `url`, as a C host would write it.
fn form(url: &str) -> String {
    serde_json::json!({
        "url": url,
        "headers": [["user-agent", DESKTOP]],
        "now": "2026-06-01T12:00:00Z",
        "seed": 0,
    })
    .to_string()
}

/// One page through the Rust API: the form parsed, the page resolved and written.
fn rust_page(site: &Site, form: &str) -> Vec<u8> {
    let request = RequestForm::from_json(form)
        .and_then(RequestForm::into_request)
        .expect("a valid form");
    let page = site.resolve_page(request, &NoHost).run(|_| Ok(Value::Null));
    Step::Done(Box::new(page)).to_json_bytes()
}

/// The setup both sites get: no loaders, so no loader rounds.
const SETUP: &str = r#"{"loaders": []}"#;

/// One page through the C API (one step: asserted once against the Rust page below).
fn c_page(site: *const sitefile_site, form: &CString) -> usize {
    let mut resolution: *mut sitefile_resolution = std::ptr::null_mut();
    let mut step: *mut c_char = std::ptr::null_mut();
    // SAFETY: a live site, a NUL-terminated form and writable out-parameters; every handle and
    // string is freed once.
    unsafe {
        assert_eq!(
            sitefile_resolve_begin(site, form.as_ptr(), std::ptr::null(), &mut resolution),
            sitefile_status::Ok
        );
        assert_eq!(
            sitefile_resolution_next(resolution, &mut step),
            sitefile_status::Ok
        );
        let len = sitefile_string_len(step);
        sitefile_string_free(step);
        sitefile_resolution_free(resolution);
        len
    }
}

fn boundary(c: &mut Criterion) {
    let mut group = c.benchmark_group("ffi_boundary");
    for (name, urls) in urls() {
        let dir = corpus_dir().join(&name);
        let forms: Vec<String> = urls.iter().map(|u| form(u)).collect();
        let c_forms: Vec<CString> = forms
            .iter()
            .map(|f| CString::new(f.as_str()).expect("no NUL"))
            .collect();
        let loaded = sitefile_site_dir::load(&dir).expect("a corpus site");
        let site = Site::new(loaded.snapshot, SiteSetup::from_json(SETUP).expect("setup"))
            .expect("a site");
        let dir_c = CString::new(dir.to_string_lossy().as_bytes()).expect("no NUL");
        let setup_c = CString::new(SETUP).expect("no NUL");
        let mut c_site: *mut sitefile_site = std::ptr::null_mut();
        // SAFETY: a NUL-terminated path and setup, a writable out-parameter.
        let loaded =
            unsafe { sitefile_site_from_dir(dir_c.as_ptr(), setup_c.as_ptr(), &mut c_site) };
        assert_eq!(loaded, sitefile_status::Ok);
        for (form, c_form) in forms.iter().zip(&c_forms) {
            assert_eq!(rust_page(&site, form).len(), c_page(c_site, c_form));
        }
        let label = format!("{name} ({} urls)", urls.len());
        group.bench_function(BenchmarkId::new("rust", &label), |b| {
            b.iter(|| {
                forms.iter().for_each(|f| {
                    black_box(rust_page(&site, f));
                })
            })
        });
        group.bench_function(BenchmarkId::new("c_api", &label), |b| {
            b.iter(|| {
                c_forms.iter().for_each(|f| {
                    black_box(c_page(c_site, f));
                })
            })
        });
        // SAFETY: the site from `sitefile_site_from_dir`, freed once, no call running.
        unsafe { sitefile_site_free(c_site) };
    }
    group.finish();
}

criterion_group!(benches, boundary);
criterion_main!(benches);
