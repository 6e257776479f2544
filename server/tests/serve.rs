//! `sitefile serve` end to end: the built binary serving `examples/storefront` on loopback,
//! called over HTTP as a browser, the editor or a script would.

use reqwest::StatusCode;
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const STOREFRONT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/storefront");
const TOKEN: &str = "s3cret";

/// A running `sitefile serve` and its base URL; killed when dropped.
struct Server {
    child: Child,
    base: String,
}

impl Server {
    /// Starts the binary on a free loopback port with a clean environment plus `env`, and
    /// reads the address it prints.
    async fn start(env: &[(&str, &str)]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sitefile"))
            .args(["serve", STOREFRONT, "--listen", "127.0.0.1:0"])
            .env_clear()
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start sitefile serve");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut line = String::new();
        tokio::time::timeout(
            Duration::from_secs(20),
            BufReader::new(stdout).read_line(&mut line),
        )
        .await
        .expect("the server prints its address")
        .expect("read stdout");
        let base = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .trim_end_matches('/')
            .to_string();
        Server { child, base }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `GET path` on a fresh connection.
    async fn get(&self, path: &str) -> reqwest::Response {
        client().get(self.url(path)).send().await.unwrap()
    }

    /// `GET path`, its body read as JSON.
    async fn get_json(&self, path: &str) -> Value {
        self.get(path).await.json().await.unwrap()
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

#[tokio::test]
async fn a_page_is_a_readable_html_view_of_its_sections_and_says_what_failed() {
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
        html.contains("degraded") && html.contains("no origin is configured to run the loader"),
        "without an origin the page says its loaders did not run"
    );
    assert!(html.contains("href=\"?asJson\""));
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
    assert_eq!(meta.status(), StatusCode::SERVICE_UNAVAILABLE);
    let meta: Value = meta.json().await.unwrap();
    assert_eq!(meta["error"]["code"], "schema_not_initialized");

    let preview = server
        .get("/platform/previews/site%2Fsections%2FTheme%2FTheme.tsx")
        .await;
    assert_eq!(preview.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(preview.headers()["content-type"], "application/json");
    let preview: Value = preview.json().await.unwrap();
    assert_eq!(preview["error"]["code"], "renderer_unavailable");

    let invoke = client
        .post(server.url("/platform/invoke/site/loaders/x.ts"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(invoke.status(), StatusCode::NOT_FOUND);

    let posted = client.post(server.url("/")).body("x").send().await.unwrap();
    assert_eq!(posted.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(posted.headers()["allow"], "GET, HEAD");
    let posted: Value = posted.json().await.unwrap();
    assert_eq!(posted["error"]["code"], "method_not_allowed");

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
    let pid = server.child.id().expect("running").to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = tokio::time::timeout(Duration::from_secs(15), server.child.wait())
        .await
        .expect("the server stops within the shutdown deadline")
        .unwrap();
    assert!(exit.success(), "{exit:?}");
}
