//! The authorization revision: a counter the database bumps (by trigger, in the writing
//! transaction) on every write to organizations, members, API keys and connections.

use sqlx::AnyConnection;

use super::{Store, StoreResult};

/// The statement every read runs (prepared once per connection).
const READ: &str = "SELECT value FROM auth_revision WHERE id = 1";

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

    /// Where the database is, for errors.
    pub fn location(&self) -> &str {
        self.store.location()
    }
}
