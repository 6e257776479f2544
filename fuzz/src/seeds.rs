//! The seeds in `fuzz/seeds/<target>/`, built from the example storefront (compiled in) and a
//! few small blocks and URLs of `../shared/corpus` (real sites' content). `cargo test` in `fuzz/`
//! checks the files are what this module builds; `SITEFILE_WRITE_SEEDS=1 cargo test` rewrites
//! them. Seeds are small (a few KB each): the fuzzer grows its own corpus from them.

use crate::sites::{self, PURGE_TOKEN, RELOAD_TOKEN, STOREFRONT};
use std::path::Path;

/// One seed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seed {
    /// The fuzz target it seeds.
    pub target: &'static str,
    /// The file name.
    pub name: String,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// The targets that have seeds.
pub const TARGETS: [&str; 3] = ["admin", "edge", "resolve"];

/// Blocks of `../shared/corpus` the seeds carry: small, and of the kinds a site has (its `Site`
/// app, a header, pages, redirects), as (site, file name).
pub const CORPUS_BLOCKS: [(&str, &str); 8] = [
    ("bolovo-store", "Site.json"),
    ("bolovo-store", "pages-offline-b9c52de8c7b3.json"),
    ("bolovo-store", "my-redirects.json"),
    ("dryzunstore", "pages-Cashback-231413.json"),
    ("dryzunstore", "redirects-s%253Fq%253DAirkin-668628.json"),
    ("fossil", "header.json"),
    ("abracasa", "redirect-9b82720dd7ef.json"),
    ("abracasa", "pages-loginmyacc-5daca92426eb.json"),
];

/// URLs of `../shared/corpus/urls.txt` the edge seeds request (their paths and queries, on the
/// fuzz host), by line number (from 1).
pub const CORPUS_URL_LINES: [usize; 7] = [17, 18, 26, 30, 68, 72, 77];

/// A block name from a file name: the stem, percent-decoded once.
fn block_name(file: &str) -> String {
    let stem = file.strip_suffix(".json").unwrap_or(file);
    let bytes = stem.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The corpus blocks found under `corpus`, as (block name, JSON text, compact).
fn corpus_blocks(corpus: &Path) -> Vec<(String, String)> {
    CORPUS_BLOCKS
        .iter()
        .filter_map(|(site, file)| {
            let text = std::fs::read_to_string(corpus.join(site).join("blocks").join(file)).ok()?;
            let value: serde_json::Value = serde_json::from_str(&text).ok()?;
            Some((block_name(file), value.to_string()))
        })
        .collect()
}

/// A content map (`{name: block}`) of `blocks`, compact.
fn content_map(blocks: &[(String, String)]) -> String {
    let mut map = serde_json::Map::new();
    for (name, json) in blocks {
        let value = serde_json::from_str(json).expect("blocks are JSON");
        map.insert(name.clone(), value);
    }
    serde_json::Value::Object(map).to_string()
}

fn storefront_blocks() -> Vec<(String, String)> {
    STOREFRONT
        .iter()
        .map(|(name, json)| {
            let value: serde_json::Value = serde_json::from_str(json).expect("blocks are JSON");
            (name.to_string(), value.to_string())
        })
        .collect()
}

/// An HTTP-like request: request line, header lines, blank line, body.
fn request(line: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut text = format!("{line}\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\n"));
    }
    text.push('\n');
    text.push_str(body);
    text.into_bytes()
}

fn admin_seeds(corpus: &[(String, String)]) -> Vec<(String, Vec<u8>)> {
    let storefront = storefront_blocks();
    let home = &storefront
        .iter()
        .find(|(n, _)| n == "pages-home")
        .expect("a home page")
        .1;
    let reload = [
        ("Authorization", RELOAD_TOKEN),
        ("Content-Type", "application/json"),
    ];
    let purge_auth = format!("Bearer {PURGE_TOKEN}");
    let purge = [
        ("Authorization", purge_auth.as_str()),
        ("Content-Type", "application/json"),
    ];
    let origin = [("Origin", "https://admin.example")];
    let mut seeds = vec![
        ("meta", request("GET /live/_meta", &origin, "")),
        (
            "meta-if-none-match",
            request(
                "GET /platform/meta",
                &[("If-None-Match", "\"stale\", W/\"meta-0\"")],
                "",
            ),
        ),
        (
            "sitefile-read",
            request(
                "GET /.sitefile",
                &[("If-None-Match", "*"), ("Accept-Encoding", "gzip")],
                "",
            ),
        ),
        (
            "reload-delta-home",
            request(
                "POST /.sitefile HTTP/1.1",
                &reload,
                &format!(r#"{{"blocks": {{"pages-home": {home}, "Footer": null}}}}"#),
            ),
        ),
        (
            "reload-full-storefront",
            request(
                "POST /platform/sitefile",
                &reload,
                &content_map(&storefront),
            ),
        ),
        (
            "reload-scheme-refused",
            request(
                "POST /.sitefile",
                &[("Authorization", "Bearer s3cret")],
                "{}",
            ),
        ),
        (
            "reload-declared-too-large",
            request(
                "POST /.sitefile",
                &[
                    ("Authorization", RELOAD_TOKEN),
                    ("Content-Length", "999999999"),
                ],
                "{}",
            ),
        ),
        (
            "reload-invalid-json",
            request("POST /.sitefile", &reload, r#"{"blocks": [1, }"#),
        ),
        (
            "preflight",
            request(
                "OPTIONS /.sitefile",
                &[
                    ("Origin", "https://admin.example"),
                    ("Access-Control-Request-Method", "POST"),
                ],
                "",
            ),
        ),
        ("method-not-allowed", request("PUT /.sitefile", &[], "{}")),
        (
            "purge",
            request(
                "POST /_cache/purge",
                &purge,
                r#"{"paths": ["/", "/p?x=2&utm_source=mail", "/camisetas"], "countries": ["BR"]}"#,
            ),
        ),
        (
            "purge-loaders",
            request(
                "POST /_cache/purge-loaders",
                &[("Authorization", &purge_auth)],
                "",
            ),
        ),
        (
            "preview-get",
            request(
                "GET /live/previews/site%2Fsections%2FHero.tsx?props=%7B%22title%22%3A%22Hi%22%7D&path=%2Fsale&deviceHint=mobile",
                &origin,
                "",
            ),
        ),
        (
            "preview-saved-block",
            request(
                "POST /platform/previews/Header",
                &[("Content-Type", "application/json")],
                r#"{"props": {"logo": {"alt": "x"}}, "__overlay": {"Header": {"__resolveType": "site/sections/Header/Header.tsx"}}}"#,
            ),
        ),
        (
            "render",
            request(
                "POST /platform/render?resolveChain=pages-home&path=%2F",
                &[("Content-Type", "application/json")],
                r#"{"__props": {"__resolveType": "site/sections/NotFound.tsx", "title": "t"}}"#,
            ),
        ),
        (
            "invoke-single",
            request(
                "POST /platform/invoke/vtex%2Floaders%2FintelligentSearch%2FproductList.ts?select=id,name",
                &[("Content-Type", "application/json")],
                r#"{"query": "best-sellers", "count": 8}"#,
            ),
        ),
        (
            "invoke-form",
            request(
                "POST /platform/invoke/site/actions/login.ts",
                &[("Content-Type", "application/x-www-form-urlencoded")],
                "a=1&a=2&b=x",
            ),
        ),
        (
            "invoke-batch",
            request(
                "POST /platform/invoke/",
                &[("Content-Type", "application/json")],
                r#"{"shelf": {"__resolveType": "Shelf - Best sellers"}, "login": {"__resolveType": "site/actions/login.ts", "user": "a"}}"#,
            ),
        ),
        (
            "speculation-rules",
            request("GET /_cache/speculation-rules.json", &[], ""),
        ),
        (
            "speculation-rules-head",
            request("HEAD /_cache/speculation-rules.json", &[], ""),
        ),
        ("liveness", request("GET /platform/_liveness", &[], "")),
        (
            "not-admin",
            request("GET /products/shoe?x=1", &[("Cookie", "a=b")], ""),
        ),
    ];
    if !corpus.is_empty() {
        seeds.push((
            "reload-delta-corpus",
            request(
                "POST /.sitefile",
                &reload,
                &format!(r#"{{"blocks": {}}}"#, content_map(corpus)),
            ),
        ));
    }
    seeds.into_iter().map(|(n, b)| (n.to_string(), b)).collect()
}

/// An edge input: knobs, request head, blank line, origin status and headers.
fn exchange(knobs: &str, line: &str, headers: &[(&str, &str)], origin: &str) -> Vec<u8> {
    let mut text = String::new();
    if !knobs.is_empty() {
        text.push_str(&format!("@ {knobs}\n"));
    }
    text.push_str(&String::from_utf8(request(line, headers, origin)).expect("text"));
    text.into_bytes()
}

const HTML: &str = "200\nContent-Type: text/html; charset=utf-8\n";
const DESKTOP: (&str, &str) = (
    "User-Agent",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36",
);
const MOBILE: (&str, &str) = (
    "User-Agent",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148",
);

fn edge_seeds(urls: &[String]) -> Vec<(String, Vec<u8>)> {
    let mut seeds = vec![
        ("miss-hit-stale", exchange("rounds=3 advance=90", "GET / HTTP/1.1", &[DESKTOP], HTML)),
        (
            "mobile-cookies",
            exchange(
                "rounds=2 advance=5",
                "GET /camisetas?utm_source=mail&page=2",
                &[MOBILE, ("Cookie", "platform_segment=eyJhIjoxfQ; vtex_segment=abc; _ga=1"), ("CF-IPCountry", "BR")],
                "200\nContent-Type: text/html\nCache-Control: public, max-age=60\nSet-Cookie: sid=1; Path=/\nVary: Accept-Language\n",
            ),
        ),
        ("redirect-glob", exchange("", "GET /blog/hello%20world?utm_source=x&a=1", &[DESKTOP], "")),
        ("redirect-collapse-slashes", exchange("", "GET /pt//evil.example/x", &[], "")),
        ("redirect-encoded-slashes", exchange("", "GET /star/%2F%2Fevil.example", &[], "")),
        ("redirect-authority", exchange("", "GET /en-root/@evil.example", &[], "")),
        ("redirect-into-query", exchange("", "GET /busca/a&b=c+d?q=1", &[], "")),
        ("redirect-into-fragment", exchange("", "GET /ancora/x%23y", &[], "")),
        ("redirect-absolute", exchange("", "GET /deep/%5C%5Cevil.example?z=1", &[], "")),
        ("redirect-query-rule", exchange("", "GET /s?q=Airking", &[], "")),
        ("redirect-exact-keeps-query", exchange("", "HEAD /OLD/?keep=1", &[], "")),
        ("redirect-non-ascii", exchange("", "GET /caf%C3%A9/menu", &[], "")),
        (
            "collapse-origin-fails",
            exchange("collapse fail=1 rounds=2 advance=1", "GET /moveis/sofa", &[DESKTOP], HTML),
        ),
        (
            "stale-if-error",
            exchange(
                "rounds=3 advance=200 fail=6",
                "GET /p/shoe/p",
                &[DESKTOP],
                "200\nContent-Type: text/html\nCache-Control: public, s-maxage=60, stale-if-error=86400\n",
            ),
        ),
        (
            "origin-errors",
            exchange("rounds=2 advance=3600", "GET /search?q=x", &[], "503\nContent-Type: text/html\nRetry-After: 10\n"),
        ),
        (
            "degraded-page",
            exchange("rounds=2", "GET /", &[MOBILE], "200\nContent-Type: text/html\nX-Platform-Degraded: 1\n"),
        ),
        (
            "hints",
            exchange(
                r#"nocache profile=static nonce segment={"device":"mobile","loggedIn":false,"flags":["a"]}"#,
                "GET /product/p",
                &[DESKTOP],
                HTML,
            ),
        ),
        ("refused-store", exchange("refuse rounds=2", "GET /bags", &[DESKTOP], HTML)),
        (
            "post-bypass",
            exchange(
                "",
                "POST /cart",
                &[("Cookie", "cart=1"), ("Content-Type", "application/json")],
                "200\nContent-Type: application/json\nSet-Cookie: cart=2\n",
            ),
        ),
        (
            "asset",
            exchange(
                "rounds=2",
                "GET /_next/static/chunks/app-3f9a1c2b.js",
                &[],
                "200\nContent-Type: application/javascript\nETag: \"abc\"\n",
            ),
        ),
        ("font", exchange("", "GET /fonts/inter.woff2", &[], "200\nContent-Type: font/woff2\n")),
        (
            "override",
            exchange(
                "",
                "GET /?x-platform-matchers-override=Mobile%20visitors%3D1",
                &[("x-platform-matchers-override", "Black Friday=0")],
                HTML,
            ),
        ),
        (
            "private-answer",
            exchange(
                "rounds=2",
                "GET /account",
                &[("Cookie", "VtexIdclientAutCookie=x")],
                "200\nContent-Type: text/html\nCache-Control: private, no-store\nVary: *\n",
            ),
        ),
        ("origin-never-answers", exchange("rounds=2 advance=10", "GET /x", &[], "fail\n")),
        (
            "stored-at-from-origin",
            exchange(
                "rounds=2 advance=1",
                "GET /stamp",
                &[],
                "200\nContent-Type: text/html\nx-sitefile-stored-at: 0\n",
            ),
        ),
        (
            "geo",
            exchange(
                "",
                "GET /lojas",
                &[("CF-IPCountry", "BR"), ("CF-Region", "Sao Paulo"), ("CF-IPCity", "Sao Paulo"), ("Cookie", "__cf_geo_country=US")],
                HTML,
            ),
        ),
    ]
    .into_iter()
    .map(|(n, b)| (n.to_string(), b))
    .collect::<Vec<_>>();
    for (i, target) in urls.iter().enumerate() {
        seeds.push((
            format!("corpus-url-{}", i + 1),
            exchange(
                "rounds=2 advance=30",
                &format!("GET {target}"),
                &[DESKTOP],
                HTML,
            ),
        ));
    }
    seeds
}

/// The path and query of the corpus URLs the edge seeds request.
fn corpus_urls(corpus: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(corpus.join("urls.txt")) else {
        return Vec::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    CORPUS_URL_LINES
        .iter()
        .filter_map(|&n| {
            let url = lines.get(n - 1)?.split_whitespace().nth(1)?;
            let rest = url.split_once("://")?.1;
            Some(
                rest.find('/')
                    .map_or("/".to_string(), |i| rest[i..].to_string()),
            )
        })
        .collect()
}

fn resolve_seeds(corpus: &[(String, String)]) -> Vec<(String, Vec<u8>)> {
    let mut seeds = vec![(
        "storefront".to_string(),
        content_map(&storefront_blocks()).into_bytes(),
    )];
    let mut with_redirects = storefront_blocks();
    with_redirects.push(("redirects-site".into(), {
        let v: serde_json::Value = serde_json::from_str(sites::REDIRECTS).expect("JSON");
        v.to_string()
    }));
    seeds.push((
        "storefront-redirects".into(),
        content_map(&with_redirects).into_bytes(),
    ));
    if !corpus.is_empty() {
        seeds.push(("corpus-blocks".into(), content_map(corpus).into_bytes()));
    }
    seeds
}

/// Every seed; those from the corpus only when `corpus` (`../shared/corpus`) is there.
pub fn seeds(corpus: Option<&Path>) -> Vec<Seed> {
    let blocks = corpus.map(corpus_blocks).unwrap_or_default();
    let urls = corpus.map(corpus_urls).unwrap_or_default();
    let mut all = Vec::new();
    for (target, seeds) in [
        ("admin", admin_seeds(&blocks)),
        ("edge", edge_seeds(&urls)),
        ("resolve", resolve_seeds(&blocks)),
    ] {
        all.extend(seeds.into_iter().map(|(name, bytes)| Seed {
            target,
            name,
            bytes,
        }));
    }
    all
}
