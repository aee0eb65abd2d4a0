//! Opening the store: the SQLite file, its pragmas, the embedded migrations, the pools.

use std::borrow::Cow;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::error::BoxDynError;
use sqlx::migrate::{MigrateError, Migration, MigrationSource, MigrationType, Migrator};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, Sqlite, SqliteConnection, Transaction};

use crate::error::{is_not_a_database, Result, StoreError};

/// How long a statement waits for another process's write lock before failing with `Busy`.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections for reads; WAL lets them run alongside the single writer.
const READERS: u32 = 4;

/// The migrations, embedded at compile time: (version, description, SQL).
/// Every file in `migrations/` must be listed here (a test checks it); never edit an applied one.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "initial", include_str!("../migrations/0001_initial.sql")),
    (2, "responses", include_str!("../migrations/0002_responses.sql")),
    (3, "reasoning", include_str!("../migrations/0003_reasoning.sql")),
    (4, "tool_calls", include_str!("../migrations/0004_tool_calls.sql")),
    (5, "document_index", include_str!("../migrations/0005_document_index.sql")),
    (6, "reply_sources", include_str!("../migrations/0006_reply_sources.sql")),
    (7, "speculative_stats", include_str!("../migrations/0007_speculative_stats.sql")),
    (8, "canvases", include_str!("../migrations/0008_canvases.sql")),
    (9, "stop_reason", include_str!("../migrations/0009_stop_reason.sql")),
];

/// The history store: one SQLite file plus a folder of content-addressed attachment files.
///
/// Cheap to clone (the pools are shared). All writes go through one connection, so writers in
/// this process queue instead of failing with "database is locked"; reads use their own
/// connections and never wait for writes (WAL).
#[derive(Clone, Debug)]
pub struct Store {
    pub(crate) writer: SqlitePool,
    pub(crate) reader: SqlitePool,
    pub(crate) attachments_dir: PathBuf,
    path: PathBuf,
}

impl Store {
    /// Opens the history at `path` (an SQLite file, created with its folder if missing), brings
    /// its schema up to date, and prepares `attachments/` next to it.
    ///
    /// The file uses WAL journaling with `synchronous = NORMAL`: a crash or kill at any moment
    /// leaves a consistent database holding every committed write (a power cut may lose the
    /// last few). Call [`Store::recover_interrupted`] once at start-up, when no other process
    /// is writing replies, to mark replies cut off by a crash as `interrupted`.
    pub async fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref().to_path_buf();
        Self::open_inner(&path).await.map_err(|error| match error {
            StoreError::NotADatabase { .. } | StoreError::NewerSchema { .. } => error,
            other => StoreError::Open { path, source: Box::new(other) },
        })
    }

    async fn open_inner(path: &Path) -> Result<Store> {
        let folder = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&folder).map_err(|e| StoreError::io("create the data folder", &folder, e))?;

        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        let not_a_database = |error: sqlx::Error| {
            if is_not_a_database(&error) {
                StoreError::NotADatabase { path: path.to_path_buf() }
            } else {
                error.into()
            }
        };

        let writer = SqlitePoolOptions::new().max_connections(1).connect_with(options.clone()).await.map_err(not_a_database)?;
        migrate(&writer).await.map_err(|error| match error {
            MigrateError::VersionMissing(version) => StoreError::NewerSchema { path: path.to_path_buf(), version },
            MigrateError::Execute(e) | MigrateError::ExecuteMigration(e, _) => not_a_database(e),
            other => other.into(),
        })?;
        let reader = SqlitePoolOptions::new().max_connections(READERS).connect_with(options.create_if_missing(false)).await?;

        let attachments_dir = folder.join("attachments");
        prepare_attachments_dir(&attachments_dir)?;
        Ok(Store { writer, reader, attachments_dir, path: path.to_path_buf() })
    }

    /// The SQLite file this store was opened on.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The folder holding attachment files (`<data>/attachments`).
    pub fn attachments_dir(&self) -> &Path {
        &self.attachments_dir
    }

    /// Checks the whole store: SQLite's `integrity_check`, foreign keys, tool results' images, and
    /// the full-text index against the messages. Returns the problems found; an empty list means
    /// healthy.
    pub async fn check_integrity(&self) -> Result<Vec<String>> {
        let mut problems: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check").fetch_all(&self.writer).await?;
        problems.retain(|line| line != "ok");
        let dangling: Vec<(String, i64)> =
            sqlx::query_as("SELECT \"table\", rowid FROM pragma_foreign_key_check").fetch_all(&self.writer).await?;
        problems.extend(dangling.into_iter().map(|(table, row)| format!("{table} row {row}: dangling foreign key")));
        // Tool results name their images by hash, without a foreign key: each must have its row.
        let missing: Vec<(i64, i64, String)> = sqlx::query_as(
            "SELECT t.message_id, t.position, i.value FROM tool_calls t, json_each(t.result_images) i
             WHERE t.result_images IS NOT NULL AND NOT EXISTS (SELECT 1 FROM attachments a WHERE a.hash = i.value)",
        )
        .fetch_all(&self.writer)
        .await?;
        problems.extend(
            missing.into_iter().map(|(message, position, hash)| format!("tool call {position} of message {message}: no attachment {hash}")),
        );
        if let Err(error) = sqlx::query("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')").execute(&self.writer).await {
            problems.push(format!("full-text index: {error}"));
        }
        if let Err(error) =
            sqlx::query("INSERT INTO document_passages_fts (document_passages_fts) VALUES ('integrity-check')").execute(&self.writer).await
        {
            problems.push(format!("documents' full-text index: {error}"));
        }
        Ok(problems)
    }

    /// Closes the connections, checkpointing the WAL into the main file.
    pub async fn close(self) {
        self.reader.close().await;
        self.writer.close().await;
    }

    /// A write transaction that takes the write lock up front, so it never fails half-way
    /// with "database is locked" because another process wrote in between.
    pub(crate) async fn begin_write(&self) -> Result<Transaction<'static, Sqlite>> {
        Ok(self.writer.begin_with("BEGIN IMMEDIATE").await?)
    }
}

/// [`Store::begin_write`] on a writer connection the caller holds, to keep it after commit.
pub(crate) async fn begin_immediate(conn: &mut SqliteConnection) -> Result<Transaction<'_, Sqlite>> {
    Ok(conn.begin_with("BEGIN IMMEDIATE").await?)
}

async fn migrate(pool: &SqlitePool) -> Result<(), MigrateError> {
    Migrator::new(EmbeddedMigrations).await?.run(pool).await
}

/// Feeds the `include_str!`-embedded migrations to sqlx's migrator (which keeps its usual
/// `_sqlx_migrations` bookkeeping) without the `migrate!` proc macro and its build cost.
#[derive(Debug)]
struct EmbeddedMigrations;

impl<'s> MigrationSource<'s> for EmbeddedMigrations {
    fn resolve(self) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send + 's>> {
        let migrations = MIGRATIONS
            .iter()
            .map(|&(version, description, sql)| {
                Migration::new(version, Cow::Borrowed(description), MigrationType::Simple, Cow::Borrowed(sql), false)
            })
            .collect();
        Box::pin(std::future::ready(Ok(migrations)))
    }
}

/// Now, in Unix milliseconds (the unit of every `*_at` column).
pub(crate) fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)).unwrap_or(0)
}

/// Temporary files older than this in `attachments/tmp/` are leftovers of a crash.
const STALE_TEMP: Duration = Duration::from_secs(3600);

/// Creates the attachments folder and clears what crashed writes left in `tmp/`.
fn prepare_attachments_dir(dir: &Path) -> Result<()> {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).map_err(|e| StoreError::io("create", &tmp, e))?;
    let now = SystemTime::now();
    for entry in std::fs::read_dir(&tmp).map_err(|e| StoreError::io("read", &tmp, e))?.flatten() {
        let stale =
            entry.metadata().and_then(|m| m.modified()).is_ok_and(|modified| now.duration_since(modified).unwrap_or_default() > STALE_TEMP);
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::MIGRATIONS;

    #[test]
    fn every_migration_file_is_embedded_in_order() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".sql"))
            .collect();
        files.sort();
        assert_eq!(files.len(), MIGRATIONS.len(), "migrations/ has files not listed in MIGRATIONS");
        for (file, &(version, description, _)) in files.iter().zip(MIGRATIONS) {
            assert_eq!(file, &format!("{version:04}_{description}.sql"));
        }
    }
}
