//! Every corpus page (`../shared/corpus`, or `$SITEFILE_CORPUS`) resolved through the C API
//! (`tests/c/corpus.c`, desktop and mobile, loaders answered with a stub) is byte-identical to
//! what the Rust API writes for the same request. Without a corpus it says so and passes,
//! unless `CI=true`.

mod common;

use common::{compile, corpus_requests, crate_dir};
use sitefile_benches::{corpus_available, corpus_dir, urls};
use sitefile_core::{NoHost, RequestForm, Site, SiteSetup, Step, Value, intern};
use std::process::Command;

/// The finished step the Rust API writes for `form`, loaders answered as `corpus.c` does.
fn rust_step(site: &Site, form: &str) -> Vec<u8> {
    let request = RequestForm::from_json(form)
        .and_then(RequestForm::into_request)
        .expect("a valid request form");
    let stub = || Value::object(vec![(intern("stub"), Value::Bool(true))]);
    let page = site.resolve_page(request, &NoHost).run(|_| Ok(stub()));
    Step::Done(Box::new(page)).to_json_bytes()
}

#[test]
fn every_corpus_page_through_the_c_api_is_byte_identical_to_the_rust_api() {
    if !corpus_available("every_corpus_page_through_the_c_api_is_byte_identical_to_the_rust_api") {
        return;
    }
    let exe = compile(
        &crate_dir().join("tests/c/corpus.c"),
        "sitefile-c-corpus",
        &[],
    );
    let mut pages = 0;
    for (name, urls) in urls() {
        let dir = corpus_dir().join(&name);
        let (forms, requests) = corpus_requests(&name, &urls);
        let run = Command::new(&exe)
            .arg(&dir)
            .arg(&requests)
            .output()
            .expect("the C corpus program runs");
        assert!(
            run.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let loaded = sitefile_site_dir::load(&dir).expect("the corpus site loads");
        let site = Site::new(
            loaded.snapshot,
            SiteSetup::from_json("{}").expect("the default setup"),
        )
        .expect("a site");
        let lines: Vec<&[u8]> = run
            .stdout
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(lines.len(), forms.len(), "{name}: one page per request");
        for (form, line) in forms.iter().zip(lines) {
            let expected = rust_step(&site, form);
            assert!(
                line == expected.as_slice(),
                "{name}: {form}: the C API's page differs from the Rust API's"
            );
            pages += 1;
        }
    }
    assert!(pages > 0, "the corpus has pages");
}
