//! Content checks: every problem a site's content has, named by block.

use crate::content::{LoadProblem, Snapshot};
use crate::pages::{is_page_block, page_path};
use crate::resolve::{ResolveConfig, is_flag};
use crate::value::Value;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// How bad a problem is: errors make `sitefile check` fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The content is broken: a file is lost, a reference loops, a page cannot be served.
    Error,
    /// The content works but something is likely a mistake.
    Warning,
}

/// One problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// Error or warning.
    pub severity: Severity,
    /// The block it is in.
    pub block: String,
    /// A stable camelCase identifier (`invalidJson`, `danglingReference`, `cycle`,
    /// `unknownMatcher`, `pageWithoutPath`, `duplicatePath`, `unreachablePage`, `malformedPath`,
    /// `fileCollision`).
    pub kind: &'static str,
    /// What is wrong, for people.
    pub message: String,
}

/// Types that are never block names.
const BUILTIN_TYPES: &[&str] = &["resolved", "preview", "Deco"];

/// Checks content; `load` are the problems met while reading it. Sorted: errors first, then by
/// block name.
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
    problems.sort_by(|a, b| (a.severity, &a.block).cmp(&(b.severity, &b.block)));
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
            stack.last_mut().expect("non-empty").1 += 1;
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
                    found.push(Problem {
                        severity: Severity::Error,
                        block: next.to_string(),
                        kind: "cycle",
                        message: format!("cyclic reference: {}", chain.join(" -> ")),
                    });
                }
                Some(Mark::Done) => {}
            }
        }
    }
    found
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
    let param_name = regex::Regex::new(r":[\p{L}_$][\p{L}\p{N}_$]*").expect("valid regex");
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
        let shape = param_name.replace_all(&route.pattern, ":").into_owned();
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
