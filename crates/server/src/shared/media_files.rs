//! Where a request's images and clips are written for the engine to read, and their removal
//! when the request ends.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::{ApiError, ServerError};

/// Where requests' media files are written while they run.
pub struct MediaFolder {
    dir: PathBuf,
    next: AtomicU64,
}

impl MediaFolder {
    pub fn create(dir: PathBuf) -> Result<Self, ServerError> {
        std::fs::create_dir_all(&dir).map_err(|source| ServerError::MediaFolder { path: dir.display().to_string(), source })?;
        Ok(Self { dir, next: AtomicU64::new(1) })
    }

    /// Writes one item's bytes under a name no other request uses.
    pub(crate) fn write(&self, bytes: &[u8], extension: &str, files: &mut RequestFiles) -> Result<PathBuf, ApiError> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!("{}-{n}.{extension}", std::process::id()));
        std::fs::write(&path, bytes).map_err(|e| ApiError::from(confab_engine::EngineError::io(&path, e)))?;
        files.0.push(path.clone());
        Ok(path)
    }
}

/// The media files one request wrote; they go when it ends (the encoder cache keys tower
/// outputs by content, so a repeated image still hits it).
#[derive(Default)]
pub struct RequestFiles(pub(crate) Vec<PathBuf>);

impl Drop for RequestFiles {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}
