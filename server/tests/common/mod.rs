//! The harness of the `sitefile serve` tests: the built binary started on a free loopback
//! port, and an HTTP client that follows no redirects.
#![allow(dead_code)] // each test crate uses its own part of the harness

use reqwest::StatusCode;
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub const STOREFRONT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/storefront");
pub const TOKEN: &str = "s3cret";

/// A running `sitefile serve` and its base URL; killed when dropped.
pub struct Server {
    pub child: Child,
    pub base: String,
}

impl Server {
    /// Starts the binary on a free loopback port with a clean environment plus `env`, and
    /// reads the address it prints.
    pub async fn start(env: &[(&str, &str)]) -> Server {
        Server::start_with(&[], env).await
    }

    /// [`Server::start`] with more command-line arguments.
    pub async fn start_with(args: &[&str], env: &[(&str, &str)]) -> Server {
        Server::start_in(STOREFRONT, args, env).await.0
    }

    /// [`Server::start_with`] serving the site directory `dir`; the line it printed too.
    pub async fn start_in(dir: &str, args: &[&str], env: &[(&str, &str)]) -> (Server, String) {
        Server::launch(dir, args, env, Stdio::inherit()).await
    }

    /// [`Server::start_in`] with the server's stderr going to `stderr`.
    pub async fn launch(
        dir: &str,
        args: &[&str],
        env: &[(&str, &str)],
        stderr: Stdio,
    ) -> (Server, String) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sitefile"))
            .args(["serve", dir, "--listen", "127.0.0.1:0"])
            .args(args)
            .env_clear()
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(stderr)
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
        (Server { child, base }, line)
    }

    /// Stops the server with SIGTERM; how it exited, within the shutdown deadline.
    pub async fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().expect("running").to_string();
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("run kill");
        assert!(sent.success());
        tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("the server stops within the shutdown deadline")
            .expect("wait for the server")
    }

    /// The URL of `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `GET path` on a fresh connection.
    pub async fn get(&self, path: &str) -> reqwest::Response {
        client().get(self.url(path)).send().await.unwrap()
    }

    /// `POST path` with `body` on a fresh connection.
    pub async fn post(&self, path: &str, body: &'static str) -> reqwest::Response {
        client()
            .post(self.url(path))
            .body(body)
            .send()
            .await
            .unwrap()
    }

    /// `GET path` with one more header.
    pub async fn get_with(&self, path: &str, (name, value): (&str, &str)) -> reqwest::Response {
        client()
            .get(self.url(path))
            .header(name, value)
            .send()
            .await
            .unwrap()
    }

    /// `GET path`, its body read as JSON.
    pub async fn get_json(&self, path: &str) -> Value {
        self.get(path).await.json().await.unwrap()
    }
}

/// Asserts that `response` is the JSON error `code` with `status`.
pub async fn assert_error(response: reqwest::Response, status: StatusCode, code: &str) {
    assert_eq!(response.status(), status);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], code, "{body}");
}

/// An HTTP client that follows no redirects.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// The test Redis (`SITEFILE_TEST_REDIS_URL`, set by `scripts/test.sh`). Without it a Redis
/// test fails when `CI=true`; elsewhere it says on stderr that it did not run, and passes.
pub fn redis_url() -> Option<String> {
    match std::env::var("SITEFILE_TEST_REDIS_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert_ne!(
                std::env::var("CI").as_deref(),
                Ok("true"),
                "SITEFILE_TEST_REDIS_URL is not set: Redis tests need a server. Run \
                 scripts/test.sh, or `source scripts/services.sh && services_start` first."
            );
            eprintln!("Redis test not run: SITEFILE_TEST_REDIS_URL is not set");
            None
        }
    }
}

/// A name no other test run uses (deployment ids, cache versions).
pub fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{}-{nanos}", std::process::id())
}
