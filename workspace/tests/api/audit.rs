//! The audit log keeps a row for every tool call that answered: when its writer falls behind
//! (here: the database locked by another connection, the writer's queue 4 rows), calls wait
//! for room in the queue, and one that finds none within the wait is refused 503 before it
//! runs. Never a success without its row.

use std::time::Duration;

use serde_json::{Value, json};
use sqlx::Connection;

use crate::both_backends;
use crate::common::{Api, Backend, call};
use crate::mcp_double;

both_backends!(
    every_answered_call_is_audited_while_the_writer_stalls,
    rows_the_database_refuses_are_written_once_it_takes_them
);

/// Calls made in each round, spread over [`SPREAD`]: half management tools over REST, half
/// upstream tools through the connection proxy.
const CALLS: usize = 40;
/// How long the calls of a round take to start: longer than the writer's 10 ms wait for
/// company, so most calls find its batch taken and the queue full.
const SPREAD: Duration = Duration::from_millis(800);
/// How long the audit table stays locked in each round (under SQLite's 5 s busy timeout, so
/// the stalled write then succeeds).
const LOCK: Duration = Duration::from_millis(1500);

/// Runs `sql` on the server's database from another connection.
async fn run_sql(api: &Api, sql: &'static str) {
    let url = api.database_url();
    if url.starts_with("sqlite://") {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        sqlx::raw_sql(sql).execute(&mut conn).await.unwrap();
    } else {
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::raw_sql(sql).execute(&mut conn).await.unwrap();
    }
}

/// Another connection's lock on the audit table: SQLite's write lock, or PostgreSQL's
/// `EXCLUSIVE` table lock (reads go on, writes wait), until [`Lock::release`].
enum Lock {
    Sqlite(sqlx::SqliteConnection),
    Postgres(sqlx::PgConnection),
}

async fn lock_audit(api: &Api) -> Lock {
    let url = api.database_url();
    if url.starts_with("sqlite://") {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        sqlx::raw_sql("BEGIN EXCLUSIVE")
            .execute(&mut conn)
            .await
            .unwrap();
        Lock::Sqlite(conn)
    } else {
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::raw_sql("BEGIN; LOCK TABLE audit_log IN EXCLUSIVE MODE")
            .execute(&mut conn)
            .await
            .unwrap();
        Lock::Postgres(conn)
    }
}

impl Lock {
    async fn release(self) {
        let rollback = sqlx::raw_sql("ROLLBACK");
        match self {
            Lock::Sqlite(mut conn) => rollback.execute(&mut conn).await.map(drop),
            Lock::Postgres(mut conn) => rollback.execute(&mut conn).await.map(drop),
        }
        .unwrap();
    }
}

/// One call, the `n`th of a round: whether it succeeded; a refusal must be the audit's 503.
async fn one_call(api: &Api, conn: &str, n: usize) -> bool {
    if n.is_multiple_of(2) {
        let (status, body) = api
            .tool(&api.owner, "COLLECTION_THREADS_LIST", json!({}))
            .await;
        if status == 200 {
            return true;
        }
        assert_eq!(status, 503, "{body}");
        assert_eq!(body["error"]["code"], "UNAVAILABLE", "{body}");
        assert!(refused_for_audit(&body["error"]["message"]), "{body}");
        return false;
    }
    let path = format!("/api/acme/mcp/{conn}");
    let (status, _, body) = api
        .rpc(
            &path,
            Some(&api.owner),
            call("echo", json!({ "text": "hi" })),
        )
        .await;
    if status == 200 {
        assert_eq!(body["result"]["content"][0]["text"], "hi", "{body}");
        return true;
    }
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], -32603, "{body}");
    assert!(refused_for_audit(&body["error"]["message"]), "{body}");
    false
}

fn refused_for_audit(message: &Value) -> bool {
    message.as_str().is_some_and(|m| m.contains("audit log"))
}

/// A round of [`CALLS`] calls started over [`SPREAD`] while the audit table is locked for
/// [`LOCK`]; whether each succeeded.
async fn round(api: &Api, conn: &str) -> Vec<bool> {
    let lock = lock_audit(api).await;
    let calls = futures_util::future::join_all((0..CALLS).map(|n| async move {
        tokio::time::sleep(SPREAD * n as u32 / CALLS as u32).await;
        one_call(api, conn, n).await
    }));
    let unlock = async {
        tokio::time::sleep(LOCK).await;
        lock.release().await;
    };
    tokio::join!(calls, unlock).0
}

/// How many of `outcomes` succeeded; of those, how many were upstream calls.
fn successes(outcomes: &[bool]) -> (usize, usize) {
    let ok = outcomes.iter().filter(|ok| **ok).count();
    let upstream = outcomes.iter().skip(1).step_by(2).filter(|ok| **ok).count();
    (ok, upstream)
}

/// The audit rows of `COLLECTION_THREADS_LIST` and `echo` calls, once there are `expected`
/// (polled for up to 10 s: the writer works in the background), or as many as there are then.
async fn audited(api: &Api, expected: usize) -> usize {
    let mut count = 0;
    for _ in 0..50 {
        let out = api
            .ok(&api.owner, "AUDIT_LOG_LIST", json!({ "limit": 1000 }))
            .await;
        let rows = out["items"].as_array().unwrap();
        count = rows
            .iter()
            .filter(|r| r["tool"] == "COLLECTION_THREADS_LIST" || r["tool"] == "echo")
            .count();
        if count >= expected {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    count
}

async fn every_answered_call_is_audited_while_the_writer_stalls(backend: Backend) {
    // Calls may wait up to 10 s for room: the stall (1.5 s) is waited out, every call answers.
    let api = Api::start_with(backend, |c| {
        c.audit.capacity = 4;
        c.audit.wait = Duration::from_secs(10);
    })
    .await;
    let upstream = mcp_double::start(false).await;
    let conn = api.connection(&api.owner, &upstream.url, json!({})).await;
    let (ok, upstream_ok) = successes(&round(&api, &conn).await);
    assert_eq!(ok, CALLS, "every call waited for room and answered");
    assert_eq!(upstream.calls().len(), upstream_ok);
    assert_eq!(audited(&api, CALLS).await, CALLS, "and has its row");

    // A server whose calls wait at most 200 ms: those that find no room by then are refused
    // before they run.
    let impatient = api
        .another_server(|c| c.audit.wait = Duration::from_millis(200))
        .await;
    let (ok, upstream_ok) = successes(&round(&impatient, &conn).await);
    assert!(ok < CALLS, "some calls found no room in time");
    assert!(ok > 0, "calls that found room answered");
    assert_eq!(
        upstream.calls().len(),
        CALLS / 2 + upstream_ok,
        "refused calls never reached the upstream"
    );
    assert_eq!(
        audited(&api, CALLS + ok).await,
        CALLS + ok,
        "every call that answered has its row"
    );
}

/// While the audit table is gone (renamed away), the writer's inserts fail; the rows of the
/// calls made meanwhile are kept and written once the table is back.
async fn rows_the_database_refuses_are_written_once_it_takes_them(backend: Backend) {
    let api = Api::start(backend).await;
    run_sql(&api, "ALTER TABLE audit_log RENAME TO audit_log_away").await;
    for _ in 0..10 {
        api.ok(&api.owner, "COLLECTION_THREADS_LIST", json!({}))
            .await;
    }
    // Long enough for several attempts (100 ms, then 200 ms, 400 ms, …).
    tokio::time::sleep(Duration::from_millis(800)).await;
    run_sql(&api, "ALTER TABLE audit_log_away RENAME TO audit_log").await;
    assert_eq!(audited(&api, 10).await, 10);
}
