//! The Hugging Face cache layout, so that mlx-lm, transformers and Confab share downloads (the
//! cache folder itself is the caller's: `confab_paths::AppPaths::hf_hub_cache`):
//!
//! ```text
//! <cache>/models--owner--name/
//!   blobs/<sha256 or git sha1>               the bytes, named by their checksum
//!   blobs/<...>.incomplete                   a download in progress (resumed from its length)
//!   snapshots/<commit>/<file> -> ../../blobs/<...>
//!   refs/main                                the commit `main` pointed at
//! <cache>/.locks/models--owner--name/<...>.lock  held while that blob downloads (lock.rs)
//! ```

use std::path::{Path, PathBuf};

use crate::error::{HubError, Result};

/// One repository's folder in the cache.
#[derive(Debug, Clone)]
pub struct RepoCache {
    pub root: PathBuf,
}

impl RepoCache {
    pub fn new(cache_dir: &Path, repo: &str) -> Self {
        RepoCache { root: cache_dir.join(format!("models--{}", repo.replace('/', "--"))) }
    }

    pub fn blob(&self, checksum: &str) -> PathBuf {
        self.root.join("blobs").join(checksum)
    }

    pub fn incomplete(&self, checksum: &str) -> PathBuf {
        self.root.join("blobs").join(format!("{checksum}.incomplete"))
    }

    /// The lock a download of blob `checksum` holds: where huggingface_hub puts it
    /// (`<cache>/.locks/<repo folder>/<checksum>.lock`), so that its downloads and ours wait for
    /// each other.
    pub fn download_lock(&self, checksum: &str) -> PathBuf {
        let cache_dir = self.root.parent().unwrap_or(&self.root);
        let folder = self.root.file_name().unwrap_or_default();
        cache_dir.join(".locks").join(folder).join(format!("{checksum}.lock"))
    }

    /// Removes the partial files (`blobs/*.incomplete`) of downloads that are not running:
    /// one whose lock another pull holds (another window's, `confab pull`) is left to it.
    /// Returns how many were removed.
    pub fn remove_partials(&self) -> usize {
        let Ok(entries) = std::fs::read_dir(self.root.join("blobs")) else { return 0 };
        let mut removed = 0;
        for path in entries.flatten().map(|e| e.path()) {
            let Some(checksum) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".incomplete")) else {
                continue;
            };
            match crate::lock::try_acquire(&self.download_lock(checksum)) {
                // Held while the file goes, so no pull starts on it meanwhile.
                Ok(Some(_lock)) => {
                    if std::fs::remove_file(&path).is_ok() {
                        removed += 1;
                    }
                }
                Ok(None) => tracing::info!(partial = %path.display(), "another download is writing it; kept"),
                Err(e) => tracing::warn!(partial = %path.display(), "not removed: {e}"),
            }
        }
        removed
    }

    pub fn snapshot(&self, commit: &str) -> PathBuf {
        self.root.join("snapshots").join(commit)
    }

    /// Points `snapshots/<commit>/<file>` at its blob (a relative link, as huggingface_hub
    /// makes it; a copy where links are not available).
    pub fn link(&self, commit: &str, file: &str, checksum: &str) -> Result<PathBuf> {
        let target = self.snapshot(commit).join(file);
        let parent = target.parent().unwrap_or(&self.root).to_path_buf();
        std::fs::create_dir_all(&parent).map_err(|e| HubError::io(&parent, e))?;
        let _ = std::fs::remove_file(&target);
        let up = "../".repeat(2 + file.matches('/').count());
        let relative = PathBuf::from(format!("{up}blobs/{checksum}"));
        #[cfg(unix)]
        if let Err(e) = std::os::unix::fs::symlink(&relative, &target) {
            // Another pull of the same snapshot linked it between the removal and here.
            if !std::fs::read_link(&target).is_ok_and(|existing| existing == relative) {
                return Err(HubError::io(&target, e));
            }
        }
        #[cfg(not(unix))]
        std::fs::copy(self.blob(checksum), &target).map_err(|e| HubError::io(&target, e))?;
        Ok(target)
    }

    /// Written when every file of the snapshot is in place; through a temporary file renamed
    /// over it, so a pull killed while writing leaves the old ref or the new, never an empty one.
    pub fn write_ref(&self, revision: &str, commit: &str) -> Result<()> {
        let path = self.root.join("refs").join(revision);
        std::fs::create_dir_all(path.parent().unwrap_or(&self.root)).map_err(|e| HubError::io(&path, e))?;
        let temporary = path.with_file_name(format!(".ref.{}.tmp", std::process::id()));
        let written = std::fs::write(&temporary, commit).and_then(|()| std::fs::rename(&temporary, &path));
        written.map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            HubError::io(&path, e)
        })
    }
}

/// Free bytes for an unprivileged writer on the file system holding `dir` (or its nearest
/// existing ancestor); `None` where it cannot be told.
pub fn free_space(dir: &Path) -> Option<u64> {
    let existing = dir.ancestors().find(|p| p.exists())?;
    statvfs_available(existing)
}

#[cfg(unix)]
fn statvfs_available(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut stats = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: a valid NUL-terminated path and a pointer to writable memory of the right type;
    // the struct is read only when the call succeeds.
    let stats = unsafe {
        if libc::statvfs(c_path.as_ptr(), stats.as_mut_ptr()) != 0 {
            return None;
        }
        stats.assume_init()
    };
    #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
    Some(stats.f_bavail as u64 * stats.f_frsize as u64)
}

#[cfg(not(unix))]
fn statvfs_available(_: &Path) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ref_is_replaced_whole_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let repo = RepoCache::new(dir.path(), "owner/name");
        repo.write_ref("main", "c0ffee").unwrap();
        repo.write_ref("main", "beef").unwrap();
        assert_eq!(std::fs::read_to_string(repo.root.join("refs/main")).unwrap(), "beef");
        let names: Vec<_> = std::fs::read_dir(repo.root.join("refs")).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, ["main"]);
    }

    #[test]
    fn layout_matches_huggingface_hub() {
        let dir = tempfile::tempdir().unwrap();
        let repo = RepoCache::new(dir.path(), "owner/name");
        assert!(repo.root.ends_with("models--owner--name"));
        std::fs::create_dir_all(repo.blob("abc").parent().unwrap()).unwrap();
        std::fs::write(repo.blob("abc"), b"x").unwrap();
        let linked = repo.link("c0ffee", "sub/file.json", "abc").unwrap();
        assert_eq!(std::fs::read_link(&linked).unwrap(), Path::new("../../../blobs/abc"));
        assert_eq!(std::fs::read(&linked).unwrap(), b"x");
        repo.write_ref("main", "c0ffee").unwrap();
        assert_eq!(std::fs::read_to_string(repo.root.join("refs/main")).unwrap(), "c0ffee");
        assert!(free_space(&dir.path().join("not/yet")).is_some_and(|n| n > 0));
        // Another pull linking the same file at the same moment is not an error.
        std::fs::remove_file(&linked).unwrap();
        std::os::unix::fs::symlink("../../../blobs/abc", &linked).unwrap();
        assert_eq!(repo.link("c0ffee", "sub/file.json", "abc").unwrap(), linked);
    }

    #[test]
    fn removing_partials_leaves_one_another_pull_is_writing() {
        let dir = tempfile::tempdir().unwrap();
        let repo = RepoCache::new(dir.path(), "owner/name");
        std::fs::create_dir_all(repo.root.join("blobs")).unwrap();
        for checksum in ["idle", "busy"] {
            std::fs::write(repo.incomplete(checksum), b"part").unwrap();
        }
        std::fs::write(repo.blob("done"), b"whole").unwrap();
        let _writing = crate::lock::try_acquire(&repo.download_lock("busy")).unwrap().expect("free");
        assert_eq!(repo.remove_partials(), 1);
        assert!(!repo.incomplete("idle").exists());
        assert!(repo.incomplete("busy").exists(), "its pull is still writing it");
        assert!(repo.blob("done").exists(), "finished files stay");
    }
}
