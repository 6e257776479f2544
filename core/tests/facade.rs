//! The core's facade is the boundary: a binding names only what the crate root re-exports
//! (`sitefile_core::Site`, `sitefile_core::EdgePlan`, ...) and never a module behind it
//! (`sitefile_core::edge::EdgePlan`), and no binding turns on the `internals` feature that makes
//! those modules public for this crate's own tests, benchmarks and fuzz targets.

// The test reads the repository's sources; the core under test does no I/O.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

/// The sources of the crates that use the core through its facade (relative to the repository
/// root): the bindings, their tests, and the crates beside them.
const BINDING_SOURCES: &[&str] = &[
    "node/src",
    "ffi/src",
    "ffi/tests",
    "server/src",
    "server/tests",
    "site-dir/src",
    "site-dir/tests",
    "workspace/src",
    "workspace/tests",
];

/// The manifests that must not enable `internals` (nor `ts`): the bindings', and the
/// workspace's (whose `[workspace.dependencies]` entry every binding inherits).
const BINDING_MANIFESTS: &[&str] = &[
    "Cargo.toml",
    "node/Cargo.toml",
    "ffi/Cargo.toml",
    "server/Cargo.toml",
    "site-dir/Cargo.toml",
    "workspace/Cargo.toml",
];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The facade's own submodules: the `pub mod name { ... }` blocks of `core/src/lib.rs` (a module
/// of the crate declared there with `mod name;` is behind the facade).
fn facade_modules() -> Vec<String> {
    let lib = std::fs::read_to_string(repository().join("core/src/lib.rs")).unwrap();
    lib.lines()
        .filter_map(|line| line.strip_prefix("pub mod "))
        .filter_map(|rest| rest.strip_suffix(" {"))
        .map(str::to_string)
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    // A binding directory that moved must fail the test, not pass it with nothing scanned.
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A line without its `//` comment: prose may name a module (what a reader should look at), a
/// path in code may not. `://` (a URL in a string) is not a comment.
fn code_of(line: &str) -> &str {
    let mut from = 0;
    while let Some(i) = line[from..].find("//") {
        let at = from + i;
        if !line[..at].ends_with(':') {
            return &line[..at];
        }
        from = at + 2;
    }
    line
}

fn is_module_segment(segment: &str) -> bool {
    segment
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && segment
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The identifier at the start of `text`.
fn identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The modules `code` reaches past the facade through: `sitefile_core::edge::EdgePlan`, or a
/// group `sitefile_core::{Site, edge::EdgePlan}` (a lowercase segment followed by `::`; a
/// function, `sitefile_core::load_bundle(..)`, or a turbofish is not a module).
fn reached_modules(code: &str, allowed: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("sitefile_core::") {
        rest = &rest[i + "sitefile_core::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Up to the matching brace (a group may nest `fast_deploy::{...}`).
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(group.len(), |(i, _)| i);
            let group = &group[..end];
            let mut at = 0;
            while at < group.len() {
                let tail = &group[at..];
                let name = identifier(tail);
                if name.is_empty() {
                    at += tail.chars().next().map_or(1, char::len_utf8);
                    continue;
                }
                let after = &tail[name.len()..];
                let starts_segment = group[..at]
                    .trim_end()
                    .chars()
                    .last()
                    .is_none_or(|c| c == '{' || c == ',');
                if starts_segment
                    && is_module_segment(name)
                    && after.starts_with("::")
                    && !after.starts_with("::<")
                    && !allowed.iter().any(|m| m == name)
                {
                    found.push(name.to_string());
                }
                at += name.len();
            }
        } else {
            let name = identifier(rest);
            let after = &rest[name.len()..];
            if is_module_segment(name)
                && after.starts_with("::")
                && !after.starts_with("::<")
                && !allowed.iter().any(|m| m == name)
            {
                found.push(name.to_string());
            }
        }
    }
    found
}

/// Every `file:line: module` where a binding names a module behind the facade. A multi-line
/// `use sitefile_core::{...}` group is read as one statement, reported at its first line.
fn violations(root: &Path, dirs: &[&str], allowed: &[String]) -> Vec<String> {
    let mut files = Vec::new();
    for dir in dirs {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().map(code_of).collect();
        let mut n = 0;
        while n < lines.len() {
            let mut code = lines[n].to_string();
            let first = n;
            // A group opened on this line: read on to its closing brace.
            if code.contains("sitefile_core::{") {
                let mut depth: i32 =
                    code.matches('{').count() as i32 - code.matches('}').count() as i32;
                while depth > 0 && n + 1 < lines.len() {
                    n += 1;
                    code.push(' ');
                    code.push_str(lines[n]);
                    depth += lines[n].matches('{').count() as i32;
                    depth -= lines[n].matches('}').count() as i32;
                }
            }
            for module in reached_modules(&code, allowed) {
                let shown = file.strip_prefix(root).unwrap_or(&file);
                found.push(format!(
                    "{}:{}: sitefile_core::{module}::",
                    shown.display(),
                    first + 1
                ));
            }
            n += 1;
        }
    }
    found
}

#[test]
fn bindings_name_only_the_facade() {
    let found = violations(&repository(), BINDING_SOURCES, &facade_modules());
    assert!(
        found.is_empty(),
        "a binding reaches past the core's facade; re-export what it needs at the root of \
         core/src/lib.rs (in its group) and import it from there:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_binding_enables_internals() {
    for manifest in BINDING_MANIFESTS {
        let text = std::fs::read_to_string(repository().join(manifest)).unwrap();
        let offending: Vec<String> = text
            .lines()
            .enumerate()
            .map(|(n, line)| (n, line.split('#').next().unwrap_or("")))
            .filter(|(_, code)| code.contains("internals") || code.contains(r#""ts""#))
            .map(|(n, code)| format!("{manifest}:{}: {}", n + 1, code.trim()))
            .collect();
        assert!(
            offending.is_empty(),
            "`internals` is for sitefile-core's own tests, benchmarks and fuzz targets, and `ts` \
             (ts-rs) for its test of the generated TypeScript declarations, never a binding:\n{}",
            offending.join("\n")
        );
    }
}

#[test]
fn the_scan_sees_a_reach_past_the_facade() {
    let allowed = vec!["fast_deploy".to_string()];
    let reached = |code: &str| reached_modules(code, &allowed);
    assert_eq!(reached("use sitefile_core::edge::EdgePlan;"), ["edge"]);
    assert_eq!(
        reached("use sitefile_core::{Site, edge::{CacheKey, EdgePlan}, value::Value};"),
        ["edge", "value"]
    );
    assert_eq!(
        reached("let s = sitefile_core::content::load_bundle(bytes)?;"),
        ["content"]
    );
    assert_eq!(
        reached("use sitefile_core::config::hosts::EDITOR_ORIGINS;"),
        ["config"]
    );
    assert!(reached("use sitefile_core::{EdgePlan, Site, load_bundle};").is_empty());
    assert!(reached("let s = sitefile_core::load_bundle(bytes)?;").is_empty());
    assert!(reached("sitefile_core::Site::new(snapshot, setup)").is_empty());
    assert!(reached("use sitefile_core::fast_deploy::{LIVE_KEY, snapshot_key};").is_empty());
    assert!(reached("use sitefile_core::{Site, fast_deploy::{LIVE_KEY}};").is_empty());
    assert_eq!(
        code_of("let u = \"http://x\"; // sitefile_core::edge::"),
        "let u = \"http://x\"; "
    );
    assert_eq!(
        facade_modules(),
        allowed,
        "the facade's submodules in core/src/lib.rs"
    );
}
