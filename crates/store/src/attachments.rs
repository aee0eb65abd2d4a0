//! Attachments: files stored once by content (`<data>/attachments/ab/cdef…`, the SHA-256 of the
//! bytes in hex), with a metadata row per hash, linked to messages many-to-many.
//!
//! A file is written to `attachments/tmp/`, flushed to disk, then renamed into place, so a
//! file at its final path is always complete. The file is in place before its row commits, so
//! a row always has its file; a crash in between leaves at most an unreferenced file.

use std::fmt;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, Sqlite, Transaction};
use tempfile::NamedTempFile;
use ts_rs::TS;

use crate::db::{begin_immediate, now_ms, Store};
use crate::error::{Result, StoreError};
use crate::ids::MessageId;

/// The SHA-256 of an attachment's bytes, 64 lowercase hex digits. Also the encoder cache key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(try_from = "String", into = "String")]
pub struct AttachmentHash(String);

impl AttachmentHash {
    /// Accepts 64 hex digits (either case); anything else is `InvalidInput`.
    pub fn parse(text: &str) -> Result<Self> {
        if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(AttachmentHash(text.to_ascii_lowercase()))
        } else {
            Err(StoreError::InvalidInput(format!("{text:?} is not an attachment hash (64 hexadecimal digits)")))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn from_digest(digest: &[u8]) -> Self {
        AttachmentHash(digest.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// Where the file lives under the attachments folder: `ab/cdef…`.
    fn relative_path(&self) -> PathBuf {
        Path::new(&self.0[..2]).join(&self.0[2..])
    }
}

impl fmt::Display for AttachmentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for AttachmentHash {
    type Err = StoreError;
    fn from_str(text: &str) -> Result<Self> {
        Self::parse(text)
    }
}

impl TryFrom<String> for AttachmentHash {
    type Error = StoreError;
    fn try_from(text: String) -> Result<Self> {
        Self::parse(&text)
    }
}

impl From<AttachmentHash> for String {
    fn from(hash: AttachmentHash) -> String {
        hash.0
    }
}

/// What the caller knows about an attachment. The size comes from the bytes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AttachmentMeta {
    /// e.g. `image/png`, `audio/wav`; must not be empty.
    pub mime: String,
    pub original_name: Option<String>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub duration_ms: Option<u64>,
}

/// A stored attachment. When the same bytes are added twice, the first metadata is kept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct Attachment {
    pub hash: AttachmentHash,
    pub mime: String,
    pub size: u64,
    pub original_name: Option<String>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub duration_ms: Option<u64>,
    /// Unix milliseconds.
    pub created_at: i64,
}

const COLUMNS: &str = "a.hash, a.mime, a.size, a.original_name, a.width, a.height, a.duration_ms, a.created_at";

fn from_row(row: &SqliteRow) -> Result<Attachment, sqlx::Error> {
    let hash: String = row.try_get("hash")?;
    let unsigned = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok());
    Ok(Attachment {
        hash: AttachmentHash::parse(&hash).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        mime: row.try_get("mime")?,
        size: unsigned(row.try_get("size")?).unwrap_or(0),
        original_name: row.try_get("original_name")?,
        width: unsigned(row.try_get("width")?).and_then(|v| u32::try_from(v).ok()),
        height: unsigned(row.try_get("height")?).and_then(|v| u32::try_from(v).ok()),
        duration_ms: unsigned(row.try_get("duration_ms")?),
        created_at: row.try_get("created_at")?,
    })
}

impl Store {
    /// Stores `bytes` (once, however many times they are added) and returns their hash.
    pub async fn add_attachment_bytes(&self, bytes: Vec<u8>, meta: &AttachmentMeta) -> Result<AttachmentHash> {
        check_meta(meta)?;
        let dir = self.attachments_dir.clone();
        let (temp, hash, size) = blocking(&self.attachments_dir, move || {
            let mut temp = temp_file(&dir)?;
            temp.write_all(&bytes).map_err(|e| StoreError::io("write", temp.path(), e))?;
            flush(&temp)?;
            Ok((temp, AttachmentHash::from_digest(&Sha256::digest(&bytes)), bytes.len() as u64))
        })
        .await?;
        self.keep(temp, &hash, size, meta).await?;
        Ok(hash)
    }

    /// Copies the file at `path` into the store (reading it once, hashing as it copies) and
    /// returns its hash. The original is left alone.
    pub async fn add_attachment_file(&self, path: impl AsRef<Path>, meta: &AttachmentMeta) -> Result<AttachmentHash> {
        check_meta(meta)?;
        let dir = self.attachments_dir.clone();
        let source = path.as_ref().to_path_buf();
        let (temp, hash, size) = blocking(&self.attachments_dir, move || {
            let mut input = fs::File::open(&source).map_err(|e| StoreError::io("open", &source, e))?;
            let mut temp = temp_file(&dir)?;
            let mut hasher = Sha256::new();
            let mut buffer = vec![0; 1 << 16];
            let mut size = 0u64;
            loop {
                let n = match input.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(StoreError::io("read", &source, e)),
                };
                hasher.update(&buffer[..n]);
                temp.write_all(&buffer[..n]).map_err(|e| StoreError::io("write", temp.path(), e))?;
                size += n as u64;
            }
            flush(&temp)?;
            Ok((temp, AttachmentHash::from_digest(&hasher.finalize()), size))
        })
        .await?;
        self.keep(temp, &hash, size, meta).await?;
        Ok(hash)
    }

    /// Moves a flushed temporary file to the hash's path unless a file is there already, and
    /// records the row. Holding the writer connection throughout, this cannot interleave with
    /// `delete_conversation` removing the same hash's file in this process.
    async fn keep(&self, temp: NamedTempFile, hash: &AttachmentHash, size: u64, meta: &AttachmentMeta) -> Result<()> {
        let mut writer = self.writer.acquire().await?;
        let mut tx = begin_immediate(&mut writer).await?;
        let (dir, target) = (self.attachments_dir.clone(), self.attachments_dir.join(hash.relative_path()));
        blocking(&self.attachments_dir, move || {
            if target.exists() {
                return Ok(()); // same bytes; dropping `temp` deletes it
            }
            let shard = target.parent().unwrap_or(&dir);
            fs::create_dir_all(shard).map_err(|e| StoreError::io("create", shard, e))?;
            temp.persist(&target).map_err(|e| StoreError::io("move into place", &target, e.error))?;
            sync_dir(shard);
            Ok(())
        })
        .await?;
        sqlx::query(
            "INSERT INTO attachments (hash, mime, size, original_name, width, height, duration_ms, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (hash) DO NOTHING",
        )
        .bind(hash.as_str())
        .bind(&meta.mime)
        .bind(i64::try_from(size).unwrap_or(i64::MAX))
        .bind(&meta.original_name)
        .bind(meta.width.map(i64::from))
        .bind(meta.height.map(i64::from))
        .bind(meta.duration_ms.map(|d| i64::try_from(d).unwrap_or(i64::MAX)))
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn attachment(&self, hash: &AttachmentHash) -> Result<Attachment> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM attachments a WHERE a.hash = ?1"))
            .bind(hash.as_str())
            .fetch_optional(&self.reader)
            .await?
            .ok_or_else(|| StoreError::not_found("attachment", hash))?;
        Ok(from_row(&row)?)
    }

    /// The file holding the attachment's bytes (for the engine, or the UI to display).
    pub async fn attachment_path(&self, hash: &AttachmentHash) -> Result<PathBuf> {
        self.attachment(hash).await?;
        let path = self.attachments_dir.join(hash.relative_path());
        match fs::metadata(&path) {
            Ok(_) => Ok(path),
            Err(e) => Err(StoreError::io("find the attachment file", path, e)),
        }
    }

    /// Adds attachments to an existing message, after the ones it has.
    pub async fn attach(&self, message: MessageId, hashes: &[AttachmentHash]) -> Result<()> {
        let mut tx = self.begin_write().await?;
        let found: Option<i64> =
            sqlx::query_scalar("SELECT id FROM messages WHERE id = ?1").bind(message.0).fetch_optional(&mut *tx).await?;
        if found.is_none() {
            return Err(StoreError::not_found("message", message));
        }
        link(&mut tx, message, hashes).await?;
        tx.commit().await?;
        Ok(())
    }

    /// A message's attachments, in the order they were attached.
    pub async fn message_attachments(&self, message: MessageId) -> Result<Vec<Attachment>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM message_attachments l JOIN attachments a ON a.hash = l.hash
             WHERE l.message_id = ?1 ORDER BY l.position"
        ))
        .bind(message.0)
        .fetch_all(&self.reader)
        .await?;
        if rows.is_empty() {
            self.message(message).await?;
        }
        Ok(rows.iter().map(from_row).collect::<Result<_, _>>()?)
    }
}

fn check_meta(meta: &AttachmentMeta) -> Result<()> {
    if meta.mime.trim().is_empty() {
        return Err(StoreError::InvalidInput("an attachment needs a MIME type".into()));
    }
    Ok(())
}

/// Runs file work off the async threads.
async fn blocking<T: Send + 'static>(path: &Path, work: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(work).await.map_err(|e| StoreError::io("store the attachment", path, io::Error::other(e)))?
}

fn temp_file(dir: &Path) -> Result<NamedTempFile> {
    let tmp = dir.join("tmp");
    tempfile::Builder::new().suffix(".part").tempfile_in(&tmp).map_err(|e| StoreError::io("create a temporary file in", tmp, e))
}

fn flush(temp: &NamedTempFile) -> Result<()> {
    temp.as_file().sync_all().map_err(|e| StoreError::io("flush", temp.path(), e))
}

/// Makes a rename durable across power loss; best effort (not every platform allows it).
fn sync_dir(dir: &Path) {
    if let Ok(handle) = fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}

/// Inside a write: links `hashes` to `message` after its existing attachments.
pub(crate) async fn link(tx: &mut Transaction<'_, Sqlite>, message: MessageId, hashes: &[AttachmentHash]) -> Result<()> {
    if hashes.is_empty() {
        return Ok(());
    }
    let mut position: i64 = sqlx::query_scalar("SELECT coalesce(max(position) + 1, 0) FROM message_attachments WHERE message_id = ?1")
        .bind(message.0)
        .fetch_one(&mut **tx)
        .await?;
    for hash in hashes {
        let known: Option<String> =
            sqlx::query_scalar("SELECT hash FROM attachments WHERE hash = ?1").bind(hash.as_str()).fetch_optional(&mut **tx).await?;
        if known.is_none() {
            return Err(StoreError::not_found("attachment", hash));
        }
        sqlx::query("INSERT INTO message_attachments (message_id, position, hash) VALUES (?1, ?2, ?3)")
            .bind(message.0)
            .bind(position)
            .bind(hash.as_str())
            .execute(&mut **tx)
            .await?;
        position += 1;
    }
    Ok(())
}

/// Inside a write: deletes the rows of those `hashes` no message or tool result uses any more;
/// returns them.
pub(crate) async fn delete_unused_rows(tx: &mut Transaction<'_, Sqlite>, hashes: Vec<String>) -> Result<Vec<AttachmentHash>> {
    let mut deleted = Vec::new();
    for hash in hashes {
        let done = sqlx::query(
            "DELETE FROM attachments WHERE hash = ?1
             AND NOT EXISTS (SELECT 1 FROM message_attachments WHERE hash = ?1)
             AND NOT EXISTS (SELECT 1 FROM tool_calls t, json_each(t.result_images) i
                             WHERE t.result_images IS NOT NULL AND i.value = ?1)",
        )
        .bind(&hash)
        .execute(&mut **tx)
        .await?;
        if done.rows_affected() > 0 {
            if let Ok(hash) = AttachmentHash::parse(&hash) {
                deleted.push(hash);
            }
        }
    }
    Ok(deleted)
}

/// Deletes the files of attachments whose rows are gone. Best effort: a file left behind
/// (e.g. one open elsewhere on Windows) costs only disk space.
pub(crate) fn remove_files(dir: &Path, hashes: &[AttachmentHash]) {
    for hash in hashes {
        let _ = fs::remove_file(dir.join(hash.relative_path()));
    }
}
