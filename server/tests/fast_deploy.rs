//! Fast Deploy when its store does not answer at start: `sitefile serve` started against a
//! Redis that accepts connections and never replies (frozen: `CLIENT PAUSE`, `DEBUG SLEEP`, a
//! hung proxy), while the deployment's snapshot in it is newer than the site directory.

use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

mod common;
use common::{STOREFRONT, Server, TOKEN, assert_error, client, redis_url, unique};

/// The variables of a server of deployment `id` with Fast Deploy on `redis`, waiting at most
/// `wait_ms` for the store at start.
fn fast_deploy_env(redis: &str, id: &str, wait_ms: &str) -> Vec<(String, String)> {
    [
        ("PLATFORM_FAST_DEPLOY", "1"),
        ("PLATFORM_KV", redis),
        ("PLATFORM_DEPLOYMENT_ID", id),
        ("PLATFORM_RELEASE_RELOAD_TOKEN", TOKEN),
        ("PLATFORM_FAST_DEPLOY_START_TIMEOUT_MS", wait_ms),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
    .collect()
}

/// Starts a server of `env` on the storefront directory; the line it printed too.
async fn start(env: Vec<(String, String)>) -> (Server, String) {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Server::start_in(STOREFRONT, &[], &env).await
}

/// A Redis that does not answer: connections are accepted and held, nothing read or written,
/// until [`FrozenStore::thaw`]; from then on every connection, the held ones too, is piped to
/// the real Redis.
struct FrozenStore {
    url: String,
    thawed: watch::Sender<bool>,
}

impl FrozenStore {
    async fn start(redis: &str) -> FrozenStore {
        let upstream = redis
            .trim_start_matches("redis://")
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("redis://{}/", listener.local_addr().unwrap());
        let (thawed, _) = watch::channel(false);
        let thaw = thawed.subscribe();
        tokio::spawn(async move {
            loop {
                let Ok((mut inbound, _)) = listener.accept().await else {
                    return;
                };
                let mut thaw = thaw.clone();
                let upstream = upstream.clone();
                tokio::spawn(async move {
                    if thaw.wait_for(|thawed| *thawed).await.is_err() {
                        return;
                    }
                    let mut outbound = TcpStream::connect(&upstream).await.unwrap();
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                });
            }
        });
        FrozenStore { url, thawed }
    }

    fn thaw(&self) {
        self.thawed.send_replace(true);
    }
}

/// The header saying what content answered, if any.
fn content_header(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get("x-sitefile-content")
        .map(|v| v.to_str().unwrap().to_string())
}

/// `server`'s home page: its name and the content header.
async fn home(server: &Server) -> (Value, Option<String>) {
    let response = server.get("/?renderJson").await;
    assert_eq!(response.status(), StatusCode::OK);
    let marked = content_header(&response);
    let page: Value = response.json().await.unwrap();
    (page["name"].clone(), marked)
}

/// Reloads `server`'s home page under the name `name`.
async fn rename_home(server: &Server, name: &str) -> reqwest::Response {
    let content: Value = server.get_json("/.sitefile").await;
    let mut home = content["pages-home"].clone();
    home["name"] = json!(name);
    client()
        .post(server.url("/.sitefile"))
        .header("authorization", TOKEN)
        .body(json!({"blocks": {"pages-home": home}}).to_string())
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn fast_deploy_waits_for_a_frozen_store_then_serves_the_directory_marked_until_it_answers() {
    let Some(redis) = redis_url() else { return };
    let id = unique("frozen");
    // The deployment's snapshot is newer than the directory: a reload acknowledged in the store.
    let (writer, _) = start(fast_deploy_env(&redis, &id, "15000")).await;
    let written = rename_home(&writer, "Published").await;
    assert_eq!(written.status(), StatusCode::OK);
    assert_eq!(written.json::<Value>().await.unwrap()["kvWritten"], true);
    drop(writer);

    let store = FrozenStore::start(&redis).await;
    // With a short bound the server waits that long, then serves the directory, saying so.
    let started = Instant::now();
    let (fallback, line) = start(fast_deploy_env(&store.url, &id, "1000")).await;
    assert!(started.elapsed() >= Duration::from_secs(1), "it waited");
    assert!(
        line.contains("storefront") && line.contains("directory fallback"),
        "the first line says the directory stands in: {line}"
    );
    let (name, marked) = home(&fallback).await;
    assert_eq!(name, "Home");
    assert_eq!(marked.as_deref(), Some("directory-fallback"));
    let meta = fallback.get("/live/_meta").await;
    assert_eq!(content_header(&meta).as_deref(), Some("directory-fallback"));
    // A reload now would overwrite the acknowledged one in the store: refused, unchanged.
    let refused = rename_home(&fallback, "Lost").await;
    assert_error(refused, StatusCode::SERVICE_UNAVAILABLE, "KV_WRITE_FAILED").await;
    assert_eq!(home(&fallback).await.0, "Home");

    // With a longer bound the server does not serve at all while it waits (longer than one
    // call to the store may take), and serves the snapshot once the store answers.
    let waiting = tokio::spawn(start(fast_deploy_env(&store.url, &id, "30000")));
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(!waiting.is_finished(), "nothing is served while it waits");
    store.thaw();
    let (patient, line) = waiting.await.unwrap();
    assert!(
        line.contains(&format!("deployment {id} from PLATFORM_KV")),
        "{line}"
    );
    assert_eq!(home(&patient).await, (json!("Published"), None));

    // The server that fell back takes the store's snapshot as soon as it answers, unmarked,
    // and takes reloads again.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (name, marked) = home(&fallback).await;
        if name == "Published" && marked.is_none() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still {name} marked {marked:?} after the store answered"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let reloaded = rename_home(&fallback, "Again").await;
    assert_eq!(reloaded.status(), StatusCode::OK);
    assert_eq!(reloaded.json::<Value>().await.unwrap()["kvWritten"], true);
    let deadline = Instant::now() + Duration::from_secs(10);
    while home(&patient).await.0 != "Again" {
        assert!(
            Instant::now() < deadline,
            "the reload reaches the other server"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
