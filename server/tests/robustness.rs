//! `sitefile serve` against what a public server meets: slow, idle and stalled connections,
//! more connections than it takes, malformed and absurd requests, and reloads while clients
//! hammer pages. Each is answered with a clear status or closed on time, and the server keeps
//! serving everyone else.

use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod common;
use common::{Server, TOKEN, client};

/// Short connection limits, so the timeouts are seen in a test's time.
const LIMITS: [(&str, &str); 3] = [
    ("PLATFORM_HEADER_TIMEOUT_MS", "300"),
    ("PLATFORM_BODY_TIMEOUT_MS", "300"),
    ("PLATFORM_RELEASE_RELOAD_TOKEN", TOKEN),
];

/// A raw connection to `server`.
async fn connect(server: &Server) -> TcpStream {
    let address = server.base.trim_start_matches("http://");
    TcpStream::connect(address).await.expect("connect")
}

/// Reads from `stream` until the server closes it (well within 10 s), and what it sent.
async fn until_closed(stream: &mut TcpStream) -> String {
    let mut seen = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => seen.extend_from_slice(&buffer[..n]),
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

/// Sends `request` (raw bytes) on a fresh connection; the server's whole answer, read until it
/// closes the connection (the request asks it to).
async fn raw(server: &Server, request: &[u8]) -> String {
    let mut stream = connect(server).await;
    stream.write_all(request).await.unwrap();
    until_closed(&mut stream).await
}

/// The home page is served: the server is still answering others.
async fn still_serving(server: &Server) {
    let page = server.get("/").await;
    assert_eq!(page.status(), StatusCode::OK);
}

#[tokio::test]
async fn silent_slow_idle_and_stalled_connections_are_closed_on_time() {
    let server = Server::start(&LIMITS).await;
    // A connection that never sends anything.
    let mut silent = connect(&server).await;
    // A request head that never ends (slowloris).
    let mut slow = connect(&server).await;
    slow.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .unwrap();
    // A keep-alive connection left idle after its answer.
    let mut idle = connect(&server).await;
    idle.write_all(b"GET /platform/_liveness HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    // A body that stops arriving.
    let mut stalled = connect(&server).await;
    let head = format!(
        "POST /.sitefile HTTP/1.1\r\nHost: x\r\nAuthorization: {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{"
    );
    stalled.write_all(head.as_bytes()).await.unwrap();

    // Others are served meanwhile.
    still_serving(&server).await;
    assert_eq!(until_closed(&mut silent).await, "");
    until_closed(&mut slow).await;
    let answered = until_closed(&mut idle).await;
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    let answer = until_closed(&mut stalled).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"BODY_TIMEOUT\""), "{answer}");
    still_serving(&server).await;
}

/// A connection inside a request: the head of a reload is sent, its body stops after one byte.
async fn busy(server: &Server) -> TcpStream {
    let mut stream = connect(server).await;
    let head = format!(
        "POST /.sitefile HTTP/1.1\r\nHost: x\r\nAuthorization: {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

#[tokio::test]
async fn connections_over_the_cap_wait_for_a_free_slot_and_are_then_served() {
    // The default body timeout (30 s): requests in progress keep their slots for the test
    // (connections only waiting for a head would be closed to make room).
    let server = Server::start(&[
        ("PLATFORM_MAX_CONNECTIONS", "2"),
        ("PLATFORM_RELEASE_RELOAD_TOKEN", TOKEN),
    ])
    .await;
    let held = [busy(&server).await, busy(&server).await];
    // Let the server read both heads (a connection in a request holds its slot).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let url = server.url("/");
    let mut page = tokio::spawn(async move { client().get(url).send().await.map(|r| r.status()) });
    assert!(
        tokio::time::timeout(Duration::from_millis(1500), &mut page)
            .await
            .is_err(),
        "answered while both connections were taken"
    );
    drop(held);
    let status = tokio::time::timeout(Duration::from_secs(10), page)
        .await
        .expect("answered once a slot was free")
        .unwrap()
        .unwrap();
    assert_eq!(status, StatusCode::OK);
}

/// Whether `stream` is still open: nothing to read and no end seen.
fn still_open(stream: &tokio::net::tcp::OwnedReadHalf) -> bool {
    let mut buffer = [0u8; 64];
    matches!(stream.try_read(&mut buffer), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

#[tokio::test]
async fn one_client_holding_every_slot_with_silent_or_trickled_heads_locks_no_one_out() {
    // 16 slots and a 9 s head timeout: without a fairness rule a visitor waits until the
    // attacker's connections time out. The pressure head timeout is its default (1000 ms).
    const SLOTS: usize = 16;
    let server = Server::start(&[
        ("PLATFORM_MAX_CONNECTIONS", "16"),
        ("PLATFORM_HEADER_TIMEOUT_MS", "9000"),
    ])
    .await;
    // The attacker takes every slot: every other connection trickles a head in byte by byte
    // (slowloris), the rest stay silent. The oldest trickles, the next oldest is silent.
    let mut readers = Vec::new();
    let mut tricklers = Vec::new();
    let mut silent = Vec::new();
    for i in 0..SLOTS {
        let stream = connect(&server).await;
        if i % 2 == 0 {
            let (reader, mut writer) = stream.into_split();
            readers.push(reader);
            tricklers.push(tokio::spawn(async move {
                let head = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ";
                for byte in head.iter().chain(std::iter::repeat(&b'a')) {
                    if writer.write_all(&[*byte]).await.is_err() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }));
        } else {
            let (reader, writer) = stream.into_split();
            readers.push(reader);
            silent.push(writer); // kept open, never written
        }
    }
    // Let the server take them all.
    tokio::time::sleep(Duration::from_millis(200)).await;

    // A visitor is answered, well before the head timeout closes the attacker's connections,
    // and keeps its connection (idle keep-alive, now the newest waiting one).
    let started = std::time::Instant::now();
    let visitor = client();
    let answered = tokio::time::timeout(Duration::from_secs(3), async {
        let page = visitor.get(server.url("/")).send().await.unwrap();
        assert_eq!(page.status(), StatusCode::OK);
        page.text().await.unwrap()
    })
    .await;
    assert!(
        answered.is_ok(),
        "a visitor waited over 3 s (a third of the head timeout) for a slot"
    );
    // Another visitor on a fresh connection is answered too.
    let page = tokio::time::timeout(Duration::from_secs(3), server.get("/"))
        .await
        .expect("a second visitor answered within 3 s");
    assert_eq!(page.status(), StatusCode::OK);
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );

    // Room was made by closing the connections that had waited longest for a head, one per
    // visitor (the trickling one, then the silent one); the attacker's others are still open:
    // the visitors did not wait for the head timeout.
    let mut readers = readers.into_iter();
    for _ in 0..2 {
        let reader = readers.next().unwrap();
        let mut buffer = [0u8; 64];
        let end = tokio::time::timeout(Duration::from_secs(2), async move {
            let mut reader = reader;
            loop {
                match reader.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        })
        .await;
        assert!(end.is_ok(), "the longest waiting connection was closed");
    }
    let open = readers.filter(still_open).count();
    assert_eq!(open, SLOTS - 2, "only the two longest waiting were closed");
    for trickler in tricklers {
        trickler.abort();
    }
    drop(silent);
    still_serving(&server).await;
}
#[tokio::test]
async fn bad_variables_stop_the_server_with_a_message_naming_them() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_sitefile"))
        .args(["serve", common::STOREFRONT, "--listen", "127.0.0.1:0"])
        .env_clear()
        .env("PLATFORM_MAX_CONNECTIONS", "many")
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("PLATFORM_MAX_CONNECTIONS"), "{stderr}");
}

#[tokio::test]
async fn malformed_requests_get_a_clear_status() {
    let server = Server::start(&LIMITS).await;
    // Not HTTP at all.
    let answer = raw(&server, b"HELLO THERE\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    // Invalid UTF-8 (and a raw space) in the request target.
    let answer = raw(&server, b"GET /caf\xe9 x HTTP/1.1\r\nHost: x\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    // Invalid UTF-8 in the path, percent-encoded: a path like any other (`/:slug` matches it).
    let answer = raw(
        &server,
        b"GET /caf%E9%FF HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:.200}");
    assert!(answer.contains("<h1>/caf%E9%FF</h1>"), "{answer:.600}");
    // Invalid UTF-8 in header values, the cookie among them: still the page.
    let answer = raw(
        &server,
        b"GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: \xff\xfe\r\nCookie: a=\xe9\xff; b=1\r\n\
          Connection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:.200}");
    still_serving(&server).await;
}

/// Sends a request head alone on a fresh connection (its body never comes) and reads the
/// answer; the server must answer and close within 5 s, far inside its 30 s body timeout.
async fn head_alone(server: &Server, head: &str) -> String {
    let mut stream = connect(server).await;
    stream.write_all(head.as_bytes()).await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), until_closed(&mut stream))
        .await
        .unwrap_or_else(|_| panic!("no prompt answer to {head:?}: the server waits for the body"))
}

#[tokio::test]
async fn admin_requests_refused_by_their_head_are_answered_before_any_body_byte() {
    // The default 30 s body timeout: a server that waited for the body would not answer in time.
    let server = Server::start(&[
        ("PLATFORM_RELEASE_RELOAD_TOKEN", TOKEN),
        ("PURGE_TOKEN", "p-token"),
    ])
    .await;
    // 64 GiB declared, none sent: without the token, 401 at once.
    let answer = head_alone(
        &server,
        "POST /.sitefile HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: 68719476736\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(answer.contains("\"UNAUTHORIZED\""), "{answer}");
    // A wrong purge token: 401 naming the scheme.
    let answer = head_alone(
        &server,
        "POST /_cache/purge HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nope\r\n\
         Content-Length: 1048576\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{answer}"
    );
    // With the token, a declared length one byte over the 64 MiB reload limit: 413 at once.
    let over = 64 * 1024 * 1024 + 1;
    let answer = head_alone(
        &server,
        &format!(
            "POST /.sitefile HTTP/1.1\r\nHost: x\r\nAuthorization: {TOKEN}\r\n\
             Content-Type: application/json\r\nContent-Length: {over}\r\n\r\n"
        ),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("\"BODY_TOO_LARGE\""), "{answer}");
    // An invoke (no token) over the 16 MiB limit of the other routes, the same.
    let answer = head_alone(
        &server,
        "POST /platform/invoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: 16777217\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    still_serving(&server).await;
}

#[tokio::test]
async fn an_admin_body_streamed_past_the_limit_without_a_declared_length_is_413() {
    let server = Server::start(&[]).await;
    let mut stream = connect(&server).await;
    stream
        .write_all(
            b"POST /platform/invoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
              Transfer-Encoding: chunked\r\n\r\n",
        )
        .await
        .unwrap();
    // One byte past the 16 MiB limit, in 1 MiB chunks; the body never ends.
    let chunk = vec![b' '; 1024 * 1024];
    for _ in 0..16 {
        stream.write_all(b"100000\r\n").await.unwrap();
        stream.write_all(&chunk).await.unwrap();
        stream.write_all(b"\r\n").await.unwrap();
    }
    stream.write_all(b"1\r\n \r\n").await.unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(5), until_closed(&mut stream))
        .await
        .expect("answered once the body grew past the limit");
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("\"BODY_TOO_LARGE\""), "{answer}");
    still_serving(&server).await;
}

#[tokio::test]
async fn absurd_cookies_are_refused_or_served_but_never_hang_the_server() {
    let server = Server::start(&LIMITS).await;
    // A head larger than the server reads: 431.
    let huge = format!("a={}", "x".repeat(1024 * 1024));
    let response = client()
        .get(server.url("/"))
        .header("cookie", huge)
        .send()
        .await;
    if let Ok(response) = response {
        assert_eq!(
            response.status(),
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE
        );
    }
    // Thousands of small cookies within the limit: the page.
    let many = (0..5000)
        .map(|i| format!("c{i}=v{i}"))
        .collect::<Vec<_>>()
        .join("; ");
    let response = client()
        .get(server.url("/"))
        .header("cookie", many)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // Cookies the segment and matcher rules read, with nonsense in them: the page.
    let answer = raw(
        &server,
        b"GET / HTTP/1.1\r\nHost: x\r\nCookie: platform_segment=%%%{; platform_matcher_x=%ZZ; \
          ==; ;;; =\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:.200}");
    // Control bytes in a cookie: not a valid header, 400.
    let answer = raw(
        &server,
        b"GET / HTTP/1.1\r\nHost: x\r\nCookie: a=\x01\x7f\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer:.200}");
    still_serving(&server).await;
}

/// `POST /.sitefile` with `body` and the reload token.
async fn reload(server: &Server, body: impl Into<reqwest::Body>) -> reqwest::Response {
    client()
        .post(server.url("/.sitefile"))
        .header("authorization", TOKEN)
        .body(body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn malformed_and_deeply_nested_bodies_are_400_and_change_nothing() {
    let server = Server::start(&LIMITS).await;
    let before: Value = server.get_json("/.sitefile").await;
    for body in [
        "{".to_string(),
        "[1, 2".to_string(),
        "\"blocks\"".to_string(),
        format!("{{\"blocks\": {}", "[".repeat(100_000)),
        format!(
            "{{\"blocks\": {{\"pages-home\": {}1{}}}}}",
            "[".repeat(10_000),
            "]".repeat(10_000)
        ),
    ] {
        let response = reload(&server, body.clone()).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body:.40}");
        let answer: Value = response.json().await.unwrap();
        assert!(answer["error"]["message"].is_string(), "{answer}");
    }
    let invoke = client()
        .post(server.url("/platform/invoke"))
        .body(format!("{}{}", "{\"a\":".repeat(50_000), "1"))
        .send()
        .await
        .unwrap();
    assert_eq!(invoke.status(), StatusCode::BAD_REQUEST);
    let after: Value = server.get_json("/.sitefile").await;
    assert_eq!(
        before, after,
        "a refused reload loses nothing and changes nothing"
    );
    still_serving(&server).await;
}

/// The site's content with `pages-home` named `mark` and its footer carrying `mark` too: a
/// page mixing two reloads would show two marks.
fn marked(content: &Value, mark: &str) -> String {
    let mut home = content["pages-home"].clone();
    home["name"] = json!(mark);
    let mut footer = content["Footer"].clone();
    footer["mark"] = json!(mark);
    json!({"blocks": {"pages-home": home, "Footer": footer}}).to_string()
}

/// Every `mark-N` in `text`.
fn marks(text: &str) -> BTreeSet<String> {
    text.match_indices("mark-")
        .map(|(at, _)| {
            let digits = text[at + 5..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>();
            format!("mark-{digits}")
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reloads_under_load_lose_no_request_and_never_mix_two_contents() {
    let server = std::sync::Arc::new(Server::start(&LIMITS).await);
    let content: Value = server.get_json("/.sitefile").await;
    assert!(
        content["Footer"].is_object(),
        "the example has a Footer block"
    );
    let reloaded = reload(&server, marked(&content, "mark-0")).await;
    assert_eq!(reloaded.status(), StatusCode::OK);

    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hammers = (0..4)
        .map(|_| {
            let (server, done) = (server.clone(), done.clone());
            tokio::spawn(async move {
                let client = client();
                let mut seen = BTreeSet::new();
                let mut pages = 0;
                while !done.load(std::sync::atomic::Ordering::Acquire) {
                    let response = client.get(server.url("/?asJson")).send().await.unwrap();
                    assert_eq!(response.status(), StatusCode::OK);
                    let body = response.text().await.unwrap();
                    let found = marks(&body);
                    assert_eq!(found.len(), 1, "one content per page: {found:?}");
                    seen.extend(found);
                    pages += 1;
                }
                (seen, pages)
            })
        })
        .collect::<Vec<_>>();
    for round in 1..=20 {
        let mark = format!("mark-{}", round % 2 + 1);
        let reloaded = reload(&server, marked(&content, &mark)).await;
        assert_eq!(reloaded.status(), StatusCode::OK);
        let page = server.get("/?asJson").await.text().await.unwrap();
        assert_eq!(
            marks(&page),
            BTreeSet::from([mark]),
            "the reload is served at once"
        );
    }
    done.store(true, std::sync::atomic::Ordering::Release);
    let mut seen = BTreeSet::new();
    let mut pages = 0;
    for hammer in hammers {
        let (marks, count) = hammer.await.expect("no hammer failed");
        seen.extend(marks);
        pages += count;
    }
    assert!(pages > 0);
    assert!(
        seen.len() >= 2,
        "the clients read during the reloads and saw several contents: {seen:?}"
    );
}

/// The resident memory of `server`'s process, in MiB.
fn resident_mib(server: &Server) -> u64 {
    let pid = server.child.id().expect("the server runs");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib / 1024
}

#[tokio::test]
async fn refused_large_reloads_leave_no_memory_behind() {
    let server = Server::start(&[("PLATFORM_RELEASE_RELOAD_TOKEN", TOKEN)]).await;
    still_serving(&server).await;
    let baseline = resident_mib(&server);
    // A 24 MiB string in a body that is not JSON to its end: parsed up to the string, refused.
    let body = format!(r#"{{"blocks": {{"x": "{}""#, "a".repeat(24 << 20));
    for _ in 0..4 {
        let refused = reload(&server, body.clone()).await;
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
        still_serving(&server).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after = resident_mib(&server);
    assert!(
        after < baseline + 48,
        "four refused 24 MiB reloads left {} MiB behind (from {baseline} MiB to {after} MiB)",
        after - baseline
    );
}
