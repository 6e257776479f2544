//! Threads and their durable transcript of messages.

use serde::Serialize;
use serde_json::Value;
use sqlx::any::{AnyArguments, AnyRow};
use sqlx::query::Query;
use sqlx::{Any, AssertSqlSafe, Row};

use super::{Store, StoreResult};

/// Where a thread's runs stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ThreadStatus {
    /// A run is queued or running.
    InProgress,
    /// The last run finished successfully (also the status of a new thread).
    Completed,
    /// The last run failed.
    Failed,
}

impl ThreadStatus {
    /// The stored text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
            Self::Failed => "failed",
        }
    }

    /// Parses the stored text.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "in_progress" => Some(Self::InProgress),
            "completed" => Some(Self::Completed),
            "failed" => Some(Self::Failed),
            _ => None,
        }
    }
}

/// A stored thread.
#[derive(Clone, Debug)]
pub struct Thread {
    /// Owning organization.
    pub org_id: String,
    /// Id, unique within the organization.
    pub id: String,
    /// Title.
    pub title: String,
    /// The agent that runs on this thread.
    pub virtual_mcp_id: String,
    /// Run status.
    pub status: ThreadStatus,
    /// Member who created it.
    pub created_by: String,
    /// Creation time (epoch ms).
    pub created_at: i64,
    /// Last update (epoch ms).
    pub updated_at: i64,
}

/// One message of a transcript, with AI SDK UI message parts.
#[derive(Clone, Debug)]
pub struct Message {
    /// Message id.
    pub id: String,
    /// Thread id.
    pub thread_id: String,
    /// `user`, `assistant` or `system`.
    pub role: String,
    /// UI message parts (JSON array).
    pub parts: Value,
    /// Optional metadata object.
    pub metadata: Option<Value>,
    /// Creation time (epoch ms).
    pub created_at: i64,
    /// Last update (epoch ms).
    pub updated_at: i64,
}

/// The claim on a thread's runs that a post makes ([`Store::post_run`]).
pub struct RunClaim<'a> {
    /// The server that will run the post's run.
    pub owner: &'a str,
    /// When (epoch ms).
    pub now: i64,
    /// The earliest lease end of another server that still counts as live.
    pub live_after: i64,
}

/// What became of a run's post ([`Store::post_run`]).
#[derive(Debug)]
pub enum Posted {
    /// The messages are stored and the thread is `in_progress`, its runs the poster's.
    Accepted,
    /// Another server whose lease is live runs the thread's runs: nothing was written.
    Busy,
    /// The thread already holds a message with the user message's id: nothing was written.
    Existing {
        /// That message.
        message: Box<Message>,
        /// The task id of the run it belongs to (none for a message stored before task ids
        /// were kept).
        task_id: Option<String>,
    },
}

const THREAD_COLUMNS: &str =
    "org_id, id, title, virtual_mcp_id, status, created_by, created_at, updated_at";
const MESSAGE_COLUMNS: &str = "id, thread_id, role, parts, metadata, created_at, updated_at";

fn thread_from(row: &AnyRow) -> StoreResult<Thread> {
    let status: String = row.try_get("status")?;
    Ok(Thread {
        org_id: row.try_get("org_id")?,
        id: row.try_get("id")?,
        title: row.try_get("title")?,
        virtual_mcp_id: row.try_get("virtual_mcp_id")?,
        status: ThreadStatus::parse(&status).unwrap_or(ThreadStatus::Failed),
        created_by: row.try_get("created_by")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// `(org id, thread id)` of a row returned by an update of threads.
fn thread_key(row: &AnyRow) -> StoreResult<(String, String)> {
    Ok((row.try_get("org_id")?, row.try_get("id")?))
}

fn message_from(row: &AnyRow) -> StoreResult<Message> {
    let parts: String = row.try_get("parts")?;
    let metadata: Option<String> = row.try_get("metadata")?;
    let decode = |e| sqlx::Error::Decode(Box::new(e));
    Ok(Message {
        id: row.try_get("id")?,
        thread_id: row.try_get("thread_id")?,
        role: row.try_get("role")?,
        parts: serde_json::from_str(&parts).map_err(decode)?,
        metadata: metadata
            .map(|m| serde_json::from_str(&m))
            .transpose()
            .map_err(decode)?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// An insert of `m` into the organization's transcripts, with the `task_id` of its run; when
/// its thread already holds a message with its id, it does `on_conflict` (`$5` is the parts,
/// `$6` the metadata, `$9` the update time), or fails without one.
fn insert_message<'q>(
    org_id: &'q str,
    m: &'q Message,
    task_id: Option<&'q str>,
    on_conflict: Option<&str>,
) -> Query<'q, Any, AnyArguments> {
    let on_conflict = on_conflict
        .map(|action| format!(" ON CONFLICT (org_id, thread_id, id) {action}"))
        .unwrap_or_default();
    sqlx::query(AssertSqlSafe(format!(
        "INSERT INTO messages (id, org_id, thread_id, role, parts, metadata, task_id, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9){on_conflict}"
    )))
    .bind(&m.id)
    .bind(org_id)
    .bind(&m.thread_id)
    .bind(&m.role)
    .bind(m.parts.to_string())
    .bind(m.metadata.as_ref().map(Value::to_string))
    .bind(task_id)
    .bind(m.created_at)
    .bind(m.updated_at)
}

impl Store {
    /// Inserts a thread; when the id already exists in the organization the existing
    /// thread is returned unchanged (`false`), otherwise the new one (`true`).
    pub async fn create_thread(&self, t: &Thread) -> StoreResult<(Thread, bool)> {
        let inserted = sqlx::query(AssertSqlSafe(format!(
            "INSERT INTO threads ({THREAD_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (org_id, id) DO NOTHING"
        )))
        .bind(&t.org_id)
        .bind(&t.id)
        .bind(&t.title)
        .bind(&t.virtual_mcp_id)
        .bind(t.status.as_str())
        .bind(&t.created_by)
        .bind(t.created_at)
        .bind(t.updated_at)
        .execute(&self.pool)
        .await?
        .rows_affected()
            > 0;
        let thread = self
            .thread(&t.org_id, &t.id)
            .await?
            .ok_or(sqlx::Error::RowNotFound)?;
        Ok((thread, inserted))
    }

    /// The thread `id` of the organization.
    pub async fn thread(&self, org_id: &str, id: &str) -> StoreResult<Option<Thread>> {
        sqlx::query(AssertSqlSafe(format!(
            "SELECT {THREAD_COLUMNS} FROM threads WHERE org_id = $1 AND id = $2"
        )))
        .bind(org_id)
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(thread_from)
        .transpose()
    }

    /// A page of the organization's threads, most recently updated first, and the total.
    pub async fn list_threads(
        &self,
        org_id: &str,
        virtual_mcp_id: Option<&str>,
        limit: i64,
        offset: i64,
    ) -> StoreResult<(Vec<Thread>, i64)> {
        let filter = "org_id = $1 AND ($2 = '' OR virtual_mcp_id = $2)";
        let agent = virtual_mcp_id.unwrap_or("");
        let total: i64 = sqlx::query(AssertSqlSafe(format!(
            "SELECT COUNT(*) FROM threads WHERE {filter}"
        )))
        .bind(org_id)
        .bind(agent)
        .fetch_one(&self.pool)
        .await?
        .try_get(0)?;
        let items = sqlx::query(AssertSqlSafe(format!(
            "SELECT {THREAD_COLUMNS} FROM threads WHERE {filter} \
             ORDER BY updated_at DESC, id LIMIT $3 OFFSET $4"
        )))
        .bind(org_id)
        .bind(agent)
        .bind(limit)
        .bind(offset)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(thread_from)
        .collect::<StoreResult<_>>()?;
        Ok((items, total))
    }

    /// Sets the final status of a thread's runs (`completed` or `failed`) at `now` (epoch ms),
    /// if the server `owner` still owns them; no server owns a run on it any more. `false`
    /// when another server took the runs over (it found `owner`'s lease lapsed): nothing is
    /// written, the other server's decision stands.
    pub async fn set_thread_status(
        &self,
        org_id: &str,
        id: &str,
        status: ThreadStatus,
        owner: &str,
        now: i64,
    ) -> StoreResult<bool> {
        let changed = sqlx::query(
            "UPDATE threads SET status = $3, run_owner = NULL, updated_at = $4 \
             WHERE org_id = $1 AND id = $2 AND run_owner = $5",
        )
        .bind(org_id)
        .bind(id)
        .bind(status.as_str())
        .bind(now)
        .bind(owner)
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(changed > 0)
    }

    /// Stores the post of a run in one transaction, all or nothing: the `user` message and the
    /// run's (empty) `assistant` message, both with the run's `task_id`, and the thread of
    /// `user` marked `in_progress` at `claim.now`, its runs owned by the server `claim.owner`.
    /// Nothing is written when the thread already holds a message with the id of `user`
    /// ([`Posted::Existing`]: a post of one id is stored once, however many arrive at once,
    /// on however many servers), or when another server whose lease lasts until
    /// `claim.live_after` or later runs its runs ([`Posted::Busy`]).
    ///
    /// The `user` message is inserted (`ON CONFLICT DO NOTHING`) before the thread is claimed,
    /// so a retry reaching another server while the first run is in progress finds the message
    /// (`Existing`, with the `task_id` kept on it) rather than a busy thread. Message ids are
    /// unique per thread, `(org_id, thread_id, id)` (migration 005).
    pub async fn post_run(
        &self,
        org_id: &str,
        claim: &RunClaim<'_>,
        user: &Message,
        task_id: &str,
        assistant: &Message,
    ) -> StoreResult<Posted> {
        let mut tx = self.pool.begin().await?;
        let inserted = insert_message(org_id, user, Some(task_id), Some("DO NOTHING"))
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if inserted == 0 {
            let row = sqlx::query(AssertSqlSafe(format!(
                "SELECT {MESSAGE_COLUMNS}, task_id FROM messages \
                 WHERE org_id = $1 AND thread_id = $2 AND id = $3"
            )))
            .bind(org_id)
            .bind(&user.thread_id)
            .bind(&user.id)
            .fetch_one(&mut *tx)
            .await?;
            tx.rollback().await?;
            return Ok(Posted::Existing {
                message: Box::new(message_from(&row)?),
                task_id: row.try_get("task_id")?,
            });
        }
        let claimed = sqlx::query(
            "UPDATE threads SET status = 'in_progress', run_owner = $3, updated_at = $4 \
             WHERE org_id = $1 AND id = $2 AND (status <> 'in_progress' \
             OR run_owner IS NULL OR run_owner = $3 OR NOT EXISTS \
             (SELECT 1 FROM workspace_servers s WHERE s.id = threads.run_owner \
              AND s.lease_until >= $5))",
        )
        .bind(org_id)
        .bind(&user.thread_id)
        .bind(claim.owner)
        .bind(claim.now)
        .bind(claim.live_after)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if claimed == 0 {
            tx.rollback().await?;
            return Ok(Posted::Busy);
        }
        insert_message(org_id, assistant, Some(task_id), None)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Posted::Accepted)
    }

    /// Renews the lease of the server `id` until `until` (epoch ms).
    pub async fn renew_server_lease(&self, id: &str, until: i64) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO workspace_servers (id, lease_until) VALUES ($1, $2) \
             ON CONFLICT (id) DO UPDATE SET lease_until = $2",
        )
        .bind(id)
        .bind(until)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Gives up the lease of the server `id`: its runs count as orphaned at once.
    pub async fn release_server_lease(&self, id: &str) -> StoreResult<()> {
        sqlx::query("DELETE FROM workspace_servers WHERE id = $1")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Marks `failed` at `now` (epoch ms) every `in_progress` thread owned by the server
    /// `owner` (which is stopping) and returns them as `(org id, thread id)`.
    pub async fn fail_runs_of(&self, owner: &str, now: i64) -> StoreResult<Vec<(String, String)>> {
        let rows = sqlx::query(
            "UPDATE threads SET status = 'failed', run_owner = NULL, updated_at = $2 \
             WHERE status = 'in_progress' AND run_owner = $1 RETURNING org_id, id",
        )
        .bind(owner)
        .bind(now)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(thread_key).collect()
    }

    /// Marks `failed` at `now` (epoch ms) every `in_progress` thread that no server holding
    /// a lease until `live_after` or later owns (its runs died with their server), forgets
    /// the leases that lapsed before `live_after`, and returns the threads as
    /// `(org id, thread id)`.
    pub async fn fail_orphaned_runs(
        &self,
        now: i64,
        live_after: i64,
    ) -> StoreResult<Vec<(String, String)>> {
        let orphaned = sqlx::query(
            "UPDATE threads SET status = 'failed', run_owner = NULL, updated_at = $1 \
             WHERE status = 'in_progress' AND (run_owner IS NULL OR NOT EXISTS \
             (SELECT 1 FROM workspace_servers s WHERE s.id = threads.run_owner \
              AND s.lease_until >= $2)) \
             RETURNING org_id, id",
        )
        .bind(now)
        .bind(live_after)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(thread_key)
        .collect::<StoreResult<_>>()?;
        sqlx::query("DELETE FROM workspace_servers WHERE lease_until < $1")
            .bind(live_after)
            .execute(&self.pool)
            .await?;
        Ok(orphaned)
    }

    /// Inserts or replaces a message of a thread (assistant messages grow step by step).
    pub async fn upsert_message(&self, org_id: &str, m: &Message) -> StoreResult<()> {
        let update = "DO UPDATE SET parts = $5, metadata = $6, updated_at = $9";
        insert_message(org_id, m, None, Some(update))
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// A page of a thread's transcript, oldest first, and the total.
    pub async fn list_messages(
        &self,
        org_id: &str,
        thread_id: &str,
        limit: i64,
        offset: i64,
    ) -> StoreResult<(Vec<Message>, i64)> {
        let total: i64 =
            sqlx::query("SELECT COUNT(*) FROM messages WHERE org_id = $1 AND thread_id = $2")
                .bind(org_id)
                .bind(thread_id)
                .fetch_one(&self.pool)
                .await?
                .try_get(0)?;
        let items = sqlx::query(AssertSqlSafe(format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages \
             WHERE org_id = $1 AND thread_id = $2 ORDER BY seq LIMIT $3 OFFSET $4"
        )))
        .bind(org_id)
        .bind(thread_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(message_from)
        .collect::<StoreResult<_>>()?;
        Ok((items, total))
    }
}
