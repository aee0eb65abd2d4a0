//! [`StoreError`]: what went wrong, worded so that a person can act on it.

use std::path::PathBuf;

use crate::ids::MessageId;

/// Every fallible store call returns this.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// An id or hash that is not (or no longer) in the store.
    #[error("{what} {id} does not exist (it may have been deleted)")]
    NotFound { what: &'static str, id: String },

    /// A value the store refuses, e.g. a message whose parent is in another conversation.
    #[error("{0}")]
    InvalidInput(String),

    /// `append_reply` or `finish_reply` on a message that is not a reply in progress.
    #[error(
        "message {id} is not a reply in progress (its status is {status}); \
         it can no longer be appended to or finished"
    )]
    NotStreaming {
        id: MessageId,
        /// `MessageStatus::as_str` (the status is the messages module's).
        status: &'static str,
    },

    /// The file exists but is not an SQLite database, or its header is damaged.
    #[error(
        "{} is not a Confab history database, or it is damaged; \
         move it aside and Confab will start a new, empty history",
        path.display()
    )]
    NotADatabase { path: PathBuf },

    /// The database has migrations this build does not know: it was written by a newer Confab.
    #[error(
        "the history database at {} was written by a newer version of Confab \
         (it has schema version {version}); update Confab to open it",
        path.display()
    )]
    NewerSchema { path: PathBuf, version: i64 },

    /// Opening the database or bringing its schema up to date failed.
    #[error("could not open the history database at {}: {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: Box<StoreError>,
    },

    #[error("could not update the schema of the history database: {0}")]
    Migrate(#[source] sqlx::migrate::MigrateError),

    #[error(
        "the history database is locked by another process (is a second Confab running?); \
         try again in a moment"
    )]
    Busy(#[source] sqlx::Error),

    #[error("the disk holding the history database is full; free some space and try again")]
    DiskFull(#[source] sqlx::Error),

    #[error(
        "the history database cannot be written (read-only file, folder or disk); \
         check the permissions of Confab's data folder"
    )]
    ReadOnly(#[source] sqlx::Error),

    #[error(
        "the history database is damaged ({0}); \
         restore a backup or move the file aside to start a new history"
    )]
    Corrupt(#[source] sqlx::Error),

    #[error("history database error: {0}")]
    Database(#[source] sqlx::Error),

    /// A file-system operation on an attachment or the data folder failed.
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A stored setting did not deserialize into the type asked for.
    #[error("setting {key:?} does not have the expected shape: {source}")]
    Setting {
        key: String,
        #[source]
        source: serde_json::Error,
    },
}

impl StoreError {
    pub(crate) fn not_found(what: &'static str, id: impl std::fmt::Display) -> Self {
        StoreError::NotFound { what, id: id.to_string() }
    }

    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        StoreError::Io { action, path: path.into(), source }
    }
}

/// SQLite's primary result codes we give their own wording (the low byte of extended codes).
const SQLITE_BUSY: i32 = 5;
const SQLITE_LOCKED: i32 = 6;
const SQLITE_READONLY: i32 = 8;
const SQLITE_CORRUPT: i32 = 11;
const SQLITE_FULL: i32 = 13;
const SQLITE_NOTADB: i32 = 26;

/// The primary SQLite result code of a database error, if it is one.
pub(crate) fn sqlite_code(error: &sqlx::Error) -> Option<i32> {
    let code = error.as_database_error()?.code()?;
    code.parse::<i32>().ok().map(|c| c & 0xff)
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        match sqlite_code(&error) {
            Some(SQLITE_BUSY | SQLITE_LOCKED) => StoreError::Busy(error),
            Some(SQLITE_FULL) => StoreError::DiskFull(error),
            Some(SQLITE_READONLY) => StoreError::ReadOnly(error),
            Some(SQLITE_CORRUPT | SQLITE_NOTADB) => StoreError::Corrupt(error),
            _ => StoreError::Database(error),
        }
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(error: sqlx::migrate::MigrateError) -> Self {
        match error {
            sqlx::migrate::MigrateError::Execute(e) => e.into(),
            other => StoreError::Migrate(other),
        }
    }
}

pub(crate) fn is_not_a_database(error: &sqlx::Error) -> bool {
    sqlite_code(error) == Some(SQLITE_NOTADB)
}
