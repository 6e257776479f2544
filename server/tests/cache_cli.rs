//! `sitefile cache` end to end: argument handling and output format of the built binary. What
//! the edge decides is the `edge/` and `draft/` conformance suites' business
//! (`tests/conformance/`), run through `Site` in core.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

const STOREFRONT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/storefront");
const IPAD: &str = "user-agent:Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X)";
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

/// A temporary site without blocks, holding an options file.
struct TempSite(PathBuf);

impl TempSite {
    fn new() -> TempSite {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "sitefile-cache-cli-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let blocks_dir = dir.join(".platform/blocks");
        std::fs::create_dir_all(&blocks_dir).expect("create temp site");
        TempSite(dir)
    }
}

impl Drop for TempSite {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn output_is_the_plan_as_an_object_in_a_fixed_order() {
    let json = ok(
        Path::new(STOREFRONT),
        &["https://shop.com/?b=1&a=2", "--header", IPAD],
        &[("BUILD_HASH", "abc123")],
    );
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["key", "profile", "cacheable", "reason", "headers"]);
    assert_eq!(
        json["key"], "https://shop.com/?a=2&b=1#v=abc123&device=tablet",
        "--header and the process environment reach the site"
    );
    assert_eq!(json["profile"], "static");
    assert!(json["reason"].is_null());
    let headers = json["headers"].as_object().expect("headers are an object");
    assert!(headers.values().all(Value::is_string), "{headers:?}");
    assert_eq!(headers["X-Cache-Version"], "abc123");
}

#[test]
fn method_and_cookie_flags_reach_the_request() {
    let s = Path::new(STOREFRONT);
    let post = ok(s, &["/camisetas", "--method", "POST"], &[]);
    assert_eq!(post["reason"], "method:POST");
    let json = ok(s, &["https://shop.com/", "--cookie", SEGMENT], &[]);
    let key = json["key"].as_str().unwrap();
    assert!(key.contains("cohort=HeroTest%3A1%3A50"), "{key}");
}

#[test]
fn worker_options_file() {
    let tmp = TempSite::new();
    let options = tmp.0.join("options.json");
    std::fs::write(&options, r#"{"extraBypassPaths":["/internal"]}"#).unwrap();
    let opt = options.to_str().unwrap();
    let bypassed = ok(&tmp.0, &["/internal/x", "--options", opt], &[]);
    assert_eq!(bypassed["reason"], "bypass-path");
    std::fs::write(&options, r#"{"geoCacheKey":"planet"}"#).unwrap();
    let (code, _, err) = cache(&tmp.0, &["/", "--options", opt], &[]);
    assert_eq!(code, 2);
    assert!(err.contains("geoCacheKey"), "{err}");
    std::fs::write(&options, "not json").unwrap();
    let (code, _, err) = cache(&tmp.0, &["/", "--options", opt], &[]);
    assert_eq!(code, 2, "{err}");
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
fn without_a_deploy_version_the_binary_build_id_and_the_revision_version_keys() {
    let s = Path::new(STOREFRONT);
    let json = ok(s, &["https://shop.com/camisetas"], &[]);
    let key = json["key"].as_str().unwrap();
    let v = key
        .split_once("#v=")
        .and_then(|(_, rest)| rest.split('&').next())
        .unwrap_or_else(|| panic!("{key}: a version without BUILD_HASH"));
    let rest = v
        .strip_prefix(&format!("{}-", compiled_build_id()))
        .unwrap_or_else(|| panic!("{v}: compiled build id, then the content revision"));
    assert!(
        rest.len() == 12 && rest.bytes().all(|b| b.is_ascii_hexdigit()),
        "{v}"
    );
    assert_eq!(json["headers"]["X-Cache-Version"], v);
    let again = ok(s, &["https://shop.com/camisetas"], &[]);
    assert_eq!(again["key"], key, "stable for the same content");
}

#[test]
fn origin_flags_print_the_decision_after_the_origin() {
    let s = Path::new(STOREFRONT);
    let stored = ok(
        s,
        &[
            "/camisetas",
            "--set-cookie",
            "vtex_segment=1; Path=/",
            "--set-cookie",
            "vtex_is_session=2; Path=/",
        ],
        &[],
    );
    assert_eq!(stored["cacheable"], true, "--set-cookie implies status 200");
    assert_eq!(stored["headers"]["X-Cache"], "MISS");
    assert_eq!(
        stored["headers"]["Set-Cookie"], "vtex_segment=1; Path=/\nvtex_is_session=2; Path=/",
        "repeated Set-Cookie values are joined with a newline"
    );
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
    }
    // Security headers are decided by the origin's Content-Type: HTML only.
    let plan = ok(s, &["/camisetas"], &[]);
    assert!(plan["headers"].get("X-Content-Type-Options").is_none());
    let html = ok(
        s,
        &["/camisetas", "--content-type", "text/html; charset=utf-8"],
        &[],
    );
    assert_eq!(html["cacheable"], true, "--content-type implies status 200");
    assert_eq!(html["headers"]["X-Content-Type-Options"], "nosniff");
    assert!(
        html["headers"]["Content-Security-Policy"]
            .as_str()
            .unwrap()
            .starts_with("frame-ancestors 'self'")
    );
    let json = ok(
        s,
        &["/camisetas", "--content-type", "application/json"],
        &[],
    );
    assert_eq!(json["headers"]["Content-Type"], "application/json");
    for name in ["Content-Security-Policy", "Strict-Transport-Security"] {
        assert!(json["headers"].get(name).is_none(), "{name} on JSON");
    }
}

/// A tablet with a tracking parameter: the parameter leaves the key, the iPad is a tablet, the
/// deployment's build hash versions it, and the page gets the `static` profile.
#[test]
fn an_ipad_with_a_tracking_parameter_gets_the_tablet_key_without_it() {
    let json = ok(
        Path::new(STOREFRONT),
        &[
            "https://shop.com/?utm_source=x",
            "--header",
            "user-agent:Mozilla/5.0 (iPad)",
        ],
        &[("BUILD_HASH", "abc123")],
    );
    assert_eq!(json["key"], "https://shop.com/#v=abc123&device=tablet");
    assert_eq!(json["profile"], "static");
}
