//! A log file that rotates by size: past `MAX_BYTES` the current file becomes `.1` (the
//! older ones shift up to `.KEPT`) and a new one starts, so the folder never outgrows
//! about `MAX_BYTES × (KEPT + 1)`.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tracing_subscriber::fmt::MakeWriter;

use crate::log_path;

#[derive(Clone)]
pub struct RotatingFile {
    inner: Arc<Mutex<Current>>,
}

struct Current {
    dir: PathBuf,
    file: File,
    bytes: u64,
}

impl RotatingFile {
    pub const MAX_BYTES: u64 = 5 * 1024 * 1024;
    pub const KEPT: u32 = 3;

    /// Opens (creating the folder and file) for appending.
    pub fn open(dir: &Path) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let file = OpenOptions::new().create(true).append(true).open(log_path(dir))?;
        let bytes = file.metadata()?.len();
        Ok(Self { inner: Arc::new(Mutex::new(Current { dir: dir.to_path_buf(), file, bytes })) })
    }
}

impl Current {
    fn rotate(&mut self) -> io::Result<()> {
        for n in (1..RotatingFile::KEPT).rev() {
            let _ = std::fs::rename(rotated(&self.dir, n), rotated(&self.dir, n + 1));
        }
        std::fs::rename(log_path(&self.dir), rotated(&self.dir, 1))?;
        self.file = OpenOptions::new().create(true).append(true).open(log_path(&self.dir))?;
        self.bytes = 0;
        Ok(())
    }
}

/// The `n`th older file.
pub(crate) fn rotated(dir: &Path, n: u32) -> PathBuf {
    dir.join(format!("{}.{n}", crate::LOG_FILE))
}

/// One event's lines, written whole when dropped.
pub struct Line {
    inner: Arc<Mutex<Current>>,
    buffer: Vec<u8>,
}

impl Write for Line {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        let Ok(mut current) = self.inner.lock() else { return };
        if current.bytes + self.buffer.len() as u64 > RotatingFile::MAX_BYTES && current.bytes > 0 {
            // Logging must never take the app down: a failed rotation keeps appending.
            let _ = current.rotate();
        }
        if current.file.write_all(&self.buffer).is_ok() {
            current.bytes += self.buffer.len() as u64;
        }
    }
}

impl<'a> MakeWriter<'a> for RotatingFile {
    type Writer = Line;

    fn make_writer(&'a self) -> Line {
        Line { inner: self.inner.clone(), buffer: Vec::with_capacity(256) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_past_the_limit_and_keeps_a_bounded_number() {
        let dir = tempfile::tempdir().unwrap();
        let file = RotatingFile::open(dir.path()).unwrap();
        let line = vec![b'x'; (RotatingFile::MAX_BYTES / 2 + 1) as usize];
        for _ in 0..12 {
            let mut w = file.make_writer();
            w.write_all(&line).unwrap();
        }
        for n in 1..=RotatingFile::KEPT {
            assert!(rotated(dir.path(), n).exists(), "{n}");
        }
        assert!(!rotated(dir.path(), RotatingFile::KEPT + 1).exists());
        assert!(log_path(dir.path()).metadata().unwrap().len() <= RotatingFile::MAX_BYTES);
    }
}
