//! Resolves the home page of my-site as a desktop and as a phone, running its loader
//! (docs/src/getting-started/rust.md).

use sitefile_core::{NoHost, Request, ResolveConfig, Site, SiteSetup, Step, Value, WorkerOptions};
use std::collections::HashMap;
use std::path::Path;

/// The site's products loader (a real host asks its commerce platform).
fn products(props: &Value) -> Value {
    let count = props.get("count").and_then(Value::as_f64).unwrap_or(3.0) as i64;
    let list: Vec<serde_json::Value> = (1..=count)
        .map(|i| serde_json::json!({"name": format!("Product {i}"), "price": 10 * i}))
        .collect();
    Value::from(serde_json::Value::from(list))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The content: every block file under my-site/.platform/blocks.
    let loaded = sitefile_site_dir::load(Path::new("my-site"))?;
    // Sections and loaders registered by convention (keys holding `/sections/`, `/loaders/`),
    // the spec's default worker options, no environment variables.
    let setup = SiteSetup::new(
        ResolveConfig::by_convention(),
        WorkerOptions::default(),
        HashMap::new(),
    );
    let site = Site::new(loaded.snapshot, setup)?;

    for agent in [
        "Mozilla/5.0 (X11; Linux x86_64)",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148",
    ] {
        let request = Request::new("https://my-site.example/")?
            .with_header("user-agent", agent)
            .with_now(chrono::Utc::now());
        let mut resolution = site.resolve_page(request, &NoHost);
        let page = loop {
            match resolution.next(&NoHost)? {
                Step::NeedLoaders(calls) => {
                    for call in calls {
                        let result = match call.key.as_str() {
                            "site/loaders/products.ts" => Ok(products(&call.props)),
                            other => Err(format!("no loader {other}")),
                        };
                        resolution.provide(call.id, result)?;
                    }
                }
                Step::Done(page) => break page,
            }
        };
        let props: Vec<serde_json::Value> = page
            .sections
            .iter()
            .map(|section| serde_json::Value::from(&section.props))
            .collect();
        println!("{}", serde_json::Value::from(props));
    }
    Ok(())
}
