//! `sitefile cache` end to end: the built binary on the example site and on temporary sites.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

const STOREFRONT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/storefront");
const IPAD: &str = "user-agent:Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X)";
const IPHONE: &str = "user-agent:Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile";
/// `{"active":["HeroTest"],"inactiveDrawn":[],"pct":{"HeroTest":50}}`, percent-encoded, base64.
const SEGMENT: &str = "platform_segment=JTdCJTIyYWN0aXZlJTIyJTNBJTVCJTIySGVyb1Rlc3QlMjIlNUQlMkMlMjJpbmFjdGl2ZURyYXduJTIyJTNBJTVCJTVEJTJDJTIycGN0JTIyJTNBJTdCJTIySGVyb1Rlc3QlMjIlM0E1MCU3RCU3RA==";

/// Runs `sitefile cache` with a clean environment plus `env`; returns (exit code, stdout JSON, stderr).
fn cache(site: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sitefile"))
        .arg("cache")
        .arg(site)
        .args(args)
        .env_clear()
        .envs(env.iter().copied())
        .output()
        .expect("run sitefile");
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        json,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(site: &Path, args: &[&str], env: &[(&str, &str)]) -> Value {
    let (code, json, err) = cache(site, args, env);
    assert_eq!(code, 0, "stderr: {err}");
    json
}

/// A temporary site whose blocks are the given `(file name, JSON)` pairs.
struct TempSite(PathBuf);

impl TempSite {
    fn new(blocks: &[(&str, &str)]) -> TempSite {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "sitefile-cache-cli-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let blocks_dir = dir.join(".platform/blocks");
        std::fs::create_dir_all(&blocks_dir).expect("create temp site");
        for (name, json) in blocks {
            std::fs::write(blocks_dir.join(name), json).expect("write block");
        }
        TempSite(dir)
    }
}

impl Drop for TempSite {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn site() -> TempSite {
    TempSite::new(&[
        (
            "site.json",
            r#"{"__resolveType":"site/apps/site.ts","previewHosts":["preview.shop.com"]}"#,
        ),
        (
            "pages-home.json",
            r#"{"__resolveType":"website/pages/Page.tsx","name":"Home","path":"/","sections":[
                {"__resolveType":"website/flags/multivariate.ts","variants":[
                  {"rule":{"__resolveType":"website/matchers/location.ts","includeLocations":[{"country":"BR"}]},"value":{"__resolveType":"site/sections/Hero.tsx"}}]}]}"#,
        ),
        (
            "redirect-old.json",
            r#"{"__resolveType":"website/loaders/redirect.ts","redirect":{"from":"/Old-Page/","to":"/new page","type":"permanent"}}"#,
        ),
    ])
}

#[test]
fn cacheable_page_on_the_example_site() {
    let json = ok(
        Path::new(STOREFRONT),
        &[
            "https://shop.com/?utm_source=news&b=1&a=2",
            "--header",
            IPAD,
        ],
        &[("BUILD_HASH", "abc123")],
    );
    assert_eq!(
        json["key"],
        "https://shop.com/?a=2&b=1#v=abc123&device=tablet"
    );
    assert_eq!(json["profile"], "static");
    assert_eq!(json["cacheable"], true);
    assert!(json["reason"].is_null());
    let h = &json["headers"];
    assert_eq!(
        h["Cache-Control"],
        "public, max-age=120, s-maxage=900, stale-while-revalidate=1800, stale-if-error=7200"
    );
    assert_eq!(h["Vary"], "Accept-Encoding");
    assert_eq!(h["X-Cache-Version"], "abc123");
    assert_eq!(h["X-Content-Type-Options"], "nosniff");
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["key", "profile", "cacheable", "reason", "headers"]);
}

#[test]
fn parameter_order_and_tracking_params_do_not_split_the_cache() {
    let s = Path::new(STOREFRONT);
    let a = ok(s, &["https://shop.com/camisetas?b=2&a=1&gclid=x"], &[]);
    let b = ok(s, &["https://shop.com/camisetas?a=1&b=2"], &[]);
    assert_eq!(a["key"], b["key"]);
    let phone = ok(s, &["https://shop.com/camisetas", "--header", IPHONE], &[]);
    let tablet = ok(s, &["https://shop.com/camisetas", "--header", IPAD], &[]);
    assert_ne!(
        phone["key"], tablet["key"],
        "tablets are not folded into phones"
    );
}

#[test]
fn cohort_and_geo_parts() {
    let s = site();
    let json = ok(
        &s.0,
        &[
            "https://shop.com/",
            "--cookie",
            SEGMENT,
            "--header",
            "cf-ipcountry:br",
            "--header",
            "cf-region-code:SP",
        ],
        &[],
    );
    let key = json["key"].as_str().unwrap();
    assert!(
        key.contains("geo=BR%7CSP"),
        "{key}: content uses the location matcher"
    );
    assert!(key.contains("cohort=HeroTest%3A1%3A50"), "{key}");
    let storefront = ok(
        Path::new(STOREFRONT),
        &["https://shop.com/", "--header", "cf-ipcountry:BR"],
        &[],
    );
    assert!(
        !storefront["key"].as_str().unwrap().contains("geo="),
        "no location matcher, no geo part"
    );
}

#[test]
fn reasons_for_not_caching() {
    let s = Path::new(STOREFRONT);
    let reason = |args: &[&str], env: &[(&str, &str)]| ok(s, args, env)["reason"].clone();
    assert_eq!(
        reason(&["/camisetas", "--method", "POST"], &[]),
        "method:POST"
    );
    assert_eq!(reason(&["/checkout"], &[]), "non-cacheable:cart");
    assert_eq!(reason(&["/account/orders"], &[]), "non-cacheable:private");
    assert_eq!(reason(&["/live/_meta"], &[]), "bypass-path");
    assert_eq!(
        reason(
            &[
                "/camisetas",
                "--header",
                "x-platform-matchers-override:Mobile visitors=1"
            ],
            &[]
        ),
        "matcher-override"
    );
    assert_eq!(
        reason(&["/camisetas?x-platform-matchers-override=A%3D0"], &[]),
        "matcher-override"
    );
    assert_eq!(
        reason(&["/camisetas"], &[("NODE_ENV", "development")]),
        "dev-mode"
    );
    let cart = ok(s, &["/cart"], &[]);
    assert_eq!(cart["cacheable"], false);
    assert!(cart["key"].is_null());
    assert_eq!(
        cart["headers"]["Cache-Control"],
        "private, no-cache, no-store, must-revalidate"
    );
    assert_eq!(cart["headers"]["X-Cache"], "BYPASS");
    assert_eq!(cart["headers"]["X-Cache-Reason"], "non-cacheable:cart");
}

#[test]
fn draft_preview_on_allowed_hosts_only() {
    let s = site();
    let url = "https://preview.shop.com/?__draft=api.platformcms.com/drafts/x@v1";
    let json = ok(&s.0, &[url], &[]);
    assert_eq!(json["reason"], "draft");
    assert_eq!(json["headers"]["Cache-Control"], "no-store, private");
    assert_eq!(json["headers"]["X-Robots-Tag"], "noindex, nofollow");
    assert!(
        json["headers"]["Set-Cookie"]
            .as_str()
            .unwrap()
            .starts_with("__platform_draft=")
    );
    let other = ok(
        &s.0,
        &["https://www.shop.com/?__draft=api.platformcms.com/drafts/x@v1"],
        &[],
    );
    assert_eq!(other["cacheable"], true, "other hosts are inert");
    let off = ok(&s.0, &[url], &[("PLATFORM_ALLOWED_PREVIEW_HOSTS", "none")]);
    assert_eq!(off["cacheable"], true, "`none` turns draft preview off");
    let env = ok(
        &s.0,
        &["https://www.shop.com/?__draft=api.platformcms.com/d@v1"],
        &[("PLATFORM_ALLOWED_PREVIEW_HOSTS", "www.shop.com")],
    );
    assert_eq!(
        env["reason"], "draft",
        "the variable replaces the Site block's list"
    );
}

#[test]
fn redirects_and_assets() {
    let s = site();
    let json = ok(&s.0, &["https://shop.com/old-page?utm_source=x"], &[]);
    assert_eq!(json["reason"], "redirect:301");
    assert_eq!(json["headers"]["Location"], "/new%20page?utm_source=x");
    let asset = ok(&s.0, &["https://shop.com/assets/app-3f9a1b2c.js"], &[]);
    assert_eq!(
        asset["headers"]["Cache-Control"],
        "public, max-age=31536000, immutable"
    );
    assert_eq!(asset["key"], "https://shop.com/assets/app-3f9a1b2c.js");
}

#[test]
fn worker_options_file() {
    let s = site();
    let options = s.0.join("options.json");
    std::fs::write(
        &options,
        r#"{"geoCacheKey":"off","deviceSpecificKeys":false,"extraBypassPaths":["/internal"]}"#,
    )
    .unwrap();
    let opt = options.to_str().unwrap();
    let json = ok(
        &s.0,
        &[
            "https://shop.com/",
            "--options",
            opt,
            "--header",
            "cf-ipcountry:BR",
        ],
        &[],
    );
    assert!(
        json["key"]
            .as_str()
            .unwrap()
            .strip_prefix("https://shop.com/#v=")
            .is_some_and(|v| !v.contains('&')),
        "{}: neither geo nor device",
        json["key"]
    );
    let bypassed = ok(&s.0, &["/internal/x", "--options", opt], &[]);
    assert_eq!(bypassed["reason"], "bypass-path");
    assert_eq!(bypassed["cacheable"], false);
    assert_eq!(
        bypassed["headers"]["Cache-Control"], "private, no-cache, no-store, must-revalidate",
        "no s-maxage on a response the edge bypassed"
    );
    assert!(bypassed["headers"].get("CDN-Cache-Control").is_none());
    std::fs::write(&options, r#"{"geoCacheKey":"planet"}"#).unwrap();
    let (code, _, err) = cache(&s.0, &["/", "--options", opt], &[]);
    assert_eq!(code, 2);
    assert!(err.contains("geoCacheKey"), "{err}");
}

#[test]
fn bad_input_is_an_error_naming_it() {
    let s = Path::new(STOREFRONT);
    let (code, _, err) = cache(s, &["/"], &[("PLATFORM_LOADER_CACHE_MAX_BYTES", "lots")]);
    assert_eq!(code, 2);
    assert!(err.contains("PLATFORM_LOADER_CACHE_MAX_BYTES"), "{err}");
    let (code, _, err) = cache(s, &["/", "--header", "no-colon"], &[]);
    assert_eq!(code, 2, "{err}");
    let (code, _, _) = cache(Path::new("/nonexistent/site"), &["/"], &[]);
    assert_eq!(code, 2);
    let (code, _, _) = cache(s, &["http://[bad"], &[]);
    assert_eq!(code, 2);
}

/// The build id the binary was compiled with (`SITEFILE_BUILD_HASH`, else `sitefile-<version>`).
fn compiled_build_id() -> String {
    match option_env!("SITEFILE_BUILD_HASH").map(str::trim) {
        Some(h) if !h.is_empty() => h.to_string(),
        _ => format!("sitefile-{}", env!("CARGO_PKG_VERSION")),
    }
}

#[test]
fn deploy_version_falls_back_to_ci_sha_then_build_time_hash() {
    let s = Path::new(STOREFRONT);
    let version = |env: &[(&str, &str)], args: &[&str]| {
        let mut all = vec!["https://shop.com/camisetas"];
        all.extend_from_slice(args);
        let json = ok(s, &all, env);
        let key = json["key"].as_str().unwrap().to_string();
        let v = key
            .split_once("#v=")
            .map(|(_, rest)| rest.split('&').next().unwrap().to_string());
        (
            v,
            json["headers"]["X-Cache-Version"]
                .as_str()
                .map(str::to_string),
        )
    };
    let (v, header) = version(&[], &[]);
    let v = v.expect("a version without BUILD_HASH");
    let rest = v
        .strip_prefix(&format!("{}-", compiled_build_id()))
        .unwrap_or_else(|| panic!("{v}: compiled build id, then the content revision"));
    assert!(
        rest.len() == 12 && rest.bytes().all(|b| b.is_ascii_hexdigit()),
        "{v}"
    );
    assert_eq!(header.as_deref(), Some(v.as_str()));
    assert_eq!(
        version(&[], &[]).0.as_deref(),
        Some(v.as_str()),
        "stable for the same content"
    );
    assert_eq!(
        version(&[("WORKERS_CI_COMMIT_SHA", "ci123")], &[])
            .0
            .as_deref(),
        Some("ci123")
    );
    assert_eq!(
        version(
            &[("WORKERS_CI_COMMIT_SHA", "ci123"), ("BUILD_HASH", "b9")],
            &[]
        )
        .0
        .as_deref(),
        Some("b9")
    );
    let tmp = TempSite::new(&[]);
    let options = tmp.0.join("options.json");
    std::fs::write(&options, r#"{"cacheVersionEnv":false}"#).unwrap();
    let (v, header) = version(
        &[("BUILD_HASH", "b9")],
        &["--options", options.to_str().unwrap()],
    );
    assert_eq!((v, header), (None, None), "cacheVersionEnv: false");
}

#[test]
fn after_origin_decision() {
    let s = Path::new(STOREFRONT);
    let stored = ok(
        s,
        &[
            "/camisetas",
            "--status",
            "200",
            "--set-cookie",
            "vtex_segment=1; Path=/",
        ],
        &[],
    );
    assert_eq!(stored["cacheable"], true);
    assert_eq!(stored["headers"]["X-Cache"], "MISS");
    assert_eq!(stored["headers"]["Set-Cookie"], "vtex_segment=1; Path=/");
    for (args, reason) in [
        (vec!["--set-cookie", "session=abc"], "private-set-cookie"),
        (vec!["--degraded"], "degraded"),
        (vec!["--status", "503"], "status:503"),
    ] {
        let mut all = vec!["/camisetas"];
        all.extend(args);
        let json = ok(s, &all, &[]);
        assert_eq!(json["cacheable"], false, "{reason}");
        assert_eq!(json["reason"], reason);
        let h = &json["headers"];
        assert_eq!(
            h["Cache-Control"],
            "private, no-cache, no-store, must-revalidate"
        );
        assert!(h.get("CDN-Cache-Control").is_none(), "{reason}");
        assert!(h.get("X-Platform-Degraded").is_none(), "{reason}");
        assert_eq!(h["X-Cache"], "BYPASS");
        assert_eq!(h["X-Cache-Reason"], reason);
    }
}

#[test]
fn forwarded_host_and_malformed_drafts() {
    let s = site();
    let url = "https://www.shop.com/?__draft=api.platformcms.com/drafts/x@v1";
    let forged = ok(
        &s.0,
        &[url, "--header", "x-forwarded-host:preview.shop.com"],
        &[],
    );
    assert_eq!(
        forged["cacheable"], true,
        "a client's X-Forwarded-Host does not make it a preview host"
    );
    let options = s.0.join("options.json");
    std::fs::write(&options, r#"{"trustForwardedHost":true}"#).unwrap();
    let proxied = ok(
        &s.0,
        &[
            url,
            "--header",
            "x-forwarded-host:preview.shop.com",
            "--options",
            options.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(proxied["reason"], "draft", "behind a proxy that sets it");
    let malformed = ok(
        &s.0,
        &["https://preview.shop.com/?__draft=%3Cscript%3E"],
        &[],
    );
    assert_eq!(malformed["cacheable"], false);
    assert_eq!(malformed["headers"]["X-Robots-Tag"], "noindex, nofollow");
    assert!(malformed["headers"].get("Set-Cookie").is_none());
}
