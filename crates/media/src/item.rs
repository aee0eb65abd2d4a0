//! A media item attached to a chat message: what kind it is, where its bytes are (a file, or
//! bytes in memory), and its content hash (the identity the store, the prefix cache and the
//! encoder cache share).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;

use super::{MediaKind, MediaSource};
use crate::error::Result;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "ItemFields", try_from = "ItemFields")]
pub struct MediaItem {
    pub kind: MediaKind,
    pub source: MediaSource,
    /// SHA-256 of the bytes (`media::content_hash`). The app knows it already (its attachments
    /// are stored under it); when absent the engine hashes the source.
    pub hash: Option<String>,
}

impl MediaItem {
    pub fn image(path: impl Into<PathBuf>) -> Self {
        Self::new(MediaKind::Image, MediaSource::Path(path.into()))
    }

    pub fn audio(path: impl Into<PathBuf>) -> Self {
        Self::new(MediaKind::Audio, MediaSource::Path(path.into()))
    }

    pub fn video(path: impl Into<PathBuf>) -> Self {
        Self::new(MediaKind::Video, MediaSource::Path(path.into()))
    }

    pub fn new(kind: MediaKind, source: MediaSource) -> Self {
        Self { kind, source, hash: None }
    }

    /// An item whose bytes are in memory (a request's base64, say). `name` stands in for a file
    /// name in errors, and its extension hints at the format as a file's would.
    pub fn from_bytes(kind: MediaKind, name: impl Into<String>, bytes: impl Into<Arc<[u8]>>) -> Self {
        Self::new(kind, MediaSource::bytes(name, bytes))
    }

    pub fn with_hash(mut self, hash: impl Into<String>) -> Self {
        self.hash = Some(hash.into());
        self
    }

    /// The given hash, or the source's (a file read in full; bytes hashed where they are).
    pub fn content_hash(&self) -> Result<String> {
        match &self.hash {
            Some(hash) => Ok(hash.clone()),
            None => self.source.content_hash(),
        }
    }

    /// The file's name (or the name given with the bytes), as errors and plans show it.
    pub fn file_name(&self) -> String {
        self.source.name()
    }

    /// The file, when the item is one.
    pub fn path(&self) -> Option<&Path> {
        self.source.path()
    }
}

/// A media item as JSON: `{"kind", "path", "hash"}` for a file, as before bytes were possible;
/// `{"kind", "name", "data", "hash"}` with the bytes in base64 for bytes in memory.
#[derive(serde::Serialize, serde::Deserialize)]
struct ItemFields {
    kind: MediaKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hash: Option<String>,
}

impl From<MediaItem> for ItemFields {
    fn from(item: MediaItem) -> Self {
        let (path, name, data) = match item.source {
            MediaSource::Path(path) => (Some(path), None, None),
            MediaSource::Bytes { name, bytes } => (None, Some(name), Some(base64::engine::general_purpose::STANDARD.encode(&bytes))),
        };
        ItemFields { kind: item.kind, path, name, data, hash: item.hash }
    }
}

impl TryFrom<ItemFields> for MediaItem {
    type Error = String;

    fn try_from(fields: ItemFields) -> std::result::Result<Self, String> {
        let source = match (fields.path, fields.data) {
            (Some(path), None) => MediaSource::Path(path),
            (None, Some(data)) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .map_err(|e| format!("a media item's data is not valid base64 ({e})"))?;
                MediaSource::bytes(fields.name.unwrap_or_default(), bytes)
            }
            _ => return Err("a media item needs either a path or its data".into()),
        };
        Ok(MediaItem { kind: fields.kind, source, hash: fields.hash })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_keep_their_json_shape_and_bytes_come_back_whole() {
        let file = MediaItem::image("/store/ab/cdef").with_hash("abcdef");
        let json = serde_json::to_value(&file).unwrap();
        assert_eq!(json, serde_json::json!({ "kind": "image", "path": "/store/ab/cdef", "hash": "abcdef" }));
        assert_eq!(serde_json::from_value::<MediaItem>(json).unwrap(), file);

        let bytes = MediaItem::from_bytes(MediaKind::Audio, "audio.wav", vec![0u8, 1, 2, 255]);
        let json = serde_json::to_value(&bytes).unwrap();
        assert_eq!(json, serde_json::json!({ "kind": "audio", "name": "audio.wav", "data": "AAEC/w==" }));
        assert_eq!(serde_json::from_value::<MediaItem>(json).unwrap(), bytes);

        assert!(serde_json::from_value::<MediaItem>(serde_json::json!({ "kind": "image" })).is_err());
    }

    #[test]
    fn bytes_are_named_and_hashed_as_the_file_they_came_from() {
        let bytes = MediaItem::from_bytes(MediaKind::Image, "image.png", b"abc".to_vec());
        assert_eq!(bytes.file_name(), "image.png");
        assert_eq!(bytes.path(), None);
        assert_eq!(bytes.content_hash().unwrap(), crate::content_hash(b"abc"));
        let file = MediaItem::image("/somewhere/photo.jpg");
        assert_eq!(file.file_name(), "photo.jpg");
        assert_eq!(file.path(), Some(Path::new("/somewhere/photo.jpg")));
    }
}
