//! The sites the targets run against: the example storefront's content (compiled in), with a
//! block of redirects whose targets all stay on the site, under a few setups.

use sitefile_core::content::Snapshot;
use sitefile_core::{Site, SiteSetup, Value};
use std::sync::OnceLock;

/// The host every edge request is made on.
pub const HOST: &str = "shop.example";

/// The reload token of the production admin setup.
pub const RELOAD_TOKEN: &str = "s3cret";
/// The purge token of the production admin setup.
pub const PURGE_TOKEN: &str = "p-token";

macro_rules! block {
    ($name:literal, $file:literal) => {
        (
            $name,
            include_str!(concat!(
                "../../examples/storefront/.platform/blocks/",
                $file
            )),
        )
    };
}

/// The example storefront's blocks: (block name, JSON).
pub const STOREFRONT: &[(&str, &str)] = &[
    block!("Black Friday", "Black%20Friday.json"),
    block!("Footer", "Footer.json"),
    block!("Header", "Header.json"),
    block!("Mobile visitors", "Mobile%20visitors.json"),
    block!("Shelf - Best sellers", "Shelf%20-%20Best%20sellers.json"),
    block!("pages-category", "pages-category.json"),
    block!("pages-home", "pages-home.json"),
    block!("pages-not-found", "pages-not-found.json"),
    block!("pages-product", "pages-product.json"),
    block!("pages-search", "pages-search.json"),
    block!("site", "site.json"),
];

/// Redirects of every shape the redirect table takes (exact, with a query, globs whose `*` lands
/// in a path, an authority, a query or a fragment), every target on the site: a `Location` off
/// the site can only come from the request.
pub const REDIRECTS: &str = r#"{
  "__resolveType": "website/loaders/redirects.ts",
  "redirects": [
    { "from": "/old", "to": "/new", "type": "permanent" },
    { "from": "/old-query?x=1", "to": "/new-query" },
    { "from": "/s?q=Airking", "to": "/rolex/air-king", "type": "permanent" },
    { "from": "https://shop.example/abs", "to": "/target", "type": 308 },
    { "from": "/blog/*", "to": "/articles/*" },
    { "from": "/pt/*", "to": "/*", "type": "301" },
    { "from": "/en/*", "to": "https://shop.example/*" },
    { "from": "/en-root/*", "to": "https://shop.example*" },
    { "from": "/busca/*", "to": "/s?q=*" },
    { "from": "/ancora/*", "to": "/page#*" },
    { "from": "/loja/*", "to": "/store/*/index" },
    { "from": "/deep/*", "to": "https://shop.example/x?from=*&y=1" },
    { "from": "/star/*", "to": "*" },
    { "from": "/Caf%C3%A9/*", "to": "/cafe/*", "type": "temporary" }
  ]
}"#;

/// Blocks as the content map's entries.
fn entries(blocks: &[(&str, &str)]) -> Vec<(sitefile_core::Key, Value)> {
    let mut map = serde_json::Map::new();
    for (name, json) in blocks {
        let block: serde_json::Value = serde_json::from_str(json).expect("the blocks are JSON");
        map.insert(name.to_string(), block);
    }
    let text = serde_json::Value::Object(map).to_string();
    match Value::from_json_str(&text).expect("the content map parses") {
        Value::Object(object) => object.entries().to_vec(),
        _ => unreachable!("a JSON object"),
    }
}

/// The storefront's content.
pub fn storefront() -> Snapshot {
    static ENTRIES: OnceLock<Vec<(sitefile_core::Key, Value)>> = OnceLock::new();
    Snapshot::from_blocks(ENTRIES.get_or_init(|| entries(STOREFRONT)).clone())
}

/// The storefront's content with [`REDIRECTS`].
pub fn storefront_with_redirects() -> Snapshot {
    static ENTRIES: OnceLock<Vec<(sitefile_core::Key, Value)>> = OnceLock::new();
    let entries = ENTRIES.get_or_init(|| {
        let mut blocks = STOREFRONT.to_vec();
        blocks.push(("redirects-site", REDIRECTS));
        entries(&blocks)
    });
    Snapshot::from_blocks(entries.clone())
}

/// A site serving `snapshot` with the setup's JSON form.
pub fn site(snapshot: Snapshot, setup: &str) -> Site {
    let setup = SiteSetup::from_json(setup).expect("the fuzz setups are valid");
    Site::new(snapshot, setup).expect("the fuzz setups are valid")
}
