//! The `sitefile` command line, driven as a user would: `resolve`, `check` and `bundle`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sitefile(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sitefile"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn example() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/storefront")
        .display()
        .to_string()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A temporary site root with `.platform/blocks/` holding `files`.
fn site(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = std::env::temp_dir().join(format!("sitefile-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let blocks = root.join(".platform/blocks");
    std::fs::create_dir_all(&blocks).unwrap();
    for (file, body) in files {
        std::fs::write(blocks.join(file), body).unwrap();
    }
    root
}

#[test]
fn resolve_prints_the_documented_shape() {
    let out = sitefile(&[
        "resolve",
        &example(),
        "/shoes",
        "--now",
        "2026-11-28T12:00:00Z",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = json(&out);
    assert_eq!(page["page"], "pages-category");
    assert_eq!(page["path"], "/:slug");
    assert_eq!(page["params"]["slug"], "shoes");
    let components: Vec<&str> = page["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["component"].as_str().unwrap())
        .collect();
    assert_eq!(
        components,
        [
            "site/sections/Theme/Theme.tsx",
            "site/sections/Analytics/Tag.tsx",
            "site/sections/Header/Header.tsx",
            "site/sections/Product/SearchResult.tsx",
            "site/sections/Footer/Footer.tsx"
        ]
    );
    // The saved date matcher "Black Friday" holds on the 28th.
    assert_eq!(
        page["sections"][2]["props"]["alert"],
        "Black Friday: 30% off everything"
    );
    // Loaders answer null without --echo-loaders.
    assert_eq!(page["sections"][3]["props"]["page"], Value::Null);
    assert!(page["effects"]["setCookies"].is_array());
    assert!(page["effects"]["warnings"].is_array());
    assert!(page["effects"]["varies"].is_array());
    assert_eq!(page["revision"].as_str().unwrap().len(), 64);
}

#[test]
fn resolve_follows_device_cookie_and_echoes_loader_props() {
    let mobile = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148";
    let out = sitefile(&[
        "resolve",
        &example(),
        "https://storefront.example/?q=boots",
        "--user-agent",
        mobile,
        "--now",
        "2026-11-01T12:00:00Z",
        "--echo-loaders",
    ]);
    let page = json(&out);
    let hero = &page["sections"][3];
    assert_eq!(hero["props"]["title"], "Shop on the go");
    assert!(
        page["effects"]["varies"]
            .as_array()
            .unwrap()
            .contains(&Value::from("device"))
    );
    assert_eq!(
        page["sections"][2]["props"]["alert"],
        "Free shipping over $50"
    );
    let shelf = &page["sections"][4]["props"]["products"];
    assert_eq!(
        shelf["loader"],
        "vtex/loaders/intelligentSearch/productList.ts"
    );
    assert_eq!(shelf["props"]["props"]["query"], "best-sellers");
    assert_eq!(shelf["props"]["q"], "boots");
    assert_eq!(shelf["props"]["__pagePath"], "/");
}

#[test]
fn resolve_without_a_page_exits_3_and_bad_input_exits_2() {
    let root = site(
        "nopage",
        &[("pages-home.json", r#"{"path":"/","sections":[]}"#)],
    );
    let out = sitefile(&["resolve", root.to_str().unwrap(), "/missing"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(json(&out)["page"], Value::Null);
    let bad = sitefile(&["resolve", root.to_str().unwrap(), "/", "--now", "yesterday"]);
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains(
            r#"--now: "yesterday" is not an RFC 3339 date-time (e.g. 2026-06-01T12:00:00Z)"#
        ),
        "{stderr}"
    );
    let missing = sitefile(&["resolve", "/nonexistent/site", "/"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn resolve_reads_node_env_and_the_crypto_key() {
    let key = "eyJrZXkiOiBbMSwgMiwgMywgNCwgNSwgNiwgNywgOCwgOSwgMTAsIDExLCAxMiwgMTMsIDE0LCAxNSwgMTZdLCAiaXYiOiBbMCwgMSwgMiwgMywgNCwgNSwgNiwgNywgOCwgOSwgMTAsIDExLCAxMiwgMTMsIDE0LCAxNV19";
    let root = site(
        "env",
        &[(
            "pages-home.json",
            r#"{"path":"/","sections":[{"__resolveType":"site/sections/Hero.tsx",
                "token":{"__resolveType":"website/loaders/secret.ts","encrypted":"f26cd767ec513890268e42e9c6f0a087"},
                "env":{"__resolveType":"website/flags/multivariate.ts","variants":[
                  {"rule":{"__resolveType":"website/matchers/environment.ts","environment":"production"},"value":"prod"},
                  {"rule":{"__resolveType":"website/matchers/always.ts"},"value":"dev"}]}}]}"#,
        )],
    );
    let run = |vars: &[(&str, &str)]| {
        Command::new(env!("CARGO_BIN_EXE_sitefile"))
            .args(["resolve", root.to_str().unwrap(), "https://shop.example/"])
            .env_remove("NODE_ENV")
            .env_remove("PLATFORM_CRYPTO_KEY")
            .envs(vars.iter().copied())
            .output()
            .expect("the binary runs")
    };
    let out = run(&[("PLATFORM_CRYPTO_KEY", key), ("NODE_ENV", "production")]);
    assert_eq!(out.status.code(), Some(0));
    let props = &json(&out)["sections"][0]["props"];
    assert_eq!(props["token"], "api-token-123");
    assert_eq!(props["env"], "prod");

    let out = run(&[]);
    let props = &json(&out)["sections"][0]["props"];
    assert_eq!(props["token"], Value::Null);
    assert_eq!(props["env"], "dev");

    let out = run(&[("PLATFORM_CRYPTO_KEY", "c2VjcmV0LXZhbHVl")]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("PLATFORM_CRYPTO_KEY"), "{stderr}");
    assert!(
        !stderr.contains("c2VjcmV0LXZhbHVl") && !stderr.contains("secret-value"),
        "{stderr}"
    );
}

#[test]
fn check_reports_every_problem_by_block() {
    let root = site(
        "check",
        &[
            ("broken.json", r#"{"oops": "#),
            (
                "A.json",
                r#"{"__resolveType":"site/sections/X.tsx","child":{"__resolveType":"B"}}"#,
            ),
            ("B.json", r#"{"__resolveType":"A"}"#),
            (
                "pages-one.json",
                r#"{"path":"/same","sections":[{"__resolveType":"Gone Block"}]}"#,
            ),
            ("pages-two.json", r#"{"path":"/same","sections":[]}"#),
            ("pages-nopath.json", r#"{"sections":[]}"#),
            ("pages-cat.json", r#"{"path":"/:slug/p","sections":[]}"#),
            ("pages-item.json", r#"{"path":"/:id/p","sections":[]}"#),
            (
                "pages-flag.json",
                r#"{"path":"/f","sections":[{"__resolveType":"website/flags/multivariate.ts","variants":[{"rule":{"__resolveType":"site/matchers/nope.ts"},"value":null}]}]}"#,
            ),
        ],
    );
    let out = sitefile(&["check", root.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let problems = json(&out);
    let found = |kind: &str, block: &str| {
        problems
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["kind"] == kind && p["block"] == block)
    };
    assert!(found("invalidJson", "broken"), "{problems:#}");
    assert!(found("cycle", "A"), "{problems:#}");
    assert!(found("duplicatePath", "pages-two"), "{problems:#}");
    assert!(found("danglingReference", "pages-one"), "{problems:#}");
    assert!(found("pageWithoutPath", "pages-nopath"), "{problems:#}");
    assert!(found("unknownMatcher", "pages-flag"), "{problems:#}");
    assert!(found("unreachablePage", "pages-item"), "{problems:#}");
    assert!(!found("unreachablePage", "pages-cat"), "{problems:#}");

    let clean = sitefile(&["check", &example()]);
    assert!(
        clean.status.success(),
        "{}",
        String::from_utf8_lossy(&clean.stdout)
    );
}

#[test]
fn check_fails_on_sections_every_request_loses_and_resolve_names_them() {
    // A page section that is a string block, and one at the end of 71 named blocks.
    let mut files: Vec<(String, String)> = vec![
        (
            "pages-home.json".into(),
            r#"{"path":"/","sections":[{"__resolveType":"Title"},{"__resolveType":"C0"}]}"#.into(),
        ),
        ("Title.json".into(), r#""hello""#.into()),
        (
            "C70.json".into(),
            r#"{"__resolveType":"site/sections/Hero.tsx"}"#.into(),
        ),
    ];
    files.extend((0..70).map(|i| {
        (
            format!("C{i}.json"),
            format!(r#"{{"__resolveType":"C{}"}}"#, i + 1),
        )
    }));
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(f, b)| (f.as_str(), b.as_str()))
        .collect();
    let root = site("dropped", &files);

    let out = sitefile(&["check", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in [
        r#"error: pages-home: sections.0 uses block "Title" as a section, but it is a string; the section is dropped (sectionNotObject)"#,
        r#"error: pages-home: sections.1 (through block "C0") nests 72 levels of __resolveType, more than the limit of 64; what lies deeper resolves to null (tooDeep)"#,
    ] {
        assert!(stdout.lines().any(|l| l == line), "{line}\n{stdout}");
    }
    assert!(stdout.contains(": 2 error(s), 0 warning(s)"), "{stdout}");

    let out = sitefile(&["resolve", root.to_str().unwrap(), "/"]);
    assert_eq!(out.status.code(), Some(0));
    let page = json(&out);
    assert_eq!(page["sections"], serde_json::json!([]));
    let errors = page["effects"]["errors"].as_array().unwrap();
    assert!(
        errors
            .iter()
            .any(|e| e["resolveType"] == "Title" && e["context"] == "Section resolution"),
        "{errors:#?}"
    );
    assert!(
        errors.iter().any(|e| e["context"] == "depth"
            && e["message"]
                .as_str()
                .is_some_and(|m| m.ends_with(r#"reached through block "C0""#))),
        "{errors:#?}"
    );
}

#[test]
fn bundle_is_canonical_and_serves_without_the_directory() {
    let root = site(
        "bundle",
        &[
            (
                "pages-home.json",
                r#"{"sections":[{"__resolveType":"site/sections/A.tsx","z":1,"a":2}],"path":"/"}"#,
            ),
            ("bad.json", ""),
        ],
    );
    let strict = sitefile(&["bundle", root.to_str().unwrap(), "--strict"]);
    assert_eq!(strict.status.code(), Some(2));
    assert!(!root.join(".platform/blocks.gen.json").exists());

    let out = sitefile(&["bundle", root.to_str().unwrap()]);
    assert!(out.status.success());
    let bundle = root.join(".platform/blocks.gen.json");
    let first = std::fs::read(&bundle).unwrap();
    assert_eq!(
        String::from_utf8(first.clone()).unwrap(),
        "{\n\"pages-home\":{\"path\":\"/\",\"sections\":[{\"__resolveType\":\"site/sections/A.tsx\",\"a\":2,\"z\":1}]}\n}\n"
    );
    let from_dir = json(&sitefile(&["resolve", root.to_str().unwrap(), "/"]));
    std::fs::remove_dir_all(root.join(".platform/blocks")).unwrap();
    let from_bundle = json(&sitefile(&["resolve", root.to_str().unwrap(), "/"]));
    assert_eq!(from_dir["revision"], from_bundle["revision"]);
    assert_eq!(from_bundle["sections"][0]["props"]["z"], 1);

    // A damaged line of the bundle is reported by `check`, named by block.
    let text = String::from_utf8(first).unwrap();
    std::fs::write(&bundle, text.replace("\"a\":2", "\"a\":")).unwrap();
    let check = sitefile(&["check", root.to_str().unwrap(), "--json"]);
    assert_eq!(check.status.code(), Some(1));
    let problems = json(&check);
    assert_eq!(problems[0]["kind"], "invalidJson");
    assert_eq!(problems[0]["block"], "pages-home");
}

/// A `.json` symlink and a `.json` name that is not UTF-8 are skipped, and each is named: by
/// `check` (an error), by `bundle` (a warning), and `bundle --strict` refuses to write.
#[cfg(unix)]
#[test]
fn symlinked_and_non_utf8_block_files_are_named_problems() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let root = site(
        "skipped",
        &[(
            "pages-home.json",
            r#"{"path":"/","sections":[{"__resolveType":"site/sections/A.tsx"}]}"#,
        )],
    );
    let blocks = root.join(".platform/blocks");
    let outside = root.join("outside.json");
    std::fs::write(&outside, r#"{"__resolveType":"site/sections/B.tsx"}"#).unwrap();
    std::os::unix::fs::symlink(&outside, blocks.join("Linked.json")).unwrap();
    std::fs::write(
        blocks.join(OsStr::from_bytes(b"Bad\xff.json")),
        r#"{"__resolveType":"site/sections/C.tsx"}"#,
    )
    .unwrap();

    let check = sitefile(&["check", root.to_str().unwrap(), "--json"]);
    assert_eq!(check.status.code(), Some(1));
    let problems = json(&check);
    let kinds: Vec<(&str, &str)> = problems
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["kind"].as_str().unwrap(), p["block"].as_str().unwrap()))
        .collect();
    assert!(kinds.contains(&("symlink", "Linked.json")), "{problems:#}");
    assert!(
        kinds.contains(&("nonUtf8Name", "Bad\u{fffd}.json")),
        "{problems:#}"
    );

    let strict = sitefile(&["bundle", root.to_str().unwrap(), "--strict"]);
    assert_eq!(strict.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&strict.stderr);
    assert!(stderr.contains("Linked.json skipped"), "{stderr}");
    assert!(stderr.contains("not UTF-8"), "{stderr}");
    assert!(!root.join(".platform/blocks.gen.json").exists());

    let out = sitefile(&["bundle", root.to_str().unwrap()]);
    assert!(out.status.success());
    let bundle = std::fs::read_to_string(root.join(".platform/blocks.gen.json")).unwrap();
    assert!(bundle.contains("pages-home"));
    assert!(
        !bundle.contains("B.tsx") && !bundle.contains("C.tsx"),
        "{bundle}"
    );
}

#[test]
fn resolve_takes_scripted_draws_and_shows_the_sticky_cohort() {
    let root = site(
        "draws",
        &[(
            "pages-home.json",
            r#"{"path":"/","sections":[{"__resolveType":"website/flags/multivariate.ts","variants":[
                {"rule":{"__resolveType":"website/matchers/random.ts","traffic":0.5},
                 "value":{"__resolveType":"site/sections/Hero.tsx","title":"test"}},
                {"rule":{"__resolveType":"website/matchers/always.ts"},
                 "value":{"__resolveType":"site/sections/Hero.tsx","title":"control"}}]}]}"#,
        )],
    );
    let dir = root.to_str().unwrap();
    let roll = |draw: &str, cookie: Option<&str>| {
        let mut args = vec!["resolve", dir, "/", "--draw", draw];
        if let Some(cookie) = cookie {
            args.extend(["--cookie", cookie]);
        }
        let page = json(&sitefile(&args));
        let title = page["sections"][0]["props"]["title"]
            .as_str()
            .unwrap()
            .to_string();
        let cookie = page["effects"]["setCookies"][0]
            .as_str()
            .map(|c| c.split(';').next().unwrap().to_string());
        (title, cookie)
    };
    let (title, cookie) = roll("0.4", None);
    assert_eq!(title, "test");
    let cookie = cookie.expect("a first roll sets the sticky cookie");
    assert!(cookie.starts_with("platform_segment="), "{cookie}");
    assert_eq!(roll("0.6", None).0, "control");
    // The cookie keeps the cohort whatever the next roll.
    assert_eq!(roll("0.6", Some(&cookie)), ("test".to_string(), None));
    let bad = sitefile(&["resolve", dir, "/", "--draw", "1.5"]);
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("--draw") && stderr.contains("[0, 1)"),
        "{stderr}"
    );
}
