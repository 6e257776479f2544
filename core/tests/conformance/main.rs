//! The conformance suites (`tests/conformance/` at the repository root, described in its
//! README) run through the core's public `Site` API. The C and Node bindings run the same
//! files with their own runners and must get the same results.

// The harness reads the case files; the core under test does no I/O.
#![allow(clippy::disallowed_methods)]

#[path = "../admin_site/mod.rs"]
mod admin_site;

mod admin;
mod exchange;
mod page_json;
mod resolution;
mod schema;
mod section_loaders;
mod steps;
mod support;
