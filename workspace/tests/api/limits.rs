//! Connection limits of the served router: request-head, body and idle keep-alive timeouts,
//! and the cap on open connections. Transport only, so on SQLite alone.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{Api, Backend};

/// How long a test waits for the server to act on a timeout before failing.
const PATIENCE: Duration = Duration::from_secs(10);

async fn connect(api: &Api) -> TcpStream {
    TcpStream::connect(api.base.trim_start_matches("http://"))
        .await
        .unwrap()
}

/// Reads until the server closes the connection; returns what it sent.
async fn until_closed(socket: &mut TcpStream) -> String {
    let mut seen = Vec::new();
    let read = tokio::time::timeout(PATIENCE, async {
        let mut buf = [0u8; 4096];
        loop {
            match socket.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(
        read.is_ok(),
        "the server kept the connection open: {:?}",
        String::from_utf8_lossy(&seen)
    );
    String::from_utf8_lossy(&seen).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_slow_and_stalled_connections_are_closed() {
    let api = Api::start_with(Backend::Sqlite, |c| {
        c.limits.header_timeout = Duration::from_millis(300);
        c.limits.body_timeout = Duration::from_millis(300);
    })
    .await;
    // A connection that never sends anything.
    let mut silent = connect(&api).await;
    until_closed(&mut silent).await;
    // A request head that never ends.
    let mut slow = connect(&api).await;
    slow.write_all(b"GET /api/acme/pilot/threads/t/stream HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    until_closed(&mut slow).await;
    // A keep-alive connection left idle after its answer.
    let mut idle = connect(&api).await;
    idle.write_all(b"POST /api/acme/tools/X HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        .await
        .unwrap();
    let answered = until_closed(&mut idle).await;
    assert!(answered.starts_with("HTTP/1.1 401"), "{answered}");
    // A body that stops arriving fails instead of holding the request.
    let mut stalled = connect(&api).await;
    let head = format!(
        "POST /api/acme/tools/COLLECTION_THREADS_LIST HTTP/1.1\r\nHost: x\r\n\
         Authorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Content-Length: 100\r\n\r\n{{",
        api.owner
    );
    stalled.write_all(head.as_bytes()).await.unwrap();
    let answer = until_closed(&mut stalled).await;
    assert!(answer.starts_with("HTTP/1.1 4"), "{answer}");
    // The server still answers.
    let (status, _) = api
        .tool(&api.owner, "COLLECTION_THREADS_LIST", serde_json::json!({}))
        .await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_connections_are_capped() {
    let api = Api::start_with(Backend::Sqlite, |c| c.limits.max_connections = 2).await;
    let held = [connect(&api).await, connect(&api).await];
    tokio::time::sleep(Duration::from_millis(100)).await;
    let client = api.client.clone();
    let url = format!("{}/api/acme/tools/COLLECTION_THREADS_LIST", api.base);
    let owner = api.owner.clone();
    let mut request = tokio::spawn(async move {
        client
            .post(url)
            .bearer_auth(owner)
            .json(&serde_json::json!({}))
            .send()
            .await
            .map(|r| r.status().as_u16())
    });
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut request)
            .await
            .is_err(),
        "answered while both connections were taken"
    );
    drop(held);
    let status = tokio::time::timeout(PATIENCE, request)
        .await
        .expect("answered once a connection closed")
        .unwrap()
        .unwrap();
    assert_eq!(status, 200);
}
