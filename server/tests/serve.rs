//! `sitefile serve` end to end: the built binary serving `examples/storefront` on loopback,
//! called over HTTP as a browser, the editor or a script would.

use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::process::Command;

mod common;
use common::{STOREFRONT, Server, TOKEN, assert_error, client, redis_url, unique};

#[tokio::test]
async fn a_page_is_a_readable_html_view_that_explains_itself_and_reaches_every_page_and_variant() {
    let server = Server::start(&[]).await;
    let response = client().get(server.url("/")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["content-type"],
        "text/html; charset=utf-8"
    );
    let html = response.text().await.unwrap();
    assert!(html.contains("<code>pages-home</code>"), "{html}");
    assert!(html.contains("site/sections/Theme/Theme.tsx"));
    assert!(
        html.contains("&quot;primary&quot;: &quot;#1a1a2e&quot;"),
        "props, escaped"
    );
    assert!(
        !html.contains("degraded")
            && html.contains("Loaders are not run without an origin")
            && html.contains("<code>vtex/loaders/intelligentSearch/productList.ts</code>"),
        "without an origin the page says calmly which loaders did not run: {html}"
    );
    assert!(html.contains("href=\"?asJson\""));
    // Every page is reachable from the view, a pattern's groups filled in.
    for link in ["href=\"/slug\"", "href=\"/slug/p\"", "href=\"/s\""] {
        assert!(html.contains(link), "{link} in {html}");
    }
    // The variant each flag chose and why; a saved matcher can be forced.
    assert!(
        html.contains("variant 2 of 2 chosen, its rule <code>website/matchers/always.ts</code>")
            && html.contains("<code>Mobile visitors</code>, did not match")
            && html.contains("href=\"/?x-platform-matchers-override=Mobile+visitors%3D1\""),
        "{html}"
    );
    // Looking as a phone chooses the mobile variant.
    let mobile = server
        .get("/?deviceHint=mobile")
        .await
        .text()
        .await
        .unwrap();
    assert!(
        mobile.contains("resolved as a <strong>mobile</strong> visitor")
            && mobile.contains("variant 1 of 2 chosen, its rule <code>Mobile visitors</code>"),
        "{mobile}"
    );
    // Forcing the saved matcher does the same for a desktop browser.
    let forced = server
        .get("/?x-platform-matchers-override=Mobile+visitors%3D1")
        .await
        .text()
        .await
        .unwrap();
    assert!(
        forced.contains("resolved as a <strong>desktop</strong> visitor")
            && forced.contains("variant 1 of 2 chosen, its rule <code>Mobile visitors</code>"),
        "{forced}"
    );
}

#[tokio::test]
async fn page_json_answers_as_json_with_etags() {
    let server = Server::start(&[]).await;
    let client = client();
    let legacy: Value = server.get_json("/?asJson").await;
    assert_eq!(legacy["props"]["name"], "Home");
    let lean = server.get("/?renderJson").await;
    assert_eq!(lean.status(), StatusCode::OK);
    let etag = lean.headers()["etag"].to_str().unwrap().to_string();
    assert!(etag.starts_with("\"rj-"), "{etag}");
    let body: Value = lean.json().await.unwrap();
    assert_eq!(body["name"], "Home");
    let again = client
        .get(server.url("/?renderJson"))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
}

/// Content whose home page doubles at every named reference: 2^25 values, far past the page's
/// bound of 2,000,000.
fn doubling_content() -> Value {
    let mut blocks = serde_json::Map::new();
    let home = json!({"name": "Home", "path": "/", "sections": [{"__resolveType": "B25"}]});
    blocks.insert("pages-home".into(), home);
    blocks.insert(
        "B0".into(),
        json!({"__resolveType": "site/sections/Hero.tsx", "v": "leaf"}),
    );
    for level in 1..=25 {
        let below = json!({"__resolveType": format!("B{}", level - 1)});
        let block = json!({"__resolveType": "site/sections/Hero.tsx", "a": below, "b": below});
        blocks.insert(format!("B{level}"), block);
    }
    Value::Object(blocks)
}

#[tokio::test]
async fn a_page_cut_at_its_bound_says_so_in_page_json_and_is_never_stored() {
    let server = Server::start(&[("PLATFORM_RELEASE_RELOAD_TOKEN", TOKEN)]).await;
    let reload = client()
        .post(server.url("/.sitefile"))
        .header("authorization", TOKEN)
        .json(&doubling_content())
        .send()
        .await
        .unwrap();
    assert_eq!(reload.status(), StatusCode::OK);
    for path in ["/?asJson", "/?renderJson"] {
        let page = server.get(path).await;
        assert_eq!(page.status(), StatusCode::OK, "{path}");
        assert_eq!(header(&page, "cache-control"), "no-store", "{path}");
        assert_eq!(header(&page, "x-sitefile-page-cut"), "size", "{path}");
        let body: Value = page.json().await.unwrap();
        assert_eq!(body["cut"]["reason"], "size", "{path}");
        let message = body["cut"]["message"].as_str().unwrap();
        assert!(message.contains("2000000"), "{message}");
    }
}

#[tokio::test]
async fn the_admin_protocol_reads_and_reloads_content_and_the_page_changes() {
    let server = Server::start(&[("PLATFORM_RELEASE_RELOAD_TOKEN", TOKEN)]).await;
    let client = client();
    let read = server.get("/.sitefile").await;
    assert_eq!(read.status(), StatusCode::OK);
    let etag = read.headers()["etag"].to_str().unwrap().to_string();
    let content: Value = read.json().await.unwrap();
    assert!(content["pages-home"].is_object());
    let unchanged = client
        .get(server.url("/.sitefile"))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(unchanged.status(), StatusCode::NOT_MODIFIED);

    let mut home = content["pages-home"].clone();
    home["name"] = json!("Welcome");
    let body = json!({"blocks": {"pages-home": home}}).to_string();
    let refused = client
        .post(server.url("/.sitefile"))
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let reloaded = client
        .post(server.url("/.sitefile"))
        .header("authorization", TOKEN)
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(reloaded.status(), StatusCode::OK);
    let page: Value = server.get_json("/?renderJson").await;
    assert_eq!(
        page["name"], "Welcome",
        "the page serves the reloaded content"
    );
}

#[tokio::test]
async fn what_this_server_cannot_do_is_a_clear_json_answer() {
    let server = Server::start(&[]).await;
    let client = client();
    let meta = server.get("/platform/meta").await;
    assert_error(
        meta,
        StatusCode::SERVICE_UNAVAILABLE,
        "SCHEMA_NOT_INITIALIZED",
    )
    .await;

    let preview = server
        .get("/platform/previews/site%2Fsections%2FTheme%2FTheme.tsx")
        .await;
    assert_eq!(preview.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(preview.headers()["content-type"], "application/json");
    let preview: Value = preview.json().await.unwrap();
    assert_eq!(preview["error"]["code"], "RENDERER_UNAVAILABLE");

    let invoke = server
        .post("/platform/invoke/site/loaders/x.ts", "{}")
        .await;
    assert_eq!(invoke.status(), StatusCode::NOT_FOUND);

    let posted = client.post(server.url("/")).body("x").send().await.unwrap();
    assert_eq!(posted.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(posted.headers()["allow"], "GET, HEAD");
    let posted: Value = posted.json().await.unwrap();
    assert_eq!(posted["error"]["code"], "METHOD_NOT_ALLOWED");

    let liveness = server.get("/platform/_liveness").await;
    assert_eq!(liveness.status(), StatusCode::OK);
}

#[tokio::test]
async fn oversized_reload_bodies_are_413_and_the_server_keeps_serving() {
    let server = Server::start(&[("PLATFORM_RELEASE_RELOAD_TOKEN", TOKEN)]).await;
    let client = client();
    let huge = vec![b' '; 65 * 1024 * 1024];
    let response = client
        .post(server.url("/.sitefile"))
        .header("authorization", TOKEN)
        .body(huge)
        .send()
        .await;
    // The server may answer before it has read the whole body, and close the connection.
    if let Ok(response) = response {
        assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    }
    // That connection may be closed; another client is served as before.
    let page = server.get("/").await;
    assert_eq!(page.status(), StatusCode::OK);
}

#[tokio::test]
async fn sigterm_stops_the_server_promptly() {
    let mut server = Server::start(&[]).await;
    let exit = server.terminate().await;
    assert!(exit.success(), "{exit:?}");
}

/// A small origin on loopback: counts the requests to each path and query, answers batch
/// invoke (the product list loader with one product, any other key with an error), previews,
/// and pages (`/slow` waits for [`TestOrigin::release`], `/cookie` sets a private cookie,
/// `/echo-cookie` answers the `Cookie` header it got, `/echo-bytes` answers the bytes of the
/// `x-note` header it got in its body (hex) and in its own `x-note`, `/degraded` is marked degraded,
/// `/big/<n>` is `n` bytes).
struct TestOrigin {
    base: String,
    state: OriginState,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Clone)]
struct OriginState {
    hits: Arc<Mutex<HashMap<String, usize>>>,
    invokes: Arc<Mutex<Vec<Value>>>,
    /// The `X-Nonce` of each request that carried one, in order.
    nonces: Arc<Mutex<Vec<String>>>,
    gate: Arc<tokio::sync::Semaphore>,
}

impl TestOrigin {
    async fn start() -> TestOrigin {
        let state = OriginState {
            hits: Arc::default(),
            invokes: Arc::default(),
            nonces: Arc::default(),
            gate: Arc::new(tokio::sync::Semaphore::new(0)),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let router = axum::Router::new()
            .fallback(origin_answer)
            .with_state(state.clone());
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        TestOrigin { base, state, task }
    }

    /// How many requests for `target` (path and query) reached the origin.
    fn hits(&self, target: &str) -> usize {
        self.state
            .hits
            .lock()
            .unwrap()
            .get(target)
            .copied()
            .unwrap_or(0)
    }

    /// Lets every request waiting at `/slow` go on.
    fn release(&self) {
        self.state.gate.add_permits(1000);
    }
}

impl Drop for TestOrigin {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn origin_answer(
    axum::extract::State(state): axum::extract::State<OriginState>,
    request: axum::extract::Request,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let target = request
        .uri()
        .path_and_query()
        .map_or("/".to_string(), |p| p.to_string());
    let path = request.uri().path().to_string();
    let method = request.method().to_string();
    if let Some(nonce) = request.headers().get("x-nonce") {
        let nonce = nonce.to_str().unwrap().to_string();
        state.nonces.lock().unwrap().push(nonce);
    }
    let count = {
        let mut hits = state.hits.lock().unwrap();
        let n = hits.entry(target.clone()).or_default();
        *n += 1;
        *n
    };
    if path == "/platform/invoke" {
        let body = axum::body::to_bytes(request.into_body(), 1 << 20)
            .await
            .unwrap();
        let batch: Value = serde_json::from_slice(&body).unwrap();
        state.invokes.lock().unwrap().push(batch.clone());
        let mut answer = serde_json::Map::new();
        for (alias, call) in batch.as_object().unwrap() {
            let key = call["__resolveType"].as_str().unwrap_or("");
            let result = if key.ends_with("productList.ts") {
                json!({"products": [{"name": "Origin shoe"}]})
            } else {
                json!({"error": {"code": "INVOKE_FAILED", "message": format!("{key} failed")}})
            };
            answer.insert(alias.clone(), result);
        }
        return axum::Json(Value::Object(answer)).into_response();
    }
    if path.starts_with("/drafts/") {
        // A draft of the home page, as the editor's API answers it.
        let draft = json!({"pages-home": {"name": "Home (draft)", "path": "/", "sections": [
            {"__resolveType": "site/sections/Hero/Hero.tsx", "title": format!("draft {target}")}
        ]}});
        return axum::Json(draft).into_response();
    }
    if path.contains("/previews/") {
        return (
            [("content-type", "text/html")],
            format!("<p>rendered by the origin: {path}</p>"),
        )
            .into_response();
    }
    if path == "/slow" {
        state.gate.acquire().await.unwrap().forget();
    }
    if path == "/trickle" {
        // The first bytes at once, the last once the test releases the gate.
        let gate = state.gate.clone();
        let chunks = trickle(gate);
        return (
            [("content-type", "text/html")],
            axum::body::Body::from_stream(chunks),
        )
            .into_response();
    }
    if path == "/echo-cookie" {
        let cookie = request
            .headers()
            .get("cookie")
            .map_or("", |v| v.to_str().unwrap())
            .to_string();
        return ([("content-type", "text/plain")], cookie).into_response();
    }
    if path.ends_with(".json") {
        return axum::Json(json!({"products": [], "count": count})).into_response();
    }
    if path == "/echo-bytes" {
        let note = request.headers().get("x-note").unwrap().clone();
        let hex: String = note.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
        return ([("content-type", "text/plain")], [("x-note", note)], hex).into_response();
    }
    if path == "/degraded" {
        return (
            [
                ("content-type", "text/html"),
                ("x-platform-degraded", "true"),
            ],
            "half a page",
        )
            .into_response();
    }
    if path == "/cookie" {
        return (
            [("content-type", "text/html"), ("set-cookie", "session=abc")],
            "private",
        )
            .into_response();
    }
    if let Some(size) = path.strip_prefix("/big/") {
        return (
            [("content-type", "text/plain")],
            "x".repeat(size.parse().unwrap()),
        )
            .into_response();
    }
    (
        [("content-type", "text/html; charset=utf-8")],
        format!("<html>{method} {target} #{count}</html>"),
    )
        .into_response()
}

#[tokio::test]
async fn the_sites_not_found_page_answers_404_in_the_view_and_in_page_json() {
    let server = Server::start(&[]).await;
    // The storefront's catch-all page says `"notFound": true`.
    let view = server.get("/no/such/page").await;
    assert_eq!(view.status(), StatusCode::NOT_FOUND);
    let html = view.text().await.unwrap();
    assert!(html.contains("<code>pages-not-found</code>"), "{html}");
    assert!(html.contains("the site's not-found page"), "{html}");
    let render = server.get("/no/such/page?renderJson").await;
    assert_eq!(render.status(), StatusCode::NOT_FOUND);
    let body: Value = render.json().await.unwrap();
    assert_eq!(body["notFound"], true);
    assert_eq!(body["name"], "Not found");
    assert_eq!(
        server.get("/no/such/page?asJson").await.status(),
        StatusCode::NOT_FOUND
    );
    // Every other page is as before.
    assert_eq!(server.get("/?renderJson").await.status(), StatusCode::OK);
    assert_eq!(server.get("/").await.status(), StatusCode::OK);
}

#[tokio::test]
async fn page_json_renders_the_draft_on_a_preview_host_fetching_it_once() {
    let api = TestOrigin::start().await;
    let authority = api.base.trim_start_matches("http://").to_string();
    let server = Server::start(&[
        ("PLATFORM_ALLOWED_PREVIEW_HOSTS", "preview.shop.example"),
        ("PLATFORM_PREVIEW_API_DOMAINS", "127.0.0.1"),
    ])
    .await;
    let pointer = format!("{authority}/drafts/home@v1");
    let ask = |path: String, cookie: Option<String>| {
        let mut request = client()
            .get(server.url(&path))
            .header("host", "preview.shop.example");
        if let Some(cookie) = cookie {
            request = request.header("cookie", cookie);
        }
        async move { request.send().await.unwrap() }
    };

    let entered = ask(format!("/?renderJson&__draft={pointer}"), None).await;
    assert_eq!(entered.status(), StatusCode::OK);
    let headers = entered.headers().clone();
    assert_eq!(headers["cache-control"], "no-store, private");
    assert_eq!(headers["x-robots-tag"], "noindex, nofollow");
    assert!(headers["vary"].to_str().unwrap().contains("Cookie"));
    let cookie = headers["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.starts_with("__platform_draft=") && cookie.contains("Max-Age=1800"));
    let page: Value = entered.json().await.unwrap();
    assert_eq!(page["name"], "Home (draft)");
    let hero = page["sections"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(hero["props"]["title"], "draft /drafts/home?v=v1", "{page}");
    assert_eq!(api.hits("/drafts/home?v=v1"), 1);

    // The cookie carries the preview on; the draft is kept, not fetched again.
    let pair = cookie.split(';').next().unwrap().to_string();
    let next = ask("/?asJson".into(), Some(pair.clone())).await;
    assert_eq!(next.headers()["cache-control"], "no-store, private");
    assert!(next.headers().get("set-cookie").is_none());
    let legacy: Value = next.json().await.unwrap();
    assert_eq!(legacy["props"]["name"], "Home (draft)", "{legacy}");
    assert_eq!(
        api.hits("/drafts/home?v=v1"),
        1,
        "kept drafts are not fetched again"
    );

    // Leaving preview clears the cookie and answers the published page.
    let left = ask("/?renderJson&__draft=off".into(), Some(pair)).await;
    assert!(
        left.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    assert_eq!(left.headers()["cache-control"], "no-store, private");
    let published: Value = left.json().await.unwrap();
    assert_eq!(published["name"], "Home");

    // Another host never previews: nothing fetched, the published page as usual.
    let other = client()
        .get(server.url(&format!("/?renderJson&__draft={authority}/drafts/other@v1")))
        .send()
        .await
        .unwrap();
    assert!(other.headers().get("set-cookie").is_none());
    let published: Value = other.json().await.unwrap();
    assert_eq!(published["name"], "Home");
    assert_eq!(api.hits("/drafts/other?v=v1"), 0);
}

/// `first ` at once, `and last` once `gate` lets it.
fn trickle(
    gate: Arc<tokio::sync::Semaphore>,
) -> impl futures_util::Stream<Item = Result<axum::body::Bytes, std::io::Error>> {
    futures_util::stream::unfold(0, move |step| {
        let gate = gate.clone();
        async move {
            match step {
                0 => Some((Ok("first ".into()), 1)),
                1 => {
                    gate.acquire().await.unwrap().forget();
                    Some((Ok("and last".into()), 2))
                }
                _ => None,
            }
        }
    })
}

/// A test origin and a server in front of it, started with `args` and `env`.
async fn with_origin(args: &[&str], env: &[(&str, &str)]) -> (TestOrigin, Server) {
    let origin = TestOrigin::start().await;
    let mut all = vec!["--origin", origin.base.as_str()];
    all.extend_from_slice(args);
    let server = Server::start_with(&all, env).await;
    (origin, server)
}

/// An origin address where nothing listens.
async fn nothing_listening() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}

fn header<'a>(response: &'a reqwest::Response, name: &str) -> &'a str {
    response
        .headers()
        .get(name)
        .map_or("", |v| v.to_str().unwrap())
}

#[tokio::test]
async fn loaders_run_on_the_origin_in_one_batch_per_round_and_reach_the_page() {
    let (origin, server) = with_origin(&[], &[]).await;
    let page = server.get("/?asJson").await;
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.unwrap();
    assert!(page.contains("Origin shoe"), "{page}");
    let invokes = origin.state.invokes.lock().unwrap().clone();
    assert_eq!(invokes.len(), 1, "the home page has one round: {invokes:?}");
    let call = invokes[0].as_object().unwrap().values().next().unwrap();
    assert_eq!(
        call["__resolveType"],
        "vtex/loaders/intelligentSearch/productList.ts"
    );
    assert_eq!(call["props"]["query"], "best-sellers", "{call}");
}

#[tokio::test]
async fn an_unreachable_origin_fails_the_loaders_and_the_pages_not_the_server() {
    let down = nothing_listening().await;
    let server = Server::start_with(&["--origin", &down], &[]).await;
    let page = server.get("/?asJson").await;
    assert_eq!(
        page.status(),
        StatusCode::OK,
        "page JSON without its loaders"
    );
    let page: Value = page.json().await.unwrap();
    assert_eq!(page["props"]["name"], "Home");
    assert!(!page.to_string().contains("Origin shoe"));

    let html = server.get("/").await;
    assert_eq!(header(&html, "cache-control"), "no-store");
    assert_error(html, StatusCode::BAD_GATEWAY, "ORIGIN_UNAVAILABLE").await;

    let preview = server
        .get("/platform/previews/site%2Fsections%2FTheme%2FTheme.tsx")
        .await;
    assert_error(
        preview,
        StatusCode::SERVICE_UNAVAILABLE,
        "RENDERER_UNAVAILABLE",
    )
    .await;
    assert_eq!(
        server.get("/platform/_liveness").await.status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn previews_and_invokes_are_answered_by_the_origin() {
    let (origin, server) = with_origin(&[], &[]).await;
    let preview = server
        .get("/platform/previews/site%2Fsections%2FTheme%2FTheme.tsx?path=/")
        .await;
    assert_eq!(preview.status(), StatusCode::OK);
    let preview = preview.text().await.unwrap();
    assert!(preview.contains("rendered by the origin"), "{preview}");
    assert_eq!(
        origin.hits("/platform/previews/site%2Fsections%2FTheme%2FTheme.tsx?path=/"),
        1
    );

    let client = client();
    let batch = json!({
        "list": {"__resolveType": "vtex/loaders/intelligentSearch/productList.ts"},
        "other": {"__resolveType": "site/loaders/missing.ts"},
    });
    let invoked = client
        .post(server.url("/platform/invoke"))
        .header("content-type", "application/json")
        .body(batch.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(invoked.status(), StatusCode::OK);
    let invoked: Value = invoked.json().await.unwrap();
    assert_eq!(invoked["list"]["products"][0]["name"], "Origin shoe");
    assert_eq!(invoked["other"]["error"]["code"], "INVOKE_FAILED");
    assert_eq!(
        invoked["other"]["error"]["message"],
        "site/loaders/missing.ts failed"
    );
}

/// The headers a response sends that a stored copy keeps: all but the ones each answer sets
/// (`x-cache`, `date`), in order.
fn stored_headers(response: &reqwest::Response) -> Vec<(String, String)> {
    response
        .headers()
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "x-cache" | "date"))
        .map(|(name, value)| {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            (name.to_string(), value)
        })
        .collect()
}

#[tokio::test]
async fn a_page_is_a_miss_then_a_hit_with_the_profile_headers() {
    let (origin, server) = with_origin(&[], &[]).await;
    let first = server.get("/camisetas?utm_source=mail").await;
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(header(&first, "x-cache"), "MISS");
    assert_eq!(header(&first, "x-cache-profile"), "listing");
    assert!(header(&first, "cache-control").contains("stale-while-revalidate"));
    let first_headers = stored_headers(&first);
    let first = first.text().await.unwrap();
    let second = server.get("/camisetas").await;
    assert_eq!(
        header(&second, "x-cache"),
        "HIT",
        "tracking parameters are not in the key"
    );
    assert_eq!(
        stored_headers(&second),
        first_headers,
        "a hit sends the stored copy's headers once each, without the stored-at stamp"
    );
    assert!(second.headers().get("x-sitefile-stored-at").is_none());
    assert_eq!(second.headers().get_all("x-cache").iter().count(), 1);
    assert_eq!(second.text().await.unwrap(), first);
    assert_eq!(origin.hits("/camisetas?utm_source=mail"), 1);
    assert_eq!(origin.hits("/camisetas"), 0);
    let head = client()
        .head(server.url("/camisetas"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        header(&head, "x-cache-reason"),
        "method:HEAD",
        "the core's rule"
    );
    assert!(head.text().await.unwrap().is_empty());
}

#[tokio::test]
async fn the_edge_adds_and_strips_what_the_core_says() {
    let (origin, server) = with_origin(&[], &[]).await;
    let page = server.get("/camisetas").await;
    assert!(
        header(&page, "content-security-policy").starts_with("frame-ancestors 'self'"),
        "security headers on HTML"
    );
    let echoed = server
        .get_with("/echo-cookie", ("cf-ipcountry", "BR"))
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(
        echoed, "__cf_geo_country=BR",
        "the visitor's location goes to the origin as a cookie"
    );
    for _ in 0..2 {
        let degraded = server.get("/degraded").await;
        assert_eq!(header(&degraded, "x-cache"), "BYPASS");
        assert_eq!(header(&degraded, "x-cache-reason"), "degraded");
        assert!(degraded.headers().get("x-platform-degraded").is_none());
    }
    assert_eq!(
        origin.hits("/degraded"),
        2,
        "a degraded page is never stored"
    );
}

#[tokio::test]
async fn security_headers_go_on_the_origins_html_pages_never_on_its_json_answers() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("options.json");
    std::fs::write(&file, r#"{"csp": ["default-src 'self'"]}"#).unwrap();
    let (origin, server) = with_origin(&["--options", file.to_str().unwrap()], &[]).await;
    const SECURITY: [&str; 6] = [
        "content-security-policy",
        "content-security-policy-report-only",
        "strict-transport-security",
        "x-content-type-options",
        "referrer-policy",
        "permissions-policy",
    ];
    // Twice each: the origin's answer (a miss), then the stored copy (a hit).
    for expected in ["MISS", "HIT"] {
        let page = server.get("/camisetas").await;
        assert_eq!(header(&page, "x-cache"), expected);
        assert!(header(&page, "content-type").starts_with("text/html"));
        for name in SECURITY {
            assert!(page.headers().get(name).is_some(), "{expected}: {name}");
        }
        assert!(header(&page, "content-security-policy").starts_with("frame-ancestors 'self'"));
        let api = server.get("/products.json").await;
        assert_eq!(header(&api, "x-cache"), expected);
        assert_eq!(header(&api, "content-type"), "application/json");
        for name in SECURITY {
            assert!(
                api.headers().get(name).is_none(),
                "{expected}: {name} on a JSON answer"
            );
        }
        let body: Value = api.json().await.unwrap();
        assert_eq!(body["count"], 1, "the hit is the stored copy");
    }
    assert_eq!(origin.hits("/products.json"), 1);
    // Not stored (another method): the same rule.
    let posted = client()
        .post(server.url("/products.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(header(&posted, "x-cache"), "BYPASS");
    for name in SECURITY {
        assert!(posted.headers().get(name).is_none(), "POST: {name}");
    }
}

#[tokio::test]
async fn header_bytes_beyond_ascii_reach_the_origin_and_the_visitor_unchanged() {
    let (_origin, server) = with_origin(&[], &[]).await;
    // Latin-1 and UTF-8 bytes (obs-text) in one value, as HTTP allows.
    let sent: &[u8] = b"caf\xe9 / caf\xc3\xa9";
    for _ in 0..2 {
        // Sent through the edge twice: a miss, then the stored copy.
        let answer = client()
            .get(server.url("/echo-bytes"))
            .header(
                "x-note",
                reqwest::header::HeaderValue::from_bytes(sent).unwrap(),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::OK);
        assert_eq!(
            answer.headers()["x-note"].as_bytes(),
            sent,
            "the origin's header"
        );
        let hex: String = sent.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(answer.text().await.unwrap(), hex, "what the origin got");
    }
}

#[tokio::test]
async fn worker_options_from_a_file_reach_the_edge_a_fresh_csp_nonce_told_to_the_origin() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("options.json");
    std::fs::write(
        &file,
        r#"{"csp": ["default-src 'self'"], "cspMode": "enforce", "bypassPaths": ["/uncached"]}"#,
    )
    .unwrap();
    let (origin, server) = with_origin(&["--options", file.to_str().unwrap()], &[]).await;
    let mut nonces = Vec::new();
    for _ in 0..2 {
        // A bypass path: never stored, so each answer is uncached HTML with its own nonce.
        let answer = server.get("/uncached").await;
        assert!(header(&answer, "content-type").starts_with("text/html"));
        assert_eq!(header(&answer, "x-cache"), "BYPASS");
        let csp = header(&answer, "content-security-policy").to_string();
        let nonce = csp
            .split("'nonce-")
            .nth(1)
            .and_then(|rest| rest.split('\'').next())
            .unwrap_or_else(|| panic!("no nonce in {csp}"))
            .to_string();
        assert!(csp.contains("default-src 'self'"), "{csp}");
        nonces.push(nonce);
    }
    assert_ne!(nonces[0], nonces[1], "a fresh nonce per response");
    assert_eq!(origin.hits("/uncached"), 2);
    let told = origin.state.nonces.lock().unwrap().clone();
    assert_eq!(told, nonces, "the origin was told each nonce (X-Nonce)");

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"cspMode": "sometimes"}"#).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_sitefile"))
        .args(["serve", STOREFRONT, "--listen", "127.0.0.1:0", "--options"])
        .arg(&bad)
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("bad.json"), "{stderr}");
}

#[tokio::test]
async fn bypassed_requests_always_go_to_the_origin() {
    let (origin, server) =
        with_origin(&[], &[("PLATFORM_ALLOWED_PREVIEW_HOSTS", "preview.test")]).await;
    for _ in 0..2 {
        let path = server.get("/_build/manifest").await;
        assert_eq!(header(&path, "x-cache"), "BYPASS");
        assert_eq!(header(&path, "x-cache-reason"), "bypass-path");
        let cart = server.get("/checkout").await;
        assert_eq!(header(&cart, "x-cache-reason"), "non-cacheable:cart");
        let cookie = server.get("/cookie").await;
        assert_eq!(header(&cookie, "x-cache-reason"), "private-set-cookie");
        assert_eq!(header(&cookie, "set-cookie"), "session=abc");
        let forced = server
            .get_with("/forced", ("x-platform-matchers-override", "A=1"))
            .await;
        assert_eq!(header(&forced, "x-cache-reason"), "matcher-override");
        let draft = server
            .get_with(
                "/drafted?__draft=api.platformcms.com/d@v1",
                ("host", "preview.test"),
            )
            .await;
        assert_eq!(header(&draft, "x-cache-reason"), "draft");
        assert_eq!(header(&draft, "cache-control"), "no-store, private");
        let posted = server.post("/form", "a=1").await;
        assert_eq!(header(&posted, "x-cache-reason"), "method:POST");
        assert_eq!(
            posted.text().await.unwrap(),
            format!("<html>POST /form #{}</html>", origin.hits("/form"))
        );
    }
    for target in [
        "/_build/manifest",
        "/checkout",
        "/cookie",
        "/forced",
        "/drafted?__draft=api.platformcms.com/d@v1",
        "/form",
    ] {
        assert_eq!(origin.hits(target), 2, "{target}");
    }
}

#[tokio::test]
async fn concurrent_misses_for_one_key_are_one_origin_request() {
    let (origin, server) = with_origin(&[], &[]).await;
    let server = Arc::new(server);
    let requests: Vec<_> = (0..8)
        .map(|_| {
            let server = server.clone();
            tokio::spawn(async move {
                let response = server.get("/slow").await;
                let state = header(&response, "x-cache").to_string();
                (response.status(), state, response.text().await.unwrap())
            })
        })
        .collect();
    while origin.hits("/slow") == 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Give the other requests time to reach the server and wait behind the first.
    tokio::time::sleep(Duration::from_millis(500)).await;
    origin.release();
    let mut states = Vec::new();
    for request in requests {
        let (status, state, body) = request.await.unwrap();
        assert_eq!(status, StatusCode::OK);
        states.push(state);
        assert_eq!(
            body, "<html>GET /slow #1</html>",
            "answered by the one fetch"
        );
    }
    states.sort();
    let mut want = vec!["HIT"; 7];
    want.push("MISS");
    assert_eq!(
        states, want,
        "the leader's MISS, the followers' HITs of its copy"
    );
    assert_eq!(origin.hits("/slow"), 1);
}

/// `POST /_cache/purge` of `path` with the purge token.
async fn purge(server: &Server, path: &str) -> reqwest::Response {
    client()
        .post(server.url("/_cache/purge"))
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(json!({"paths": [path]}).to_string())
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_purge_drops_the_stored_copies_of_a_path() {
    let (origin, server) = with_origin(&[], &[("PURGE_TOKEN", TOKEN)]).await;
    assert_eq!(header(&server.get("/camisetas").await, "x-cache"), "MISS");
    assert_eq!(header(&server.get("/camisetas").await, "x-cache"), "HIT");
    let purged = purge(&server, "/camisetas").await;
    assert_eq!(purged.status(), StatusCode::OK);
    let purged: Value = purged.json().await.unwrap();
    assert_eq!(purged["total"], 1, "{purged}");
    assert_eq!(header(&server.get("/camisetas").await, "x-cache"), "MISS");
    assert_eq!(origin.hits("/camisetas"), 2);
}

#[tokio::test]
async fn content_redirects_are_answered_at_the_edge() {
    let (origin, server) = with_origin(&[], &[("PLATFORM_RELEASE_RELOAD_TOKEN", TOKEN)]).await;
    let redirect = json!({"blocks": {"redirect-old": {
        "__resolveType": "website/loaders/redirect.ts",
        "redirect": {"from": "/old", "to": "/new", "type": "permanent"},
    }}});
    let reloaded = client()
        .post(server.url("/.sitefile"))
        .header("authorization", TOKEN)
        .body(redirect.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(reloaded.status(), StatusCode::OK);
    let moved = server.get("/old?a=1").await;
    assert_eq!(moved.status(), StatusCode::MOVED_PERMANENTLY);
    assert_eq!(header(&moved, "location"), "/new?a=1");
    assert!(
        moved.headers().get("strict-transport-security").is_none()
            && moved.headers().get("content-security-policy").is_none(),
        "a redirect has no HTML body: no security headers (decision EDGE-27)"
    );
    assert_eq!(origin.hits("/old?a=1"), 0);
}

#[tokio::test]
async fn the_cache_keeps_no_more_bytes_than_its_cap() {
    let (origin, server) = with_origin(&["--cache-max-bytes", "1000"], &[]).await;
    assert_eq!(header(&server.get("/big/600").await, "x-cache"), "MISS");
    assert_eq!(header(&server.get("/big/600").await, "x-cache"), "HIT");
    assert_eq!(header(&server.get("/big/500").await, "x-cache"), "MISS");
    assert_eq!(
        header(&server.get("/big/600").await, "x-cache"),
        "MISS",
        "evicted to make room"
    );
    assert_eq!(origin.hits("/big/600"), 2);
    assert_eq!(header(&server.get("/big/2000").await, "x-cache"), "MISS");
    assert_eq!(
        header(&server.get("/big/2000").await, "x-cache"),
        "MISS",
        "larger than the whole cache: never kept"
    );
}

#[tokio::test]
async fn an_answer_too_large_to_keep_streams_whole_and_is_not_stored() {
    let (origin, server) = with_origin(&[], &[]).await;
    let size = 9 * 1024 * 1024;
    let path = format!("/big/{size}");
    for _ in 0..2 {
        let large = server.get(&path).await;
        assert_eq!(large.status(), StatusCode::OK);
        assert_eq!(header(&large, "x-cache"), "MISS");
        assert_eq!(large.bytes().await.unwrap().len(), size, "every byte");
    }
    assert_eq!(origin.hits(&path), 2, "over the per-copy cap: never kept");
    let fits = server.get("/big/10").await;
    assert_eq!(fits.status(), StatusCode::OK, "the server goes on serving");
}

#[tokio::test]
async fn a_miss_streams_the_origins_answer_as_it_arrives() {
    let (origin, server) = with_origin(&[], &[]).await;
    let mut answer = server.get("/trickle").await;
    assert_eq!(answer.status(), StatusCode::OK);
    let first = tokio::time::timeout(Duration::from_secs(20), answer.chunk())
        .await
        .expect("the first bytes arrive while the origin still writes")
        .unwrap()
        .unwrap();
    assert!(first.starts_with(b"first"), "{first:?}");
    origin.release();
    let mut rest = Vec::new();
    while let Some(chunk) = answer.chunk().await.unwrap() {
        rest.extend_from_slice(&chunk);
    }
    assert!(
        rest.ends_with(b"last"),
        "the rest follows once the origin goes on"
    );
    assert_eq!(
        header(&server.get("/trickle").await, "x-cache"),
        "HIT",
        "and it was kept"
    );
}

/// `GET path` as the visitors of one site see it: the same `Host` whichever server answers.
async fn get_shop(server: &Server, path: &str) -> reqwest::Response {
    server.get_with(path, ("host", "shop.test")).await
}

#[tokio::test]
async fn two_servers_share_one_redis_cache_and_a_purge_on_one_reaches_both() {
    let Some(redis) = redis_url() else { return };
    let version = unique("cache");
    let env = [
        ("PLATFORM_CACHE_REDIS_URL", redis.as_str()),
        ("BUILD_HASH", version.as_str()),
        ("PURGE_TOKEN", TOKEN),
    ];
    let (origin, a) = with_origin(&[], &env).await;
    let b = Server::start_with(&["--origin", origin.base.as_str()], &env).await;
    let first = get_shop(&a, "/camisetas").await;
    assert_eq!(header(&first, "x-cache"), "MISS");
    let first = first.text().await.unwrap();
    let shared = get_shop(&b, "/camisetas").await;
    assert_eq!(
        header(&shared, "x-cache"),
        "HIT",
        "stored by the other server"
    );
    assert_eq!(shared.text().await.unwrap(), first);
    assert_eq!(origin.hits("/camisetas"), 1);

    // B never stored the copy, so only the shared index can tell it what to delete.
    assert_eq!(purge(&b, "/camisetas").await.status(), StatusCode::OK);
    assert_eq!(header(&get_shop(&a, "/camisetas").await, "x-cache"), "MISS");
    assert_eq!(header(&get_shop(&b, "/camisetas").await, "x-cache"), "HIT");
    assert_eq!(origin.hits("/camisetas"), 2);
}

#[tokio::test]
async fn with_redis_down_pages_are_served_from_the_origin() {
    let down = nothing_listening().await.replace("http://", "redis://");
    let (origin, server) = with_origin(&[], &[("PLATFORM_CACHE_REDIS_URL", down.as_str())]).await;
    for _ in 0..2 {
        let page = get_shop(&server, "/camisetas").await;
        assert_eq!(page.status(), StatusCode::OK);
        assert_eq!(header(&page, "x-cache"), "MISS", "nothing could be stored");
    }
    assert_eq!(origin.hits("/camisetas"), 2);
}

/// The variables of a server of deployment `id` with Fast Deploy on `redis`.
fn fast_deploy_env<'a>(redis: &'a str, id: &'a str) -> [(&'a str, &'a str); 4] {
    [
        ("PLATFORM_FAST_DEPLOY", "1"),
        ("PLATFORM_KV", redis),
        ("PLATFORM_DEPLOYMENT_ID", id),
        ("PLATFORM_RELEASE_RELOAD_TOKEN", TOKEN),
    ]
}

/// Waits (at most 10 s) until `server`'s home page is named `name`.
async fn wait_for_home_named(server: &Server, name: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let page: Value = server.get_json("/?renderJson").await;
        if page["name"] == name {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the home page is still {}",
            page["name"]
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Reloads `server`'s home page under the name `name`; the reload response.
async fn rename_home(server: &Server, name: &str) -> Value {
    let content: Value = server.get_json("/.sitefile").await;
    let mut home = content["pages-home"].clone();
    home["name"] = json!(name);
    let reloaded = client()
        .post(server.url("/.sitefile"))
        .header("authorization", TOKEN)
        .body(json!({"blocks": {"pages-home": home}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(reloaded.status(), StatusCode::OK);
    reloaded.json().await.unwrap()
}

#[tokio::test]
async fn fast_deploy_a_reload_on_one_server_reaches_the_others_of_its_deployment() {
    let Some(redis) = redis_url() else { return };
    let id = unique("deploy");
    let env = fast_deploy_env(&redis, &id);
    let a = Server::start(&env).await;
    let b = Server::start(&env).await;
    let other = unique("other");
    let elsewhere = Server::start(&fast_deploy_env(&redis, &other)).await;
    let reloaded = rename_home(&a, "Fast").await;
    assert_eq!(reloaded["kvWritten"], true, "{reloaded}");
    wait_for_home_named(&b, "Fast").await;
    // A server started now reads the deployment's snapshot, not its directory.
    let (late, line) = Server::start_in(STOREFRONT, &[], &env).await;
    assert!(
        line.contains(&format!("deployment {id} from PLATFORM_KV")),
        "{line}"
    );
    let page: Value = late.get_json("/?renderJson").await;
    assert_eq!(page["name"], "Fast");
    let page: Value = elsewhere.get_json("/?renderJson").await;
    assert_eq!(
        page["name"], "Home",
        "another deployment's content is its own"
    );
    // And the way back, from the other server.
    assert_eq!(rename_home(&b, "Home again").await["kvWritten"], true);
    wait_for_home_named(&a, "Home again").await;
}

/// Runs `sitefile kv` with `args` and `env` (and nothing else); its exit code and output.
async fn kv(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_sitefile"))
        .arg("kv")
        .args(args)
        .env_clear()
        .envs(env.iter().copied())
        .output()
        .await
        .expect("run sitefile kv");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn kv_sync_pushes_a_site_that_a_server_then_starts_from_and_migrate_carries_it_on() {
    let Some(redis) = redis_url() else { return };
    let id = unique("synced");
    let store = [("PLATFORM_KV", redis.as_str())];
    let (code, out, err) = kv(
        &["sync", STOREFRONT, "--deployment-id", &id, "--set-live"],
        &store,
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("deployment {id}")) && out.contains("live"),
        "{out}"
    );

    // The directory is not read: the snapshot is in the store.
    let missing = format!("{STOREFRONT}/no-such-dir");
    let (server, line) = Server::start_in(&missing, &[], &fast_deploy_env(&redis, &id)).await;
    assert!(line.contains("from PLATFORM_KV"), "{line}");
    let page: Value = server.get_json("/?renderJson").await;
    assert_eq!(page["name"], "Home");

    // A new code deployment takes the live deployment's content over.
    rename_home(&server, "Edited").await;
    let next = unique("next");
    let (code, _, err) = kv(&["migrate", "--to", &next], &store).await;
    assert_eq!(code, 0, "{err}");
    let (server, _) = Server::start_in(&missing, &[], &fast_deploy_env(&redis, &next)).await;
    let page: Value = server.get_json("/?renderJson").await;
    assert_eq!(page["name"], "Edited");

    let (code, _, err) = kv(
        &["migrate", "--from", "never-deployed", "--to", &next],
        &store,
    )
    .await;
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("never-deployed has no snapshot"), "{err}");
    let (code, _, err) = kv(&["sync", STOREFRONT], &store).await;
    assert_eq!(code, 2, "no deployment id: {err}");
}

/// A Workers KV namespace behind a stand-in for Cloudflare's API (the value routes `sitefile kv`
/// calls, answered as the API answers them): its values, by key.
async fn workers_kv_api(
    account: &'static str,
    namespace: &'static str,
    token: &'static str,
) -> (String, Arc<Mutex<HashMap<String, Vec<u8>>>>) {
    use axum::extract::{Path, State};
    use axum::http::{HeaderMap, StatusCode as Status};
    use axum::response::IntoResponse;
    type Values = Arc<Mutex<HashMap<String, Vec<u8>>>>;
    let values: Values = Arc::default();
    let refused = |status: Status, code: u32, message: &str| {
        let body = json!({"success": false, "errors": [{"code": code, "message": message}]});
        (status, axum::Json(body)).into_response()
    };
    let handler = move |method: axum::http::Method,
                        State(values): State<Values>,
                        Path((acc, ns, key)): Path<(String, String, String)>,
                        headers: HeaderMap,
                        body: axum::body::Bytes| async move {
        if headers.get("authorization").and_then(|v| v.to_str().ok())
            != Some(&format!("Bearer {token}"))
        {
            return refused(Status::UNAUTHORIZED, 10000, "Authentication error");
        }
        if acc != account || ns != namespace {
            return refused(Status::NOT_FOUND, 10013, "namespace not found");
        }
        let mut values = values.lock().unwrap();
        let done = axum::Json(json!({"success": true, "errors": [], "result": null}));
        match method {
            axum::http::Method::PUT => {
                values.insert(key, body.to_vec());
                done.into_response()
            }
            axum::http::Method::DELETE => {
                values.remove(&key);
                done.into_response()
            }
            _ => match values.get(&key) {
                Some(value) => value.clone().into_response(),
                None => refused(Status::NOT_FOUND, 10009, "get: 'key not found'"),
            },
        }
    };
    let app = axum::Router::new()
        .route(
            "/client/v4/accounts/{acc}/storage/kv/namespaces/{ns}/values/{key}",
            axum::routing::get(handler).put(handler).delete(handler),
        )
        .with_state(values.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/client/v4", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, values)
}

#[tokio::test]
async fn kv_sync_and_migrate_write_a_workers_kv_namespace_through_cloudflares_api() {
    let (api, values) = workers_kv_api("acct1", "ns0123", "cf-token").await;
    let env = [
        ("CLOUDFLARE_API_BASE_URL", api.as_str()),
        ("EDGE_KV_NAMESPACE_ID", "ns0123"),
        ("EDGE_ACCOUNT_ID", "acct1"),
        ("CLOUDFLARE_API_TOKEN", "cf-token"),
    ];
    let (code, out, err) = kv(
        &["sync", STOREFRONT, "--deployment-id", "d1", "--set-live"],
        &env,
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("deployment d1") && out.contains("live"),
        "{out}"
    );
    let snapshot = values.lock().unwrap()["sitefile:d1"].clone();
    let (bundle, _) = sitefile_site_dir::load_directory(
        &sitefile_site_dir::blocks_dir(std::path::Path::new(STOREFRONT)).unwrap(),
    )
    .unwrap();
    assert_eq!(
        snapshot,
        bundle.canonical_bytes().to_vec(),
        "the snapshot a Worker reads"
    );
    {
        let values = values.lock().unwrap();
        assert_eq!(values["index:revision:d1"], bundle.revision().as_bytes());
        assert_eq!(values["index:live"], b"d1");
        let list: Value = serde_json::from_slice(&values["index:deployments"]).unwrap();
        assert_eq!(list[0]["id"], "d1");
    }
    let (code, _, err) = kv(&["migrate", "--to", "d2"], &env).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        values.lock().unwrap()["sitefile:d2"],
        snapshot,
        "the live deployment's, copied"
    );

    // A refused token is the API's own message, exit 1; missing credentials say which, exit 2.
    let mut wrong = env;
    wrong[3] = ("CLOUDFLARE_API_TOKEN", "not-it");
    let (code, _, err) = kv(&["sync", STOREFRONT, "--deployment-id", "d3"], &wrong).await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("401") && err.contains("Authentication error"),
        "{err}"
    );
    let (code, _, err) = kv(&["sync", STOREFRONT, "--deployment-id", "d3"], &env[..3]).await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("EDGE_API_TOKEN (or CLOUDFLARE_API_TOKEN"),
        "{err}"
    );
    assert!(!values.lock().unwrap().contains_key("sitefile:d3"));

    // A URL is a Redis store whatever its scheme's case; its password is never printed, nor is
    // the API token sent anywhere but to an https API (or loopback).
    for namespace in ["REDIS://user:hunter2@127.0.0.1:1", "not a url:hunter2"] {
        let env = [("EDGE_KV_NAMESPACE_ID", namespace)];
        let (code, _, err) = kv(&["sync", STOREFRONT, "--deployment-id", "d3"], &env).await;
        assert_ne!(code, 0, "{err}");
        assert!(!err.contains("hunter2"), "{namespace}: {err}");
    }
    let mut plain = env;
    plain[0] = ("CLOUDFLARE_API_BASE_URL", "http://api.example/client/v4");
    let (code, _, err) = kv(&["sync", STOREFRONT, "--deployment-id", "d3"], &plain).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("must be https"), "{err}");
}

#[tokio::test]
async fn fast_deploy_with_its_store_down_serves_the_directory_and_refuses_reloads() {
    let down = nothing_listening().await.replace("http://", "redis://");
    // Waited for 500 ms (`server/tests/fast_deploy.rs` has the wait), then the directory stands in.
    let mut env = fast_deploy_env(&down, "d1").to_vec();
    env.push(("PLATFORM_FAST_DEPLOY_START_TIMEOUT_MS", "500"));
    let (server, line) = Server::start_in(STOREFRONT, &[], &env).await;
    assert!(line.contains("storefront"), "the directory: {line}");
    let page = server.get("/?renderJson").await;
    assert_eq!(header(&page, "x-sitefile-content"), "directory-fallback");
    let page: Value = page.json().await.unwrap();
    assert_eq!(page["name"], "Home");
    let refused = client()
        .post(server.url("/.sitefile"))
        .header("authorization", TOKEN)
        .body(json!({"blocks": {"pages-home": null}}).to_string())
        .send()
        .await
        .unwrap();
    assert_error(refused, StatusCode::SERVICE_UNAVAILABLE, "KV_WRITE_FAILED").await;
    let page: Value = server.get_json("/?renderJson").await;
    assert_eq!(page["name"], "Home", "the content did not change");
}
