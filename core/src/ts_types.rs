//! The TypeScript declarations of the JSON forms that cross the bindings' boundary, generated
//! from the Rust types that serialize them (ts-rs reads their serde attributes): the committed
//! `node/ts/generated/boundary.gen.ts`, which `node/ts/` imports instead of declaring the forms
//! by hand. This test regenerates the declarations and fails on any difference;
//! `SITEFILE_BLESS=1` rewrites the committed file instead.

use crate::device::Device;
use crate::edge::{CacheProfile, EdgePlanJson};
use crate::effects::{Effects, PageCut, ResolveErrorEvent};
use crate::errors::{ErrorBody, ErrorCode};
use crate::resolve::{LoaderCall, PageJson, SectionJson, Step};
use crate::section_loaders::{SectionContext, SectionStep, SectionsDone};
use crate::site::{BodySource, ExchangeStep, StoreCopy, Synced};
use std::path::Path;
use ts_rs::{Config, TS};

/// Where the declarations are committed, from the crate's directory.
const COMMITTED: &str = "../node/ts/generated/boundary.gen.ts";

/// `export type <decl>`, its doc comment first.
fn declaration<T: TS + ?Sized>(cfg: &Config, out: &mut String) {
    out.push('\n');
    if let Some(docs) = T::docs() {
        out.push_str(&docs);
    }
    out.push_str("export ");
    out.push_str(&T::decl(cfg));
    out.push('\n');
}

/// The declarations, each form after the forms it names.
fn declarations() -> String {
    // The forms' integers (call ids, flight ids, statuses, seconds) are JSON numbers.
    let cfg = Config::new().with_large_int("number");
    let mut out = String::from(
        "// Generated from the Rust types of the JSON forms the core hands its hosts (ts-rs, by\n\
         // core/src/ts_types.rs): do not edit. Regenerate with\n\
         // `SITEFILE_BLESS=1 cargo test -p sitefile-core --lib ts_types`.\n",
    );
    let out_ = &mut out;
    // Errors.
    declaration::<ErrorCode>(&cfg, out_);
    declaration::<ErrorBody>(&cfg, out_);
    // A resolution: its effects, the page, the loader rounds.
    declaration::<ResolveErrorEvent>(&cfg, out_);
    declaration::<PageCut>(&cfg, out_);
    declaration::<Effects>(&cfg, out_);
    declaration::<SectionJson<'static, false>>(&cfg, out_);
    declaration::<PageJson<'static, false>>(&cfg, out_);
    declaration::<LoaderCall>(&cfg, out_);
    declaration::<Step>(&cfg, out_);
    // A run of section loaders.
    declaration::<Device>(&cfg, out_);
    declaration::<SectionContext>(&cfg, out_);
    declaration::<SectionsDone>(&cfg, out_);
    declaration::<SectionStep>(&cfg, out_);
    // The edge: the plan, the exchange's steps.
    declaration::<CacheProfile>(&cfg, out_);
    declaration::<EdgePlanJson<'static>>(&cfg, out_);
    declaration::<BodySource>(&cfg, out_);
    declaration::<StoreCopy>(&cfg, out_);
    declaration::<ExchangeStep>(&cfg, out_);
    // Fast Deploy.
    declaration::<Synced>(&cfg, out_);
    plain_links(&out)
}

/// The text with rustdoc's links (`` [`Step`] ``, `` [`Site::reload`](crate::Site::reload) ``)
/// written as plain code spans: the Rust paths mean nothing to a TypeScript reader.
fn plain_links(text: &str) -> String {
    let link = regex::Regex::new(r"\[(`[^`\]]+`)\](\([^)\s]+\))?").expect("a valid pattern");
    link.replace_all(text, "$1").into_owned()
}

#[test]
#[allow(
    clippy::disallowed_methods,
    reason = "the test compares (or blesses) a committed file; the code under test does no IO"
)]
fn the_committed_typescript_declarations_are_what_the_rust_types_generate() {
    let generated = declarations();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(COMMITTED);
    if std::env::var_os("SITEFILE_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("node/ts/generated/boundary.gen.ts is writable");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "node/ts/generated/boundary.gen.ts is stale: regenerate it with \
         `SITEFILE_BLESS=1 cargo test -p sitefile-core --lib ts_types` and commit it"
    );
}

#[test]
fn error_codes_are_declared_as_they_serialize() {
    let union = ErrorCode::ALL
        .iter()
        .map(|code| format!("{:?}", code.as_str()))
        .collect::<Vec<_>>()
        .join(" | ");
    assert_eq!(
        ErrorCode::decl(&Config::new()),
        format!("type ErrorCode = {union};")
    );
}
