//! Larger sites made from a corpus site: `factor` copies of every block, each copy's blocks
//! renamed (`<name>~<copy>`, the first copy keeps its names), their references to each other
//! (`__resolveType` naming a block) renamed with them and their page paths put under
//! `/<copy>/`, so every copy routes and resolves as the original does. What a site ten or a
//! hundred times larger costs (reloads, revisions, routes) is measured on these; they are made
//! when needed, never committed.

use sitefile_core::{Value, intern};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The blocks of `site` copied `factor` times, as `(name, block)`.
pub fn scaled_blocks(site: &str, factor: usize) -> Vec<(String, Value)> {
    let original: Vec<(String, Value)> = crate::load_site(site)
        .blocks()
        .map(|(name, block)| (name.to_string(), block.clone()))
        .collect();
    let names: HashSet<&str> = original.iter().map(|(name, _)| name.as_str()).collect();
    let mut scaled = Vec::with_capacity(original.len() * factor);
    for copy in 0..factor {
        for (name, block) in &original {
            let block = if copy == 0 {
                block.clone()
            } else {
                renamed(block, copy, &names, true)
            };
            scaled.push((copy_name(name, copy), block));
        }
    }
    scaled
}

/// Writes [`scaled_blocks`] as a site directory (`<dir>/.platform/blocks/<name>.json`), replacing
/// any blocks already there; answers how many blocks it wrote.
pub fn write_scaled_site(site: &str, factor: usize, dir: &Path) -> std::io::Result<usize> {
    let blocks_dir = dir.join(".platform").join("blocks");
    if blocks_dir.exists() {
        std::fs::remove_dir_all(&blocks_dir)?;
    }
    std::fs::create_dir_all(&blocks_dir)?;
    let blocks = scaled_blocks(site, factor);
    for (name, block) in &blocks {
        let file = blocks_dir.join(format!("{}.json", file_name(name)));
        std::fs::write(file, block.to_json_string())?;
    }
    Ok(blocks.len())
}

/// A block's name in copy `copy`.
fn copy_name(name: &str, copy: usize) -> String {
    if copy == 0 {
        name.to_string()
    } else {
        format!("{name}~{copy}")
    }
}

/// A block name as a file name, as the directory loader decodes it: `%`, `/` and characters
/// a file name cannot hold percent-encoded.
fn file_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '%' | '/' | '\\' | '\0' => out.push_str(&format!("%{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// The directory of `site` copied `factor` times, under the workspace's `target/scaled-sites/`,
/// written the first time it is asked for.
pub fn scaled_site_dir(site: &str, factor: usize) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/scaled-sites")
        .join(format!("{site}-x{factor}"));
    let done = dir.join("complete");
    if !done.is_file() {
        write_scaled_site(site, factor, &dir)
            .unwrap_or_else(|e| panic!("writing {}: {e}", dir.display()));
        std::fs::write(&done, b"").unwrap_or_else(|e| panic!("{}: {e}", done.display()));
    }
    dir
}

/// `value` as it reads in copy `copy`: references to the site's blocks renamed; at the top of
/// a block (`top`), a page's `path` put under `/<copy>/`.
fn renamed(value: &Value, copy: usize, names: &HashSet<&str>, top: bool) -> Value {
    match value {
        Value::Array(items) => Value::array(
            items
                .items()
                .iter()
                .map(|item| renamed(item, copy, names, false))
                .collect(),
        ),
        Value::Object(object) => Value::object(
            object
                .entries()
                .iter()
                .map(|(key, v)| {
                    let v = match (&**key, v.as_str()) {
                        ("__resolveType", Some(name)) if names.contains(name) => {
                            Value::from(copy_name(name, copy).as_str())
                        }
                        ("path", Some(path)) if top && path.starts_with('/') => {
                            Value::from(format!("/{copy}{path}").as_str())
                        }
                        _ => renamed(v, copy, names, false),
                    };
                    (intern(key), v)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}
