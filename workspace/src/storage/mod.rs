//! Durable storage: SQLite (embedded default, WAL) or PostgreSQL, chosen by the database URL.
//!
//! One [`Store`] runs the same SQL on both backends through sqlx's `Any` driver; the
//! backends differ only in connection set-up and in the migration scripts.

mod agents;
mod api_keys;
mod audit;
mod auth_revision;
mod connections;
mod migrations;
mod orgs;
mod threads;

use std::path::Path;
use std::str::FromStr;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor};

pub use agents::{Agent, AgentMember};
pub use api_keys::ApiKeyRecord;
pub use audit::AuditEntry;
pub use auth_revision::{RevisionConnection, SqliteRevision};
pub use connections::{Connection, ConnectionStatus, DEFAULT_TOOL_TIMEOUT_MS};
pub use orgs::{Member, Organization};
pub use threads::{Message, Posted, RunClaim, Thread, ThreadStatus};

/// The place `url` names, for logs and errors: a SQLite path made absolute, a PostgreSQL
/// URL without its password.
fn location(url: &str) -> String {
    if let Some(path) = url.strip_prefix("sqlite://") {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.into());
        return format!("sqlite://{}", path.display());
    }
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            parsed.to_string()
        }
        Err(_) => url.to_string(),
    }
}

/// Which database engine backs the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// An embedded SQLite file in WAL mode.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

/// A storage failure (connection, query or migration).
pub type StoreResult<T> = Result<T, sqlx::Error>;

/// A storage failure with the database it happened on.
#[derive(Debug, thiserror::Error)]
#[error("database {location}: {source}")]
pub struct DatabaseError {
    /// Where the database is (see [`Store::location`]).
    pub location: String,
    /// What failed.
    #[source]
    pub source: sqlx::Error,
}

/// The workspace database: organizations, members, keys, connections, agents, threads,
/// messages and the audit log.
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    location: String,
}

impl Store {
    /// Connects to `sqlite://<path>` (the file and its directory are created) or
    /// `postgres://...`, applies pending migrations and logs where the database is. Every
    /// failure names that place.
    pub async fn connect(url: &str) -> Result<Self, DatabaseError> {
        let location = location(url);
        let fail = |source| DatabaseError {
            location: location.clone(),
            source,
        };
        let store = Self::open(url, location.clone()).await.map_err(fail)?;
        migrations::run(&store).await.map_err(fail)?;
        tracing::info!(database = %store.location, "workspace database opened");
        Ok(store)
    }

    /// Connects the pool `url` names. The SQLite pool does not ping a connection before
    /// handing it out (`test_before_acquire(false)`): an in-process connection cannot drop,
    /// and each ping would be a round trip to its worker thread. The PostgreSQL pool
    /// keeps the ping, since a TCP connection can drop. sqlx still pings every connection that
    /// returns to the pool, whatever the backend.
    async fn open(url: &str, location: String) -> StoreResult<Self> {
        sqlx::any::install_default_drivers();
        let (backend, url) = if let Some(path) = url.strip_prefix("sqlite://") {
            if let Some(dir) = Path::new(path)
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
            {
                std::fs::create_dir_all(dir).map_err(|e| {
                    sqlx::Error::Io(std::io::Error::new(
                        e.kind(),
                        format!("cannot create the directory {}: {e}", dir.display()),
                    ))
                })?;
            }
            (Backend::Sqlite, format!("sqlite://{path}?mode=rwc"))
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            (Backend::Postgres, url.to_string())
        } else {
            return Err(sqlx::Error::Configuration(
                "PLATFORM_DATABASE_URL must start with sqlite:// or postgres://".into(),
            ));
        };
        let options = AnyConnectOptions::from_str(&url)?;
        let pool = match backend {
            Backend::Sqlite => {
                // A SQLite connection lives in this process and cannot drop: the pool's ping
                // before each acquire would only add a round trip to its worker thread.
                AnyPoolOptions::new()
                    .max_connections(4)
                    .test_before_acquire(false)
                    .after_connect(|conn, _| {
                        Box::pin(async move {
                            conn.execute(
                                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; \
                                 PRAGMA busy_timeout=5000; PRAGMA foreign_keys=ON;",
                            )
                            .await?;
                            Ok(())
                        })
                    })
                    .connect_with(options)
                    .await?
            }
            Backend::Postgres => {
                AnyPoolOptions::new()
                    .max_connections(10)
                    .connect_with(options)
                    .await?
            }
        };
        Ok(Self {
            pool,
            backend,
            location,
        })
    }

    /// Where the database is: `sqlite://` and the file's absolute path, or the PostgreSQL URL
    /// without its password.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// `source` as a failure of this database.
    pub fn error(&self, source: sqlx::Error) -> DatabaseError {
        DatabaseError {
            location: self.location.clone(),
            source,
        }
    }

    /// The engine behind this store.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The SQLite database file (absolute), or `None` on PostgreSQL.
    pub fn sqlite_file(&self) -> Option<&Path> {
        match self.backend {
            Backend::Sqlite => self.location.strip_prefix("sqlite://").map(Path::new),
            Backend::Postgres => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_absolute_and_hide_passwords() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            location("sqlite://data/workspace.db"),
            format!("sqlite://{}", cwd.join("data/workspace.db").display())
        );
        assert_eq!(location("sqlite:///srv/x.db"), "sqlite:///srv/x.db");
        let pg = location("postgres://app:s3cret@db.internal:5432/ws");
        assert!(!pg.contains("s3cret"), "{pg}");
        assert!(pg.contains("app:***@db.internal:5432/ws"), "{pg}");
    }
}
