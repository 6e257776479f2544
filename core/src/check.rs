//! Content checks: every problem a site's content has, named by block.

use crate::content::{LoadProblem, Snapshot};
use crate::effects::Loss;
use crate::pages::{is_page_block, page_path};
use crate::resolve::{
    EveryVariant, RawSection, ResolveConfig, StaticDepth, globals, is_flag, non_object_sections,
    sections_list,
};
use crate::value::{Value, intern};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// How bad a problem is: errors make `sitefile check` fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The content is broken: a file is lost, a reference loops, a page cannot be served.
    Error,
    /// The content works but something is likely a mistake.
    Warning,
}

/// One problem.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Problem {
    /// Error or warning.
    pub severity: Severity,
    /// The block it is in.
    pub block: String,
    /// A stable camelCase identifier (`invalidJson`, `danglingReference`, `cycle`,
    /// `unknownMatcher`, `pageWithoutPath`, `duplicatePath`, `unreachablePage`, `malformedPath`,
    /// `fileCollision`, `sectionNotObject`, `tooDeep`).
    pub kind: &'static str,
    /// What is wrong, for people.
    pub message: String,
}

impl Problem {
    /// Content every request that reaches it loses: an error in `block` at `at`.
    fn lost(block: &str, at: &str, loss: &Loss<'_>) -> Problem {
        Problem {
            severity: Severity::Error,
            block: block.to_string(),
            kind: loss.kind(),
            message: loss.message_at(at),
        }
    }
}

/// Types that are never block names.
const BUILTIN_TYPES: &[&str] = &["resolved", "preview", "Deco"];

/// Checks content; `load` are the problems met while reading it. Sorted: errors first, then by
/// block name; each problem once (a saved list of sections several pages use is checked for
/// each).
pub fn check(snapshot: &Snapshot, config: &ResolveConfig, load: &[LoadProblem]) -> Vec<Problem> {
    let mut problems: Vec<Problem> = load.iter().map(load_problem).collect();
    let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, block) in snapshot.blocks() {
        let mut refs = Vec::new();
        walk(block, &mut |object_rt, object| {
            if snapshot.block(object_rt).is_some() {
                refs.push(object_rt);
            } else if looks_like_block_name(object_rt) {
                problems.push(Problem {
                    severity: Severity::Warning,
                    block: name.to_string(),
                    kind: "danglingReference",
                    message: format!("references {object_rt:?}, which is not a block"),
                });
            }
            if is_flag(object_rt) {
                for rule in variant_rules(object) {
                    check_rule(snapshot, config, name, rule, &mut problems);
                }
            }
        });
        refs.sort_unstable();
        refs.dedup();
        graph.insert(name, refs);
        if is_page_block(name, block) && page_path(name, block).is_none() {
            problems.push(Problem {
                severity: Severity::Warning,
                block: name.to_string(),
                kind: "pageWithoutPath",
                message: "page block without a `path` and `sections`; it is never served".into(),
            });
        }
    }
    problems.extend(cycles(&graph));
    problems.extend(route_problems(snapshot));
    problems.extend(section_problems(snapshot, config));
    problems.sort_by(|a, b| (a.severity, &a.block).cmp(&(b.severity, &b.block)));
    let mut seen = HashSet::new();
    problems.retain(|p| seen.insert(p.clone()));
    problems
}

fn load_problem(p: &LoadProblem) -> Problem {
    match p {
        LoadProblem::InvalidJson { block, .. } => Problem {
            severity: Severity::Error,
            block: block.clone(),
            kind: "invalidJson",
            message: p.to_string(),
        },
        LoadProblem::Collision { block, .. } => Problem {
            severity: Severity::Warning,
            block: block.clone(),
            kind: "fileCollision",
            message: p.to_string(),
        },
        LoadProblem::NonUtf8Name { file } => Problem {
            severity: Severity::Error,
            block: file.clone(),
            kind: "nonUtf8Name",
            message: p.to_string(),
        },
        LoadProblem::Symlink { file } => Problem {
            severity: Severity::Error,
            block: file.clone(),
            kind: "symlink",
            message: p.to_string(),
        },
    }
}

/// A `__resolveType` that names a block rather than a module (`site/sections/X.tsx`).
fn looks_like_block_name(rt: &str) -> bool {
    !(rt.ends_with(".ts") || rt.ends_with(".tsx") || BUILTIN_TYPES.contains(&rt))
}

fn walk<'v>(value: &'v Value, visit: &mut impl FnMut(&'v str, &'v Value)) {
    if !value.is_dynamic() {
        return;
    }
    match value {
        Value::Object(o) => {
            if let Some(rt) = o.resolve_type() {
                visit(rt, value);
            }
            for (_, v) in o.entries() {
                walk(v, visit);
            }
        }
        Value::Array(a) => a.items().iter().for_each(|v| walk(v, visit)),
        _ => {}
    }
}

fn variant_rules(flag: &Value) -> impl Iterator<Item = &Value> {
    flag.get("variants")
        .and_then(Value::as_array)
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v.get("rule"))
}

fn check_rule(
    snapshot: &Snapshot,
    config: &ResolveConfig,
    block: &str,
    rule: &Value,
    problems: &mut Vec<Problem>,
) {
    let Some(rt) = rule.resolve_type() else {
        return;
    };
    if snapshot.block(rt).is_none() && !config.matchers.is_matcher(rt) {
        problems.push(Problem {
            severity: Severity::Warning,
            block: block.to_string(),
            kind: "unknownMatcher",
            message: format!("unknown matcher {rt:?}; the rule is always false"),
        });
    }
    for inner in rule
        .get("matchers")
        .and_then(Value::as_array)
        .unwrap_or_default()
        .iter()
        .chain(rule.get("matcher"))
    {
        check_rule(snapshot, config, block, inner, problems);
    }
}

/// Every cycle of named-block references, each reported once on its smallest block name.
fn cycles(graph: &BTreeMap<&str, Vec<&str>>) -> Vec<Problem> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Active,
        Done,
    }
    let mut marks: HashMap<&str, Mark> = HashMap::new();
    let mut found = Vec::new();
    for &start in graph.keys() {
        if marks.contains_key(start) {
            continue;
        }
        // Iterative depth-first search: (node, next edge index).
        let mut stack: Vec<(&str, usize)> = vec![(start, 0)];
        marks.insert(start, Mark::Active);
        while let Some((node, edge)) = stack.last().copied() {
            let edges = graph.get(node).map(Vec::as_slice).unwrap_or_default();
            if edge == edges.len() {
                marks.insert(node, Mark::Done);
                stack.pop();
                continue;
            }
            if let Some(top) = stack.last_mut() {
                top.1 += 1;
            }
            let next = edges[edge];
            match marks.get(next) {
                None => {
                    marks.insert(next, Mark::Active);
                    stack.push((next, 0));
                }
                Some(Mark::Active) => {
                    let at = stack.iter().position(|(n, _)| *n == next).unwrap_or(0);
                    let mut chain: Vec<&str> = stack[at..].iter().map(|(n, _)| *n).collect();
                    chain.push(next);
                    let chain = chain.join(" -> ");
                    found.push(Problem::lost(next, "", &Loss::Cycle { chain: &chain }));
                }
                Some(Mark::Done) => {}
            }
        }
    }
    found
}

/// `pattern` with its parameter names left out (`/:slug/p` → `/:/p`): a name starts with a
/// letter, `_` or `$` and goes on with letters, digits, `_` and `$`.
fn without_param_names(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == ':'
            && chars
                .next_if(|&n| n.is_alphabetic() || n == '_' || n == '$')
                .is_some()
        {
            while chars
                .next_if(|&n| n.is_alphanumeric() || n == '_' || n == '$')
                .is_some()
            {}
        }
    }
    out
}

fn route_problems(snapshot: &Snapshot) -> Vec<Problem> {
    let routes = snapshot.routes();
    let mut problems: Vec<Problem> = routes
        .malformed()
        .map(|r| Problem {
            severity: Severity::Error,
            block: r.name.clone(),
            kind: "malformedPath",
            message: format!("path {:?} is not a valid URL pattern", r.pattern),
        })
        .collect();
    let mut first_with_path: HashMap<&str, &str> = HashMap::new();
    // Patterns that differ only in parameter names (`/:slug` and `/:id`) match the same paths.
    let mut first_with_shape: HashMap<String, &str> = HashMap::new();
    for route in routes.routes() {
        if let Some(first) = first_with_path.get(route.pattern.as_str()) {
            problems.push(Problem {
                severity: Severity::Error,
                block: route.name.clone(),
                kind: "duplicatePath",
                message: format!(
                    "path {:?} is also served by {first:?}, which wins",
                    route.pattern
                ),
            });
            continue;
        }
        first_with_path.insert(&route.pattern, &route.name);
        let shape = without_param_names(&route.pattern);
        if let Some(first) = first_with_shape.get(&shape) {
            problems.push(Problem {
                severity: Severity::Warning,
                block: route.name.clone(),
                kind: "unreachablePage",
                message: format!(
                    "path {:?} matches the same paths as the path of {first:?}, which wins",
                    route.pattern
                ),
            });
            continue;
        }
        first_with_shape.insert(shape, &route.name);
        let literal = !route.pattern.contains([':', '*', '{', '(', '?', '$']);
        if literal
            && let Some(winner) = routes.find(&route.pattern)
            && winner.name != route.name
        {
            problems.push(Problem {
                severity: Severity::Warning,
                block: route.name.clone(),
                kind: "unreachablePage",
                message: format!(
                    "path {:?} is always served by {:?} first",
                    route.pattern, winner.name
                ),
            });
        }
    }
    problems
}

/// What resolution starts from: each raw page section of every served page under every
/// variant of its flags, as resolution finds it, its SEO and the Site block's globals (exactly
/// as resolution takes them), as (block, where in it, value).
fn resolution_roots(snapshot: &Snapshot, config: &ResolveConfig) -> Vec<(String, String, Value)> {
    let mut roots = Vec::new();
    let raw = |raw: RawSection| (raw.block.to_string(), raw.path.join("."), raw.value);
    let mut every_variant = EveryVariant::default();
    for route in snapshot.routes().routes() {
        let Some(page) = snapshot.block(&route.name) else {
            continue;
        };
        if let Some(sections) = page.get("sections") {
            let name = intern(&route.name);
            roots.extend(
                sections_list(snapshot, &mut every_variant, &name, sections)
                    .into_iter()
                    .map(raw),
            );
        }
        if let Some(seo) = page.get("seo").filter(|v| !v.is_null()) {
            roots.push((route.name.to_string(), "seo".into(), seo.clone()));
        }
    }
    if config.resolve_globals {
        roots.extend(globals(snapshot).into_iter().map(raw));
    }
    roots
}

/// Page sections resolution drops or cuts on every request: a saved block that is not an
/// object used as one, and content nested past the depth limit.
fn section_problems(snapshot: &Snapshot, config: &ResolveConfig) -> Vec<Problem> {
    let limit = config.depth_limit();
    let mut depth = StaticDepth::new(snapshot, config);
    let mut problems = Vec::new();
    for (block, at, value) in resolution_roots(snapshot, config) {
        let through = value
            .resolve_type()
            .filter(|rt| snapshot.block(rt).is_some());
        let seo = at == "seo";
        let levels = if seo {
            depth.seo(&value)
        } else {
            depth.levels(&value)
        };
        if levels > limit {
            let loss = Loss::TooDeep {
                limit,
                levels,
                through,
            };
            problems.push(Problem::lost(&block, &at, &loss));
        }
        if seo {
            continue;
        }
        for (name, kind) in non_object_sections(snapshot, config, &value) {
            let loss = Loss::SectionNotObject { block: &name, kind };
            problems.push(Problem::lost(&block, &at, &loss));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Request;
    use crate::effects::ResolveErrorEvent;
    use crate::resolve::Runtime;

    fn problems(blocks: &str, config: &ResolveConfig) -> Vec<(String, &'static str, String)> {
        check(&snapshot(blocks), config, &[])
            .into_iter()
            .filter(|p| p.severity == Severity::Error)
            .map(|p| (p.block, p.kind, p.message))
            .collect()
    }

    #[test]
    fn a_block_that_is_not_an_object_used_as_a_section_is_an_error_on_the_page() {
        let found = problems(
            r#"{
              "pages-home": {"path": "/", "sections": [
                {"__resolveType": "Title"},
                {"__resolveType": "website/sections/Rendering/Lazy.tsx", "section": {"__resolveType": "Wrapped"}},
                {"__resolveType": "website/flags/multivariate.ts", "variants": [
                  {"rule": {"__resolveType": "website/matchers/never.ts"}, "value": {"__resolveType": "Count"}}]},
                {"__resolveType": "site/sections/Hero.tsx", "t": {"__resolveType": "Title"}},
                {"__resolveType": "List"},
                {"__resolveType": "resolved", "data": {"__resolveType": "Title"}}]},
              "pages-list": {"path": "/l", "sections": {"__resolveType": "Saved List"}},
              "pages-list-too": {"path": "/l2", "sections": {"__resolveType": "Saved List"}},
              "Saved List": [{"__resolveType": "Title"}],
              "Wrapped": {"__resolveType": "Title"},
              "List": [{"__resolveType": "site/sections/Hero.tsx"}],
              "Title": "hello",
              "Count": 42,
              "site": {"global": {"__resolveType": "Title"}}
            }"#,
            &ResolveConfig::by_convention(),
        );
        let at = |block: &str, message: &str| {
            found
                .iter()
                .any(|(b, k, m)| b == block && *k == "sectionNotObject" && m == message)
        };
        assert!(
            at(
                "pages-home",
                r#"sections.0 uses block "Title" as a section, but it is a string; the section is dropped"#
            ),
            "{found:#?}"
        );
        assert!(
            at(
                "pages-home",
                r#"sections.1 uses block "Title" as a section, but it is a string; the section is dropped"#
            ),
            "{found:#?}"
        );
        assert!(
            at(
                "pages-home",
                r#"sections.2 uses block "Count" as a section, but it is a number; the section is dropped"#
            ),
            "{found:#?}"
        );
        // A page whose `sections` names a saved list has that list's items as its sections,
        // where resolution finds them: in the list's block.
        assert!(
            at(
                "Saved List",
                r#"0 uses block "Title" as a section, but it is a string; the section is dropped"#
            ),
            "{found:#?}"
        );
        // Inside props a non-object block is a value; a list block is a list of sections;
        // resolved data is a value as it stands; Site globals that are not a list are not
        // rendered at all.
        assert_eq!(found.len(), 4, "{found:#?}");
    }

    #[test]
    fn content_nested_past_the_depth_limit_is_an_error_on_the_page_or_site() {
        let config = ResolveConfig {
            max_depth: 3,
            ..ResolveConfig::by_convention()
        };
        let found = problems(
            r#"{
              "pages-deep": {"path": "/deep", "sections": [{"__resolveType": "A"}]},
              "pages-ok": {"path": "/ok", "sections": [{"__resolveType": "B"}],
                "seo": {"__resolveType": "website/sections/Seo/SeoV2.tsx", "x": {"__resolveType": "A"}}},
              "site": {"global": [{"__resolveType": "site/sections/Header.tsx", "inner": {"__resolveType": "B"}}]},
              "A": {"__resolveType": "B"},
              "B": {"__resolveType": "C"},
              "C": {"__resolveType": "site/sections/Hero.tsx"}
            }"#,
            &config,
        );
        let deep: Vec<_> = found.iter().filter(|(_, k, _)| *k == "tooDeep").collect();
        // B alone is 3 levels (B, C, Hero); A adds one; the SEO's skip-listed type does not count
        // but its props do; the Header global adds one.
        let expected = [
            (
                "pages-deep",
                r#"sections.0 (through block "A") nests 4 levels of __resolveType, more than the limit of 3; what lies deeper resolves to null"#,
            ),
            (
                "pages-ok",
                r#"seo nests 5 levels of __resolveType, more than the limit of 3; what lies deeper resolves to null"#,
            ),
            (
                "site",
                r#"global.0 nests 4 levels of __resolveType, more than the limit of 3; what lies deeper resolves to null"#,
            ),
        ];
        assert_eq!(deep.len(), expected.len(), "{found:#?}");
        for (block, message) in expected {
            assert!(
                deep.iter().any(|(b, _, m)| b == block && m == message),
                "{block}: {message}\n{found:#?}"
            );
        }
    }

    fn snapshot(blocks: &str) -> Snapshot {
        let blocks = Value::from_json_str(blocks).expect("test JSON");
        let blocks = blocks.as_object().expect("an object").entries().to_vec();
        Snapshot::from_blocks(blocks.into_iter().map(|(k, v)| (intern(&k), v)))
    }

    /// The `onResolveError` events of resolving `path` (every loader answers `null`).
    fn resolve_errors(blocks: &str, config: ResolveConfig, path: &str) -> Vec<ResolveErrorEvent> {
        let runtime = Runtime::new(snapshot(blocks), config);
        let url = format!("https://shop.example{path}");
        runtime
            .resolve_page(Request::new(&url).expect("URL"))
            .run(|_| Ok(Value::Null))
            .effects
            .errors
    }

    #[test]
    fn page_sections_are_the_resolvers_under_every_variant() {
        // `sections` is a flag whose variants are lists: each list's items are page sections at
        // `sections.variants.N.value.M`, as resolution addresses them, whichever variant a
        // request gets.
        let blocks = r#"{
          "pages-home": {"path": "/", "sections": {
            "__resolveType": "website/flags/multivariate.ts", "variants": [
              {"rule": {"__resolveType": "website/matchers/never.ts"},
               "value": [{"__resolveType": "site/sections/Hero.tsx"}, {"__resolveType": "Count"}]},
              {"rule": {"__resolveType": "website/matchers/always.ts"},
               "value": [{"__resolveType": "Title"}]}]}},
          "Title": "hello",
          "Count": 42
        }"#;
        let found = problems(blocks, &ResolveConfig::by_convention());
        let messages: Vec<&str> = found.iter().map(|(_, _, m)| m.as_str()).collect();
        assert_eq!(
            messages,
            [
                r#"sections.variants.0.value.1 uses block "Count" as a section, but it is a number; the section is dropped"#,
                r#"sections.variants.1.value.0 uses block "Title" as a section, but it is a string; the section is dropped"#,
            ],
            "{found:#?}"
        );
        // The variant requests get is dropped by resolution too, named the same.
        let errors = resolve_errors(blocks, ResolveConfig::by_convention(), "/");
        assert!(
            errors
                .iter()
                .any(|e| e.resolve_type == "Title" && e.context == "Section resolution"),
            "{errors:#?}"
        );
    }

    #[test]
    fn flags_nested_through_saved_blocks_are_followed_once_per_place() {
        // F1 -> F2 -> ... -> F9, each an eight-variant flag naming the next in every variant:
        // 8^9 paths to one list. Each flag is followed once, and the lost section found once.
        let mut blocks = serde_json::Map::new();
        blocks.insert(
            "pages-home".into(),
            serde_json::json!({"path": "/", "sections": {"__resolveType": "F1"}}),
        );
        for i in 1..10 {
            let variant = serde_json::json!({
                "rule": {"__resolveType": "website/matchers/always.ts"},
                "value": {"__resolveType": format!("F{}", i + 1)}});
            blocks.insert(
                format!("F{i}"),
                serde_json::json!({"__resolveType": "website/flags/multivariate.ts",
                                   "variants": vec![variant; 8]}),
            );
        }
        blocks.insert(
            "F10".into(),
            serde_json::json!([{"__resolveType": "Title"}]),
        );
        blocks.insert("Title".into(), serde_json::json!("hello"));
        let found = problems(
            &serde_json::Value::Object(blocks).to_string(),
            &ResolveConfig::by_convention(),
        );
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].0, "F10");
        assert_eq!(found[0].1, "sectionNotObject");
    }

    #[test]
    fn a_saved_list_of_sections_is_no_level_deeper_for_check_than_for_resolution() {
        // `Saved` is followed to its list, as resolution follows it, so its items start at the
        // same level as the items of a literal list: A, then Hero.
        let blocks = r#"{
          "pages-home": {"path": "/", "sections": {"__resolveType": "Saved"}},
          "Saved": [{"__resolveType": "A"}],
          "A": {"__resolveType": "site/sections/Hero.tsx"}
        }"#;
        let at = |max_depth| ResolveConfig {
            max_depth,
            ..ResolveConfig::by_convention()
        };
        let deep = |config: &ResolveConfig| {
            problems(blocks, config)
                .into_iter()
                .filter(|(_, k, _)| *k == "tooDeep")
                .collect::<Vec<_>>()
        };
        let cut = |config: ResolveConfig| {
            resolve_errors(blocks, config, "/")
                .into_iter()
                .any(|e| e.context == "depth")
        };
        assert!(deep(&at(2)).is_empty(), "{:#?}", deep(&at(2)));
        assert!(!cut(at(2)));
        assert_eq!(
            deep(&at(1)),
            [(
                "Saved".to_string(),
                "tooDeep",
                r#"0 (through block "A") nests 2 levels of __resolveType, more than the limit of 1; what lies deeper resolves to null"#
                    .to_string()
            )]
        );
        assert!(cut(at(1)));
    }

    #[test]
    fn a_cycle_is_the_same_loss_for_check_and_for_resolution() {
        let blocks = r#"{
          "pages-home": {"path": "/", "sections": [{"__resolveType": "A"}]},
          "A": {"__resolveType": "site/sections/Hero.tsx", "next": {"__resolveType": "B"}},
          "B": {"__resolveType": "site/sections/Card.tsx", "back": {"__resolveType": "A"}}
        }"#;
        let found = problems(blocks, &ResolveConfig::by_convention());
        let cycles: Vec<_> = found.iter().filter(|(_, k, _)| *k == "cycle").collect();
        assert_eq!(cycles.len(), 1, "{found:#?}");
        let errors = resolve_errors(blocks, ResolveConfig::by_convention(), "/");
        let event = errors
            .iter()
            .find(|e| e.context == "cycle")
            .expect("resolution cuts the cycle");
        assert_eq!(
            (cycles[0].0.as_str(), cycles[0].2.as_str()),
            (event.resolve_type.as_str(), event.message.as_str()),
            "{found:#?}\n{errors:#?}"
        );
    }
}
