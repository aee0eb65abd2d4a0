//! A media item attached to a chat message: what kind it is, where the file is, and its
//! content hash (the identity the store, the prefix cache and the encoder cache share).

use std::path::{Path, PathBuf};

use super::MediaKind;
use crate::error::Result;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MediaItem {
    pub kind: MediaKind,
    pub path: PathBuf,
    /// SHA-256 of the file's bytes (`media::content_hash`). The app knows it already (its
    /// attachments are stored under it); when absent the engine hashes the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

impl MediaItem {
    pub fn image(path: impl Into<PathBuf>) -> Self {
        Self { kind: MediaKind::Image, path: path.into(), hash: None }
    }

    pub fn audio(path: impl Into<PathBuf>) -> Self {
        Self { kind: MediaKind::Audio, path: path.into(), hash: None }
    }

    pub fn video(path: impl Into<PathBuf>) -> Self {
        Self { kind: MediaKind::Video, path: path.into(), hash: None }
    }

    pub fn with_hash(mut self, hash: impl Into<String>) -> Self {
        self.hash = Some(hash.into());
        self
    }

    /// The given hash, or the file's (read in full).
    pub fn content_hash(&self) -> Result<String> {
        match &self.hash {
            Some(hash) => Ok(hash.clone()),
            None => super::hash_file(&self.path),
        }
    }

    /// The file's name, as errors and plans show it.
    pub fn file_name(&self) -> String {
        super::display_name(Path::new(&self.path))
    }
}
