//! Durable storage: SQLite (embedded default, WAL) or PostgreSQL, chosen by the database URL.
//!
//! One [`Store`] runs the same SQL on both backends through sqlx's `Any` driver; the
//! backends differ only in connection set-up and in the migration scripts.

mod agents;
mod api_keys;
mod audit;
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
pub use connections::{Connection, ConnectionStatus, DEFAULT_TOOL_TIMEOUT_MS};
pub use orgs::{Member, Organization};
pub use threads::{Message, Thread, ThreadStatus};

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

/// The workspace database: organizations, members, keys, connections, agents, threads,
/// messages and the audit log.
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
}

impl Store {
    /// Connects to `sqlite://<path>` (the file and its directory are created) or
    /// `postgres://...`, and applies pending migrations.
    pub async fn connect(url: &str) -> StoreResult<Self> {
        sqlx::any::install_default_drivers();
        let (backend, url) = if let Some(path) = url.strip_prefix("sqlite://") {
            if let Some(dir) = Path::new(path)
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
            {
                std::fs::create_dir_all(dir).map_err(sqlx::Error::Io)?;
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
                AnyPoolOptions::new()
                    .max_connections(4)
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
        let store = Self { pool, backend };
        migrations::run(&store).await?;
        Ok(store)
    }

    /// The engine behind this store.
    pub fn backend(&self) -> Backend {
        self.backend
    }
}
