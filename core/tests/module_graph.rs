//! House rule: no module cycle, at any depth, in any of the workspace's crates (the core, and
//! beside it `node/src`, `ffi/src`, `server/src`, `workspace/src` and `site-dir/src`, read from
//! here so the check lives in one place).
//!
//! **Nodes** are the modules with a file of their own, at every depth: `a.rs` or `a/mod.rs` is
//! `a`, `a/b.rs` is `a::b`, the crate root (`lib.rs`, else `main.rs`) is `crate`. The tree is read
//! from the `mod name;` declarations, starting at the root. An inline `mod name { .. }` (a
//! `mod tests`) belongs to the file it sits in.
//!
//! **References** are the paths a module's code names (comments and literals are skipped):
//! - `crate::..` (and `$crate::..`), from the crate root;
//! - `super::..` and `self::..`, from the module they are written in: in a file's inline
//!   `mod tests { use super::*; }`, `super` is that file's own module;
//! - in a `use` declaration, a path that starts at one of the module's children (`use child::X`).
//!
//! `use` groups (`use crate::{a, b::{c, d}}`) count leaf by leaf. A path reaches the deepest
//! module it names, and then through imports: when its next segment is a name that module brings
//! in with a `use` (`pub` or not), the path goes on from where that name comes from. So a
//! re-export hides no edge: `super::Thing`, where the parent re-exports `Thing` from a sibling,
//! reaches that sibling. A glob `use p::*` reaches `p` and everything `p`'s `use`s bring in.
//!
//! Test code names nothing: an item under `#[cfg(test)]` (a `mod tests { .. }`, a test helper, a
//! test-only module file such as `matchers/test_support.rs` and what it declares). A module's
//! tests may drive it through the modules above it; the rule orders the code a build ships.
//!
//! **Edges**: a reference from module `m` to module `t` is an edge between the two siblings that
//! hold them, the children of their nearest common ancestor: `resolve::engine` naming
//! `config::env` is the edge `resolve -> config`, `config::env` naming `config::parse` is
//! `config::env -> config::parse`. A reference between a module and its own ancestor or
//! descendant is no edge (there is no sibling on one side): a `mod.rs` re-exporting its children,
//! a child using its parent's items (once re-exports are followed, as above).
//!
//! **The rule**: the edges form no cycle, so within every module its children are ordered. A
//! failure lists every cycle: the modules of each strongly connected set, one cycle through them,
//! and the references (file, line, path) that make each of its edges. The cycles not untied yet
//! are listed, by crate, in [`KNOWN_CYCLES`] with the number of edges among their modules, so a
//! listed set fails the test when it gains a module or an edge: the list can only shrink.
//!
//! A parent's own code is not a node: a chain through items a `mod.rs` defines (a child using
//! its parent's item, which uses another child) shows only the sibling edges along it.

// The test reads the crates' sources; the core under test does no I/O.
#![allow(clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path from its crate's root: `[]` is the root, `["config", "env"]` is `config::env`.
type ModPath = Vec<String>;

/// The sibling edges of a crate, each with the references that make it (`file:line path`).
type Edges = BTreeMap<(ModPath, ModPath), BTreeSet<String>>;

/// How a module is written in a failure: `crate`, or `config::env`.
fn display(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_string()
    } else {
        module.join("::")
    }
}

/// A token of Rust source, as far as paths need: identifiers (keywords included; a raw
/// identifier keeps its `r#`), `::`, and any other single character.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Sep,
    Punct(char),
}

/// The tokens of `text`, each with its line; comments, string, character and number literals and
/// lifetimes dropped.
fn lex(text: &str) -> Vec<(Tok, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let at = |k: usize| chars.get(k).copied().unwrap_or('\0');
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut tokens = Vec::new();
    let (mut i, mut line) = (0, 1);
    // Skips a string whose opening quote is at `i`, closed by a quote and `hashes` `#`s (raw
    // when `raw`, where a backslash escapes nothing); returns the index after it.
    let skip_string = |mut i: usize, hashes: usize, raw: bool, line: &mut usize| {
        i += 1;
        while i < chars.len() {
            match chars[i] {
                '\\' if !raw => i += 1,
                '\n' => *line += 1,
                '"' if (1..=hashes).all(|h| at(i + h) == '#') => return i + 1 + hashes,
                _ => {}
            }
            i += 1;
        }
        i
    };
    // Skips a character literal or a lifetime whose quote is at `i`.
    let skip_quote = |i: usize| {
        if at(i + 1) == '\\' {
            let mut j = i + 3;
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            j + 1
        } else if at(i + 2) == '\'' {
            i + 3
        } else {
            let mut j = i + 1;
            while is_ident(at(j)) {
                j += 1;
            }
            j
        }
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
            }
        } else if c == '"' {
            i = skip_string(i, 0, false, &mut line);
        } else if c == '\'' {
            i = skip_quote(i);
        } else if c.is_ascii_digit() {
            while is_ident(at(i)) {
                i += 1;
            }
        } else if is_ident(c) {
            let start = i;
            while is_ident(at(i)) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let raw_string = matches!(word.as_str(), "r" | "br" | "cr")
                && (at(i) == '"' || (at(i) == '#' && matches!(at(i + 1), '#' | '"')));
            if raw_string {
                let hashes = chars[i..].iter().take_while(|c| **c == '#').count();
                i = skip_string(i + hashes, hashes, true, &mut line);
            } else if matches!(word.as_str(), "b" | "c") && at(i) == '"' {
                i = skip_string(i, 0, false, &mut line);
            } else if word == "b" && at(i) == '\'' {
                i = skip_quote(i);
            } else if word == "r" && at(i) == '#' {
                let start = i + 1;
                i += 1;
                while is_ident(at(i)) {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                tokens.push((Tok::Ident(format!("r#{name}")), line));
            } else {
                tokens.push((Tok::Ident(word), line));
            }
        } else if c == ':' && at(i + 1) == ':' {
            tokens.push((Tok::Sep, line));
            i += 2;
        } else {
            tokens.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    tokens
}

/// A path a module names.
#[derive(Debug)]
struct Named {
    /// Where it is written: the file's module, and the inline modules around it.
    scope: ModPath,
    /// As written: `["super", "parse", "Thing"]`.
    path: Vec<String>,
    /// A glob import, `use path::*`.
    glob: bool,
    /// The name it binds in `scope`'s namespace, for a `use` at the scope's top level.
    binds: Option<String>,
    /// Written in a `use` declaration (where a path may start at a child module).
    in_use: bool,
    /// Test code: under `#[cfg(test)]`, or in a module declared under it.
    test: bool,
    /// The line it starts on.
    line: usize,
}

/// What a file holds for the graph.
#[derive(Debug, Default)]
struct Parsed {
    /// `mod name;`: the child modules with a file of their own, each with whether it is
    /// declared under `#[cfg(test)]`.
    children: Vec<(String, bool)>,
    /// The inline modules' paths (from the crate root).
    inline: Vec<ModPath>,
    /// Every path it names.
    named: Vec<Named>,
}

/// A leaf of a `use` tree: its full path, whether a glob, and the name it binds.
type UseLeaf = (Vec<String>, bool, Option<String>);

/// Reads the `use` tree at `tokens[*i]` under `prefix` into `leaves`.
fn use_tree(
    tokens: &[(Tok, usize)],
    i: &mut usize,
    prefix: Vec<String>,
    leaves: &mut Vec<UseLeaf>,
) {
    let token = |k: usize| tokens.get(k).map(|t| &t.0);
    match token(*i) {
        Some(Tok::Sep) => {
            // `use ::name`: an external crate.
            *i += 1;
            use_tree(tokens, i, vec!["::".to_string()], leaves);
        }
        Some(Tok::Punct('{')) => {
            *i += 1;
            while token(*i).is_some_and(|t| *t != Tok::Punct('}')) {
                use_tree(tokens, i, prefix.clone(), leaves);
                if token(*i) == Some(&Tok::Punct(',')) {
                    *i += 1;
                }
            }
            *i += 1;
        }
        Some(Tok::Punct('*')) => {
            *i += 1;
            leaves.push((prefix, true, None));
        }
        Some(Tok::Ident(segment)) => {
            let mut path = prefix;
            path.push(segment.clone());
            *i += 1;
            if token(*i) == Some(&Tok::Sep) {
                *i += 1;
                use_tree(tokens, i, path, leaves);
                return;
            }
            let mut name = if segment == "self" {
                path.iter().rev().nth(1).cloned()
            } else {
                Some(segment.clone())
            };
            if token(*i) == Some(&Tok::Ident("as".to_string())) {
                name = match token(*i + 1) {
                    Some(Tok::Ident(alias)) if alias != "_" => Some(alias.clone()),
                    _ => None,
                };
                *i += 2;
            }
            leaves.push((path, false, name));
        }
        other => panic!("unexpected {other:?} in a `use` at line {}", tokens[*i].1),
    }
}

/// The path of the module at the cursor: the file's `module` and the `inline` ones around it.
fn scope(module: &[String], inline: &[(String, usize)]) -> ModPath {
    let names = inline.iter().map(|(name, _)| name.clone());
    module.iter().cloned().chain(names).collect()
}

/// Whether `tokens[i..]` starts with `#[cfg(test)]`.
fn cfg_test(tokens: &[(Tok, usize)], i: usize) -> bool {
    let attribute = [
        Tok::Punct('#'),
        Tok::Punct('['),
        Tok::Ident("cfg".into()),
        Tok::Punct('('),
        Tok::Ident("test".into()),
        Tok::Punct(')'),
        Tok::Punct(']'),
    ];
    tokens.len() >= i + attribute.len()
        && tokens[i..].iter().zip(&attribute).all(|(t, a)| t.0 == *a)
}

/// What the file of module `module` declares and names; all of it test code when `test`.
fn parse(text: &str, module: &[String], test: bool) -> Parsed {
    let tokens = lex(text);
    let token = |k: usize| tokens.get(k).map(|t| &t.0);
    let mut parsed = Parsed::default();
    // The inline modules around the cursor, each with the brace depth inside it.
    let mut inline: Vec<(String, usize)> = Vec::new();
    // Braces, and all delimiters (for where an item ends).
    let (mut depth, mut delimiters) = (0, 0);
    // Inside an item under `#[cfg(test)]`: the delimiter depth it started at.
    let mut test_item: Option<usize> = None;
    let mut i = 0;
    while i < tokens.len() {
        let line = tokens[i].1;
        let in_test = test || test_item.is_some();
        match &tokens[i].0 {
            Tok::Punct('#') if test_item.is_none() && cfg_test(&tokens, i) => {
                test_item = Some(delimiters);
                i += 7;
                continue;
            }
            Tok::Punct('(' | '[') => delimiters += 1,
            Tok::Punct(')' | ']') => {
                delimiters -= 1;
                if test_item.is_some_and(|at| delimiters < at) {
                    test_item = None;
                }
            }
            Tok::Punct('{') => {
                depth += 1;
                delimiters += 1;
            }
            Tok::Punct('}') => {
                depth -= 1;
                delimiters -= 1;
                while inline.last().is_some_and(|(_, inside)| *inside > depth) {
                    inline.pop();
                }
                if test_item.is_some_and(|at| delimiters <= at) {
                    test_item = None;
                }
            }
            Tok::Punct(';') if test_item == Some(delimiters) => test_item = None,
            Tok::Ident(word) if word == "mod" => {
                if let Some(Tok::Ident(name)) = token(i + 1) {
                    match token(i + 2) {
                        Some(Tok::Punct('{')) => {
                            parsed
                                .inline
                                .push([scope(module, &inline), vec![name.clone()]].concat());
                            inline.push((name.clone(), depth + 1));
                        }
                        Some(Tok::Punct(';')) => {
                            assert!(
                                inline.is_empty(),
                                "`mod {name};` inside an inline module (line {line}) is not read"
                            );
                            if !parsed.children.iter().any(|(child, _)| child == name) {
                                parsed.children.push((name.clone(), in_test));
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            // `use<..>` is precise capturing (`impl Trait + use<'a>`), not a declaration.
            Tok::Ident(word) if word == "use" && token(i + 1) != Some(&Tok::Punct('<')) => {
                let top_level = depth == inline.last().map_or(0, |(_, inside)| *inside);
                let mut leaves = Vec::new();
                i += 1;
                use_tree(&tokens, &mut i, Vec::new(), &mut leaves);
                for (path, glob, name) in leaves {
                    parsed.named.push(Named {
                        scope: scope(module, &inline),
                        path,
                        glob,
                        binds: name.filter(|_| top_level && !glob),
                        in_use: true,
                        test: in_test,
                        line,
                    });
                }
                continue;
            }
            Tok::Ident(head)
                if matches!(head.as_str(), "crate" | "super" | "self")
                    && token(i + 1) == Some(&Tok::Sep)
                    && (i == 0 || token(i - 1) != Some(&Tok::Sep)) =>
            {
                let mut path = vec![head.clone()];
                while token(i + 1) == Some(&Tok::Sep) {
                    let Some(Tok::Ident(segment)) = token(i + 2) else {
                        break;
                    };
                    path.push(segment.clone());
                    i += 2;
                }
                parsed.named.push(Named {
                    scope: scope(module, &inline),
                    path,
                    glob: false,
                    binds: None,
                    in_use: false,
                    test: in_test,
                    line,
                });
            }
            _ => {}
        }
        i += 1;
    }
    parsed
}

/// A crate's modules, read from its root file through `read` (`None`: no such file).
struct Crate {
    /// Each module with a file, its file's path and what the file holds.
    files: BTreeMap<ModPath, (PathBuf, Parsed)>,
    /// Every module's path, inline ones included.
    scopes: BTreeSet<ModPath>,
    /// Per module (inline ones included), the names its top-level `use`s bind → the absolute
    /// paths they stand for.
    imports: BTreeMap<ModPath, BTreeMap<String, Vec<Vec<String>>>>,
}

impl Crate {
    /// The crate whose root file is `root`, its files read through `read`.
    fn read(root: &Path, read: &dyn Fn(&Path) -> Option<String>) -> Crate {
        let mut files = BTreeMap::new();
        let mut pending = vec![(ModPath::new(), root.to_path_buf(), false)];
        while let Some((module, file, test)) = pending.pop() {
            let text = read(&file).unwrap_or_else(|| panic!("read {}", file.display()));
            let parsed = parse(&text, &module, test);
            let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            let parent = file.parent().unwrap_or(Path::new(""));
            let dir = if module.is_empty() || stem == "mod" {
                parent.to_path_buf()
            } else {
                parent.join(stem)
            };
            for (child, test) in &parsed.children {
                let flat = dir.join(format!("{child}.rs"));
                let nested = dir.join(child).join("mod.rs");
                let path = if read(&flat).is_some() { flat } else { nested };
                let child_module = [module.clone(), vec![child.clone()]].concat();
                pending.push((child_module, path, *test));
            }
            files.insert(module, (file, parsed));
        }
        let scopes: BTreeSet<ModPath> = files
            .iter()
            .flat_map(|(module, (_, parsed))| {
                std::iter::once(module.clone()).chain(parsed.inline.iter().cloned())
            })
            .collect();
        let mut krate = Crate {
            files,
            scopes,
            imports: BTreeMap::new(),
        };
        let mut imports: BTreeMap<ModPath, BTreeMap<String, Vec<Vec<String>>>> = BTreeMap::new();
        for (_, parsed) in krate.files.values() {
            for named in &parsed.named {
                if named.test {
                    continue;
                }
                let (Some(name), Some(path)) = (&named.binds, krate.absolute(named)) else {
                    continue;
                };
                imports
                    .entry(named.scope.clone())
                    .or_default()
                    .entry(name.clone())
                    .or_default()
                    .push(path);
            }
        }
        krate.imports = imports;
        krate
    }

    /// `named`'s path from the crate root; `None` when it starts outside the crate.
    fn absolute(&self, named: &Named) -> Option<Vec<String>> {
        let mut path = named.path.as_slice();
        if path.last().is_some_and(|s| s == "self") {
            path = &path[..path.len() - 1];
        }
        let first = path.first()?;
        let mut base = named.scope.clone();
        let rest = match first.as_str() {
            "crate" => {
                base.clear();
                &path[1..]
            }
            "self" => &path[1..],
            "super" => {
                let supers = path.iter().take_while(|s| *s == "super").count();
                for _ in 0..supers {
                    base.pop()?;
                }
                &path[supers..]
            }
            child
                if named.in_use
                    && self
                        .scopes
                        .contains(&[base.clone(), vec![child.into()]].concat()) =>
            {
                path
            }
            _ => return None,
        };
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// Where `path` leads once the imports it goes through are followed.
    fn follow(&self, path: Vec<String>, hops: usize, out: &mut BTreeSet<Vec<String>>) {
        let module = (0..=path.len())
            .rev()
            .find(|n| self.scopes.contains(&path[..*n]))
            .unwrap_or(0);
        let imported = path
            .get(module)
            .and_then(|name| self.imports.get(&path[..module])?.get(name));
        match imported {
            Some(targets) if hops < 16 => {
                for target in targets {
                    let next = [target.as_slice(), &path[module + 1..]].concat();
                    self.follow(next, hops + 1, out);
                }
            }
            _ => {
                out.insert(path);
            }
        }
    }

    /// The module with a file that holds the item at `path`.
    fn module_of(&self, path: &[String]) -> ModPath {
        (0..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|m| self.files.contains_key(m))
            .unwrap_or_default()
    }

    /// The modules `named` reaches.
    fn targets(&self, named: &Named) -> BTreeSet<ModPath> {
        let mut ends = BTreeSet::new();
        if let Some(path) = self.absolute(named) {
            self.follow(path, 0, &mut ends);
        }
        let mut targets: BTreeSet<ModPath> = ends.iter().map(|p| self.module_of(p)).collect();
        if named.glob {
            for end in &ends {
                for paths in self.imports.get(end).into_iter().flat_map(|m| m.values()) {
                    for path in paths {
                        let mut reached = BTreeSet::new();
                        self.follow(path.clone(), 0, &mut reached);
                        targets.extend(reached.iter().map(|p| self.module_of(p)));
                    }
                }
            }
        }
        targets
    }

    /// The sibling edges (see the module's doc), each with the references that make it; file
    /// names relative to `base`.
    fn edges(&self, base: &Path) -> Edges {
        let mut edges = Edges::new();
        for (from, (file, parsed)) in &self.files {
            for named in parsed.named.iter().filter(|n| !n.test) {
                for to in self.targets(named) {
                    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
                    if common == from.len() || common == to.len() {
                        continue;
                    }
                    let file = file.strip_prefix(base).unwrap_or(file);
                    edges
                        .entry((from[..=common].to_vec(), to[..=common].to_vec()))
                        .or_default()
                        .insert(format!(
                            "{}:{} `{}`",
                            file.display(),
                            named.line,
                            named.path.join("::") + if named.glob { "::*" } else { "" }
                        ));
                }
            }
        }
        edges
    }
}

/// The strongly connected sets of more than one module (each one or more cycles), sorted.
fn cycles(edges: &Edges) -> Vec<Vec<ModPath>> {
    let mut next: BTreeMap<&ModPath, Vec<&ModPath>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
        next.entry(to).or_default();
    }
    // Tarjan's algorithm.
    struct State<'a> {
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        found: Vec<Vec<ModPath>>,
    }
    fn visit<'a>(
        node: &'a ModPath,
        next: &BTreeMap<&'a ModPath, Vec<&'a ModPath>>,
        s: &mut State<'a>,
    ) {
        let index = s.index.len();
        s.index.insert(node, index);
        s.low.insert(node, index);
        s.stack.push(node);
        for &to in &next[node] {
            if !s.index.contains_key(to) {
                visit(to, next, s);
                let low = s.low[node].min(s.low[to]);
                s.low.insert(node, low);
            } else if s.stack.contains(&to) {
                let low = s.low[node].min(s.index[to]);
                s.low.insert(node, low);
            }
        }
        if s.low[node] == index {
            let at = s.stack.iter().rposition(|n| *n == node).unwrap_or(0);
            let mut set: Vec<ModPath> = s.stack.drain(at..).cloned().collect();
            if set.len() > 1 {
                set.sort();
                s.found.push(set);
            }
        }
    }
    let mut state = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for node in next.keys() {
        if !state.index.contains_key(node) {
            visit(node, &next, &mut state);
        }
    }
    state.found.sort();
    state.found
}

/// A shortest cycle through `set`'s first module, within `set`, first repeated last.
fn a_cycle(set: &[ModPath], edges: &Edges) -> Vec<ModPath> {
    let start = &set[0];
    let mut came_from: BTreeMap<&ModPath, &ModPath> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for (from, to) in edges.keys() {
            if from != node || !set.contains(to) {
                continue;
            }
            if to == start {
                let mut cycle = vec![node.clone()];
                let mut at = node;
                while at != start {
                    at = came_from[at];
                    cycle.push(at.clone());
                }
                cycle.reverse();
                cycle.push(start.clone());
                return cycle;
            }
            if !came_from.contains_key(to) {
                came_from.insert(to, node);
                queue.push_back(to);
            }
        }
    }
    set.to_vec()
}

/// A failure's text for `found`: each set, a cycle through it, its edges and their references.
fn report(found: &[Vec<ModPath>], edges: &Edges) -> String {
    let mut text = String::new();
    for set in found {
        let modules = names(set);
        let cycle: Vec<String> = a_cycle(set, edges).iter().map(|m| display(m)).collect();
        text += &format!(
            "\ncycle among {}: {}\n",
            modules.join(", "),
            cycle.join(" -> ")
        );
        for ((from, to), references) in edges {
            if set.contains(from) && set.contains(to) {
                text += &format!("  {} -> {}:\n", display(from), display(to));
                for reference in references {
                    text += &format!("    {reference}\n");
                }
            }
        }
    }
    text
}

/// The repository's root.
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The sibling edges of the crate whose sources are in `src` (relative to the repository).
fn crate_edges(src: &str) -> Edges {
    let repository = repository();
    let dir = repository.join(src);
    let root = ["lib.rs", "main.rs"]
        .into_iter()
        .map(|file| dir.join(file))
        .find(|file| file.is_file())
        .unwrap_or_else(|| panic!("{src} has no lib.rs or main.rs"));
    let krate = Crate::read(&root, &|path| std::fs::read_to_string(path).ok());
    krate.edges(&repository)
}

/// Edges among the top-level modules of the workspace's known set.
const EDGES_TOP: usize = 39;
/// Edges among the `mcp::*` modules of the workspace's known set.
const EDGES_MCP: usize = 32;

/// The cycles not untied yet, each the strongly connected set a failure lists, by crate. The
/// check fails on any other cycle, and when one of these is gone or changed (this list is then
/// brought up to date), so it only ever shrinks. `workspace/src`'s shared state is named by the
/// handlers of every part it holds (`state::AppState`, built from `auth`, `mcp`, `pilot`, ...,
/// is what those parts' handlers take), and its MCP proxy and upstream client name each other's
/// helpers and types. Each entry: the crate, the set, and the number of edges among its
/// modules (a new edge inside the set fails too).
const KNOWN_CYCLES: &[(&str, &[&str], usize)] = &[
    (
        "workspace/src",
        &[
            "auth",
            "config",
            "error",
            "http",
            "mcp",
            "pilot",
            "state",
            "storage",
            "telemetry",
            "tools",
        ],
        EDGES_TOP,
    ),
    (
        "workspace/src",
        &[
            "mcp::answers",
            "mcp::call",
            "mcp::era",
            "mcp::mrtr",
            "mcp::proxy",
            "mcp::relay",
            "mcp::sessions",
            "mcp::stateless",
            "mcp::target",
            "mcp::tool_cache",
            "mcp::transport",
            "mcp::upstream",
        ],
        EDGES_MCP,
    ),
];

/// The modules of a strongly connected set, as written in a failure.
fn names(set: &[ModPath]) -> Vec<String> {
    set.iter().map(|m| display(m)).collect()
}

/// Fails with every cycle among the modules of the crate in `src` but the [`KNOWN_CYCLES`], and
/// when one of those is no longer found as it is listed.
fn assert_acyclic(src: &str) -> Edges {
    let edges = crate_edges(src);
    let found = cycles(&edges);
    let known: Vec<Vec<String>> = KNOWN_CYCLES
        .iter()
        .filter(|(crate_src, _, _)| *crate_src == src)
        .map(|(_, set, _)| set.iter().map(|m| m.to_string()).collect())
        .collect();
    let new: Vec<Vec<ModPath>> = found
        .iter()
        .filter(|set| !known.contains(&names(set)))
        .cloned()
        .collect();
    assert!(
        new.is_empty(),
        "module cycles in {src}:{}",
        report(&new, &edges)
    );
    for (crate_src, set, listed) in KNOWN_CYCLES.iter().filter(|(c, _, _)| *c == src) {
        let inside = |m: &ModPath| set.contains(&display(m).as_str());
        let among = edges.keys().filter(|(f, t)| inside(f) && inside(t)).count();
        assert_eq!(
            among, *listed,
            "KNOWN_CYCLES: the edges among {set:?} of {crate_src} changed, update it"
        );
    }
    let found: Vec<Vec<String>> = found.iter().map(|set| names(set)).collect();
    let gone: Vec<&Vec<String>> = known.iter().filter(|set| !found.contains(set)).collect();
    assert!(
        gone.is_empty(),
        "KNOWN_CYCLES lists cycles of {src} that are gone or changed, update it: {gone:?}"
    );
    edges
}

/// Whether `edges` holds `from -> to` (modules written `a::b`, `crate` for the root).
fn has_edge(edges: &Edges, from: &str, to: &str) -> bool {
    edges
        .keys()
        .any(|(f, t)| display(f) == from && display(t) == to)
}

#[test]
fn the_core_modules_form_no_cycle() {
    let edges = assert_acyclic("core/src");
    assert!(edges.len() > 50, "the graph was read: {edges:?}");
    assert!(
        has_edge(&edges, "resolve", "config"),
        "edges between top-level modules"
    );
    assert!(
        has_edge(&edges, "config::env", "config::error"),
        "edges between submodules"
    );
}

#[test]
fn the_node_addon_modules_form_no_cycle() {
    assert_acyclic("node/src");
}

#[test]
fn the_ffi_modules_form_no_cycle() {
    assert_acyclic("ffi/src");
}

#[test]
fn the_server_modules_form_no_cycle() {
    let edges = assert_acyclic("server/src");
    assert!(!edges.is_empty(), "the graph was read");
}

#[test]
fn the_workspace_modules_form_no_cycle() {
    let edges = assert_acyclic("workspace/src");
    assert!(edges.len() > 20, "the graph was read: {edges:?}");
}

#[test]
fn the_site_dir_modules_form_no_cycle() {
    assert_acyclic("site-dir/src");
}

/// The edges of a crate held in memory: `(file, text)` pairs, the root first.
fn edges_of(files: &[(&str, &str)]) -> Edges {
    let files: BTreeMap<PathBuf, String> = files
        .iter()
        .map(|(path, text)| (PathBuf::from(path), text.to_string()))
        .collect();
    let root = files
        .keys()
        .find(|p| p.ends_with("lib.rs"))
        .cloned()
        .unwrap_or_default();
    Crate::read(&root, &|path| files.get(path).cloned()).edges(Path::new(""))
}

/// `edges`' keys written `from -> to`.
fn written(edges: &Edges) -> Vec<String> {
    edges
        .keys()
        .map(|(from, to)| format!("{} -> {}", display(from), display(to)))
        .collect()
}

#[test]
fn submodule_references_are_read_and_lifted_to_siblings() {
    let edges = edges_of(&[
        (
            "src/lib.rs",
            "mod a;\nmod b;\nmod c;\n#[cfg(test)]\nmod support;\npub use b::Shared;\n",
        ),
        (
            "src/a/mod.rs",
            "mod x;\nmod y;\nmod z;\npub use self::y::Thing;\nuse crate::b;\n",
        ),
        (
            "src/a/x.rs",
            // Through the parent's re-export to `y`; a comment, a string and the file's own tests
            // are no edge.
            "use super::Thing; // crate::b::Nope\nconst S: &str = \"super::z::Z\";\n\
             #[cfg(test)]\nmod tests { use super::*; fn f() { self::f(); } }\n",
        ),
        // From an inline module, `super::super` is the file's parent.
        (
            "src/a/y.rs",
            "pub struct Thing;\nmod inner { fn f() { super::super::z::g(); } }\n",
        ),
        (
            "src/a/z.rs",
            // A group with a nested group; `crate::Shared` is `b`'s, re-exported by the root.
            "use crate::{a::{x, self}, Shared};\n\
             fn g() { let _ = '\"'; let _: &'static str = r#\"crate::c\"#; }\n",
        ),
        // Test code names nothing, up to where its item ends.
        (
            "src/b.rs",
            "pub struct Shared;\n#[cfg(test)]\nuse crate::a::y;\n\
             #[cfg(test)]\nconst T: [u8; 2] = [1, 2];\nuse crate::c;\n",
        ),
        ("src/c.rs", ""),
        ("src/support.rs", "use crate::a::x;\n"),
    ]);
    assert_eq!(
        written(&edges),
        [
            "a -> b",
            "a::x -> a::y",
            "a::y -> a::z",
            "a::z -> a::x",
            "b -> c"
        ]
    );
    let found = cycles(&edges);
    let sets: Vec<Vec<String>> = found.iter().map(|set| names(set)).collect();
    assert_eq!(sets, [["a::x", "a::y", "a::z"]]);
    let text = report(&found, &edges);
    assert!(text.contains("a::x -> a::y -> a::z -> a::x"), "{text}");
    assert!(text.contains("src/a/x.rs:1 `super::Thing`"), "{text}");
}

#[test]
fn a_glob_reaches_what_the_parent_imports() {
    let edges = edges_of(&[
        ("src/lib.rs", "mod p;\n"),
        ("src/p/mod.rs", "mod a;\nmod b;\nuse self::b::B;\n"),
        ("src/p/a.rs", "use super::*;\n"),
        ("src/p/b.rs", "pub struct B;\n"),
    ]);
    assert_eq!(written(&edges), ["p::a -> p::b"]);
}

#[test]
fn every_cycle_is_found_and_named() {
    let edges: Edges = [
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("c", "d"),
        ("e", "f"),
        ("f", "e"),
        ("g", "a"),
    ]
    .into_iter()
    .map(|(from, to)| {
        (
            (vec![from.to_string()], vec![to.to_string()]),
            BTreeSet::new(),
        )
    })
    .collect();
    let found = cycles(&edges);
    let sets: Vec<Vec<String>> = found.iter().map(|set| names(set)).collect();
    assert_eq!(sets, [vec!["a", "b", "c"], vec!["e", "f"]]);
    assert_eq!(
        a_cycle(&found[0], &edges)
            .iter()
            .map(|m| display(m))
            .collect::<Vec<_>>(),
        ["a", "b", "c", "a"]
    );
}
