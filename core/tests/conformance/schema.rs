//! Every case file validates against its suite's JSON Schema (`tests/conformance/schema/`,
//! draft 2020-12): a malformed case, or a suite without a schema, fails here.

use crate::support;
use jsonschema::{Registry, Resource, Validator};
use serde_json::{Value as Json, json};

/// Where the schemas are published under their `$id`s.
const BASE: &str = "https://sitefile.example/conformance/schema/";

fn read(path: &std::path::Path) -> Json {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The validators of every suite, by suite name (each schema file but `common.json`), built
/// with every schema file registered under its `$id` so the suites' `$ref`s resolve offline.
fn validators() -> Vec<(String, Validator)> {
    let dir = support::root().join("schema");
    let mut docs: Vec<(String, Json)> = support::suite_files("schema")
        .iter()
        .map(|path| {
            let stem = path.file_stem().expect("a file name").to_string_lossy();
            (stem.into_owned(), read(path))
        })
        .collect();
    docs.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, doc) in &docs {
        assert_eq!(
            doc["$id"],
            json!(format!("{BASE}{name}.json")),
            "{}: $id names the file",
            dir.display()
        );
    }
    let registry = Registry::new()
        .extend(docs.iter().map(|(name, doc)| {
            (
                format!("{BASE}{name}.json"),
                Resource::from_contents(doc.clone()),
            )
        }))
        .and_then(|builder| builder.prepare())
        .expect("the schemas register");
    docs.iter()
        .filter(|(name, _)| name != "common")
        .map(|(name, doc)| {
            let validator = jsonschema::options()
                .with_registry(&registry)
                .build(doc)
                .unwrap_or_else(|e| panic!("schema/{name}.json: {e}"));
            (name.clone(), validator)
        })
        .collect()
}

/// The errors of `instance` under `validator`, one line each.
fn errors(validator: &Validator, instance: &Json) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

#[test]
fn every_case_file_validates_against_its_suite_schema() {
    let validators = validators();
    let mut suites: Vec<String> = std::fs::read_dir(support::root())
        .expect("the conformance tree")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.is_dir())
        .map(|p| {
            p.file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name != "schema")
        .collect();
    suites.sort();
    let mut failures = Vec::new();
    let mut count = 0;
    for suite in &suites {
        let Some((_, validator)) = validators.iter().find(|(name, _)| name == suite) else {
            failures.push(format!("{suite}/: no schema/{suite}.json"));
            continue;
        };
        for file in support::suite_files(suite) {
            count += 1;
            let name = file.file_name().expect("a name").to_string_lossy();
            for error in errors(validator, &read(&file)) {
                failures.push(format!("{suite}/{name}: {error}"));
            }
        }
    }
    eprintln!("{count} case files in {} suites", suites.len());
    assert!(count > 0, "no case files");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_schemas_refuse_malformed_cases() {
    let validators = validators();
    let schema = |suite: &str| {
        &validators
            .iter()
            .find(|(name, _)| name == suite)
            .unwrap_or_else(|| panic!("a {suite} schema"))
            .1
    };
    let page_case = |expect: Json| json!([{"name": "n", "blocks": {}, "request": {"url": "https://a.example/"}, "expect": expect}]);
    assert!(errors(schema("resolution"), &page_case(json!({"sections": []}))).is_empty());
    assert!(
        !errors(schema("resolution"), &page_case(json!({"sectoins": []}))).is_empty(),
        "a misspelled expect key"
    );
    assert!(
        !errors(schema("matchers"), &page_case(json!({"rounds": [[1]]}))).is_empty(),
        "a round of numbers"
    );
    let step_case = |step: Json| json!([{"name": "n", "steps": [step]}]);
    let purge = json!({"do": "purgeLoaders", "expect": {"loaderCacheEntries": 0}});
    assert!(errors(schema("loader-cache"), &step_case(purge.clone())).is_empty());
    assert!(
        !errors(schema("reload"), &step_case(purge)).is_empty(),
        "a step kind the suite does not have"
    );
    let reload = |expect: Json| json!({"do": "reload", "body": {}, "expect": expect});
    assert!(
        !errors(
            schema("reload"),
            &step_case(reload(json!({"error": "BAD"})))
        )
        .is_empty(),
        "an error code that does not exist"
    );
    assert!(
        !errors(
            schema("reload"),
            &step_case(reload(json!({"revison": "changed"})))
        )
        .is_empty(),
        "a misspelled common expect key"
    );
    assert!(
        !errors(schema("admin"), &json!([{"name": "n", "expect": {}}])).is_empty(),
        "an admin case without a request"
    );
}
