//! The authorization revision: a counter the database bumps (by trigger, in the writing
//! transaction) on every write to organizations, members, API keys and connections. Migration
//! 004 adds the counter and its triggers, on both backends.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use sqlx::AnyConnection;

use super::{Store, StoreResult};

/// The statement every read runs (prepared once per connection).
const READ: &str = "SELECT value FROM auth_revision WHERE id = 1";

/// How long a read of the SQLite file waits for a lock. Readers of a WAL database wait only
/// while another connection recovers the WAL after a crash, so this is a bound that should
/// never be reached; it blocks the calling thread, hence far below the pool's 5 s.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_millis(250);

/// A connection of its own that reads the authorization revision: taken out of the pool,
/// so a read is one round trip, without the pool's test of each connection it takes back.
/// A read that fails drops the connection, and the next read opens another.
pub struct RevisionConnection {
    store: Store,
    connection: Option<AnyConnection>,
}

impl RevisionConnection {
    /// A reader over `store`; its connection is opened by the first read.
    pub fn new(store: Store) -> Self {
        Self {
            store,
            connection: None,
        }
    }

    /// The current authorization revision: unchanged since an earlier read means no key,
    /// connection, member or organization was written meanwhile, on any server.
    pub async fn read(&mut self) -> StoreResult<i64> {
        let mut connection = match self.connection.take() {
            Some(connection) => connection,
            None => self.store.pool.acquire().await?.detach(),
        };
        let (revision,): (i64,) = sqlx::query_as(READ).fetch_one(&mut connection).await?;
        self.connection = Some(connection);
        Ok(revision)
    }
}

/// The authorization revision of a SQLite database, read on the calling thread through a
/// read-only connection of its own: a read of the WAL index in shared memory and one row,
/// a few microseconds, with no hop to a worker thread. Every process sharing the file sees
/// every other's commits (and SQL run by hand) at its next read. A read that fails drops
/// the connection, and the next read opens another. The connection is `rusqlite`'s, behind a
/// mutex; rusqlite shares sqlx's `libsqlite3-sys`, so one SQLite is linked.
pub struct SqliteRevision {
    file: PathBuf,
    connection: Mutex<Option<rusqlite::Connection>>,
}

impl SqliteRevision {
    /// A reader of the SQLite `store`'s revision, or `None` for another backend. Its
    /// connection is opened by the first read.
    pub fn of(store: &Store) -> Option<Self> {
        Some(Self {
            file: store.sqlite_file()?.into(),
            connection: Mutex::new(None),
        })
    }

    /// The current authorization revision (see [`RevisionConnection::read`]).
    pub fn read(&self) -> rusqlite::Result<i64> {
        let mut slot = self
            .connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let connection = match slot.take() {
            Some(connection) => connection,
            None => self.open()?,
        };
        let revision = connection
            .prepare_cached(READ)?
            .query_row([], |row| row.get(0))?;
        *slot = Some(connection);
        Ok(revision)
    }

    fn open(&self) -> rusqlite::Result<rusqlite::Connection> {
        use rusqlite::OpenFlags;
        let connection = rusqlite::Connection::open_with_flags(
            &self.file,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        connection.busy_timeout(SQLITE_BUSY_TIMEOUT)?;
        Ok(connection)
    }
}
