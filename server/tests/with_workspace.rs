//! `sitefile serve --workspace`: one process serving a site and the workspace API, each on its
//! own paths, with a key made by `sitefile workspace init`.

use reqwest::StatusCode;
use serde_json::{Value, json};

mod common;
use common::{Server, client};

/// A throwaway workspace configuration: a fresh SQLite file and an encryption key.
fn workspace_env(name: &str) -> Vec<(&'static str, String)> {
    let db = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.db"));
    let _ = std::fs::remove_file(&db);
    vec![
        (
            "PLATFORM_DATABASE_URL",
            format!("sqlite://{}", db.display()),
        ),
        (
            "PLATFORM_WORKSPACE_ENCRYPTION_KEY",
            "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=".to_string(),
        ),
    ]
}

#[tokio::test]
async fn one_process_serves_the_site_and_the_workspace_api() {
    let env = workspace_env("serve-with-workspace");
    let init = tokio::process::Command::new(env!("CARGO_BIN_EXE_sitefile"))
        .args(["workspace", "init", "--org", "acme"])
        .env_clear()
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .await
        .unwrap();
    assert!(init.status.success(), "{init:?}");
    let key = String::from_utf8(init.stdout).unwrap().trim().to_string();

    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut server = Server::start_with(&["--workspace"], &env).await;

    let page = server.get("/").await;
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.unwrap().contains("pages-home"));

    let threads = client()
        .post(server.url("/api/acme/tools/COLLECTION_THREADS_LIST"))
        .bearer_auth(&key)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(threads.status(), StatusCode::OK);
    let threads: Value = threads.json().await.unwrap();
    assert!(threads.is_object(), "{threads}");

    let anonymous = client()
        .post(server.url("/api/acme/tools/COLLECTION_THREADS_LIST"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    assert!(anonymous.headers().contains_key("www-authenticate"));

    // The API's own 404 under its paths; the site's pages everywhere else.
    let missing = server.get("/api/acme/nothing-here").await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert_eq!(missing.headers()["content-type"], "application/json");
    let sitefile = server.get("/.sitefile").await;
    assert_eq!(sitefile.status(), StatusCode::OK);

    let exit = server.terminate().await;
    assert!(exit.success(), "{exit:?}");
}

#[tokio::test]
async fn without_its_key_the_workspace_does_not_start_and_says_why() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_sitefile"))
        .args(["serve", common::STOREFRONT, "--listen", "127.0.0.1:0"])
        .arg("--workspace")
        .env_clear()
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("PLATFORM_WORKSPACE_ENCRYPTION_KEY"),
        "{stderr}"
    );
}
