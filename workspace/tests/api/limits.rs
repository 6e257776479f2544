//! Connection limits of the served router: request-head, body and idle keep-alive timeouts,
//! the cap on open connections, and fairness when one client holds every slot. Transport
//! only, so on SQLite alone.

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

/// Whether `stream` is still open: nothing to read and no end seen.
fn still_open(stream: &tokio::net::tcp::OwnedReadHalf) -> bool {
    let mut buffer = [0u8; 64];
    matches!(stream.try_read(&mut buffer), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// A thread list by `client`, answered within 3 s (a third of the head timeout); its status.
async fn visit(api: &Api, client: &reqwest::Client) -> u16 {
    let request = client
        .post(format!(
            "{}/api/acme/tools/COLLECTION_THREADS_LIST",
            api.base
        ))
        .bearer_auth(&api.owner)
        .json(&serde_json::json!({}))
        .send();
    tokio::time::timeout(Duration::from_secs(3), request)
        .await
        .expect("a visitor waited over 3 s (a third of the head timeout) for a slot")
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_holding_every_slot_with_idle_heads_locks_no_one_out() {
    // 8 slots and a 9 s head timeout: without a fairness rule a visitor waits until the
    // attacker's connections time out. The pressure head timeout is its default (1000 ms).
    const SLOTS: usize = 8;
    let api = Api::start_with(Backend::Sqlite, |c| {
        c.limits.max_connections = SLOTS;
        c.limits.header_timeout = Duration::from_millis(9000);
    })
    .await;
    // The oldest connection is inside a request (its body paused after one byte): it is
    // never closed for room.
    let mut busy = connect(&api).await;
    let head = format!(
        "POST /api/acme/tools/COLLECTION_THREADS_LIST HTTP/1.1\r\nHost: x\r\n\
         Authorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Content-Length: 100\r\n\r\n{{",
        api.owner
    );
    busy.write_all(head.as_bytes()).await.unwrap();
    let (busy, _busy_writer) = busy.into_split();
    // The attacker takes every other slot: alternately a head trickled in byte by byte
    // (slowloris) and a silent connection. The oldest trickles, the next oldest is silent.
    let mut readers = Vec::new();
    let mut tricklers = Vec::new();
    let mut silent = Vec::new();
    for i in 0..SLOTS - 1 {
        let (reader, mut writer) = connect(&api).await.into_split();
        readers.push(reader);
        if i % 2 == 0 {
            tricklers.push(tokio::spawn(async move {
                let head = b"GET /api/acme/tools HTTP/1.1\r\nHost: x\r\nX-Slow: ";
                for byte in head.iter().chain(std::iter::repeat(&b'a')) {
                    if writer.write_all(&[*byte]).await.is_err() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }));
        } else {
            silent.push(writer); // kept open, never written
        }
    }
    // Let the server take them all and read the busy connection's head.
    tokio::time::sleep(Duration::from_millis(200)).await;

    // A visitor is answered well before the head timeout and keeps its connection (idle
    // keep-alive, now the newest waiting one); a second visitor on a fresh connection too.
    let started = std::time::Instant::now();
    let (first, second) = (reqwest::Client::new(), reqwest::Client::new());
    assert_eq!(visit(&api, &first).await, 200);
    assert_eq!(visit(&api, &second).await, 200);
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );

    // Room was made by closing the connections that had waited longest for a head, one per
    // visitor (the trickling one, then the silent one); the request in progress and the
    // attacker's others are still open.
    let mut readers = readers.into_iter();
    for _ in 0..2 {
        let mut reader = readers.next().unwrap();
        let end = tokio::time::timeout(Duration::from_secs(2), async move {
            let mut buffer = [0u8; 64];
            while let Ok(1..) = reader.read(&mut buffer).await {}
        })
        .await;
        assert!(end.is_ok(), "the longest waiting connection was not closed");
    }
    assert!(
        still_open(&busy),
        "a connection inside a request was closed"
    );
    let open = readers.filter(still_open).count();
    assert_eq!(open, SLOTS - 3, "only the two longest waiting were closed");
    for trickler in tricklers {
        trickler.abort();
    }
    drop(silent);
}
