//! Where a media item's bytes are: a file, or bytes already in memory (an image the server
//! received as base64). Every probe and decoder reads through a `MediaSource`, so bytes in
//! memory are read where they are and never written to a file first.

use std::fs::File;
use std::io::{Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{MediaError, MediaProblem, Result};
use crate::MediaLimits;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MediaSource {
    /// A file, opened each time it is read (an item is read to be measured, then to be encoded).
    Path(PathBuf),
    /// Bytes in memory, shared without copying. `name` stands in for a file name: errors show
    /// it, and its extension helps guess an audio container as a file's does.
    Bytes { name: String, bytes: Arc<[u8]> },
}

impl MediaSource {
    pub fn bytes(name: impl Into<String>, bytes: impl Into<Arc<[u8]>>) -> Self {
        MediaSource::Bytes { name: name.into(), bytes: bytes.into() }
    }

    /// The name errors and plans show: a file's name (not its whole path), or the given name.
    pub fn name(&self) -> String {
        match self {
            MediaSource::Path(path) => super::display_name(path),
            MediaSource::Bytes { name, .. } => name.clone(),
        }
    }

    /// The file, when the source is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            MediaSource::Path(path) => Some(path),
            MediaSource::Bytes { .. } => None,
        }
    }

    /// The SHA-256 of the bytes (`content_hash`): a file and the same bytes in memory are the
    /// same item to the store and the caches.
    pub fn content_hash(&self) -> Result<String> {
        match self {
            MediaSource::Path(path) => super::hash_file(path),
            MediaSource::Bytes { bytes, .. } => Ok(super::content_hash(bytes)),
        }
    }

    /// The size in bytes, without reading them.
    pub(crate) fn len(&self, file: &str) -> Result<u64> {
        match self {
            MediaSource::Path(path) => Ok(std::fs::metadata(path).map_err(|e| unreadable(file, e))?.len()),
            MediaSource::Bytes { bytes, .. } => Ok(bytes.len() as u64),
        }
    }

    /// A reader from the first byte.
    pub(crate) fn open(&self, file: &str) -> Result<SourceReader> {
        match self {
            MediaSource::Path(path) => Ok(SourceReader::File(File::open(path).map_err(|e| unreadable(file, e))?)),
            MediaSource::Bytes { bytes, .. } => Ok(SourceReader::Memory(Cursor::new(bytes.clone()))),
        }
    }

    /// All the bytes, after checking their size against the limit (a file is not read when it
    /// is too big).
    pub(crate) fn read(&self, file: &str, limits: &MediaLimits) -> Result<Arc<[u8]>> {
        limits.check_bytes(file, self.len(file)?)?;
        match self {
            MediaSource::Path(path) => Ok(std::fs::read(path).map_err(|e| unreadable(file, e))?.into()),
            MediaSource::Bytes { bytes, .. } => Ok(bytes.clone()),
        }
    }
}

impl From<PathBuf> for MediaSource {
    fn from(path: PathBuf) -> Self {
        MediaSource::Path(path)
    }
}

impl From<&PathBuf> for MediaSource {
    fn from(path: &PathBuf) -> Self {
        MediaSource::Path(path.clone())
    }
}

impl From<&Path> for MediaSource {
    fn from(path: &Path) -> Self {
        MediaSource::Path(path.to_path_buf())
    }
}

impl From<&MediaSource> for MediaSource {
    fn from(source: &MediaSource) -> Self {
        source.clone()
    }
}

/// What the probes and decoders take: a file's path (`&Path`, `&PathBuf`) or a `&MediaSource`.
pub trait ToMediaSource {
    fn to_media_source(&self) -> MediaSource;
}

impl ToMediaSource for MediaSource {
    fn to_media_source(&self) -> MediaSource {
        self.clone()
    }
}

impl ToMediaSource for Path {
    fn to_media_source(&self) -> MediaSource {
        MediaSource::Path(self.to_path_buf())
    }
}

impl ToMediaSource for PathBuf {
    fn to_media_source(&self) -> MediaSource {
        MediaSource::Path(self.clone())
    }
}

impl<T: ToMediaSource + ?Sized> ToMediaSource for &T {
    fn to_media_source(&self) -> MediaSource {
        (**self).to_media_source()
    }
}

/// A reader over a source: the file, or a cursor over the shared bytes.
pub(crate) enum SourceReader {
    File(File),
    Memory(Cursor<Arc<[u8]>>),
}

impl Read for SourceReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            SourceReader::File(file) => file.read(buf),
            SourceReader::Memory(cursor) => cursor.read(buf),
        }
    }
}

impl Seek for SourceReader {
    fn seek(&mut self, position: SeekFrom) -> std::io::Result<u64> {
        match self {
            SourceReader::File(file) => file.seek(position),
            SourceReader::Memory(cursor) => cursor.seek(position),
        }
    }
}

impl symphonia::core::io::MediaSource for SourceReader {
    fn is_seekable(&self) -> bool {
        true
    }

    fn byte_len(&self) -> Option<u64> {
        match self {
            SourceReader::File(file) => file.metadata().ok().map(|m| m.len()),
            SourceReader::Memory(cursor) => Some(cursor.get_ref().len() as u64),
        }
    }
}

pub(crate) fn unreadable(file: &str, error: std::io::Error) -> MediaError {
    MediaError::media(file, MediaProblem::Unreadable { detail: error.to_string() })
}
