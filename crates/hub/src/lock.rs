//! One download of a file at a time, across processes: the app's download and `confab pull`
//! (or two terminals) would otherwise append to the same `.incomplete` file and both fail its
//! checksum. A pull takes the file's lock before it writes; a second one waits, then finds the
//! blob complete and only links it.
//!
//! The lock is `<cache>/.locks/models--owner--name/<checksum>.lock`, the file huggingface_hub
//! locks (with the same `flock`) for the same blob, so its downloads and ours wait for each
//! other too. It is an OS file lock: it ends when the holder closes the file, exits or is
//! killed, so a crashed pull never blocks the next one. The lock files stay (removing one while
//! another process waits on it would let a third lock a new file of the same name).

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::error::{HubError, Result};

/// How often a waiting pull tries the lock again (and reports how far the other one got).
pub const WAIT_POLL: Duration = Duration::from_millis(100);

/// A file's download lock, held until dropped.
#[derive(Debug)]
pub struct DownloadLock {
    /// `None` where the file system has no locks (some network mounts): the pull goes on
    /// without one, as huggingface_hub does.
    _file: Option<File>,
}

/// Takes the lock at `path`. While another process (or another pull in this one) holds it,
/// calls `waiting` every [`WAIT_POLL`] and tries again; `cancel` ends the wait with
/// [`HubError::Cancelled`].
pub async fn acquire(path: &Path, cancel: &AtomicBool, mut waiting: impl FnMut()) -> Result<DownloadLock> {
    let file = open(path)?;
    let mut waited = false;
    loop {
        match attempt(path, &file)? {
            Attempt::Held => {}
            taken => {
                if waited {
                    tracing::info!(lock = %path.display(), "the other download finished; going on");
                }
                return Ok(DownloadLock::new(file, taken));
            }
        }
        if cancel.load(Ordering::Relaxed) {
            return Err(HubError::Cancelled);
        }
        if !waited {
            tracing::info!(lock = %path.display(), "another download of this file is running; waiting for it");
            waited = true;
        }
        waiting();
        tokio::time::sleep(WAIT_POLL).await;
    }
}

/// Takes the lock at `path` if it is free now; `None` while someone else holds it.
pub fn try_acquire(path: &Path) -> Result<Option<DownloadLock>> {
    let file = open(path)?;
    Ok(match attempt(path, &file)? {
        Attempt::Held => None,
        taken => Some(DownloadLock::new(file, taken)),
    })
}

impl DownloadLock {
    fn new(file: File, attempt: Attempt) -> DownloadLock {
        DownloadLock { _file: (attempt == Attempt::Taken).then_some(file) }
    }
}

#[derive(PartialEq)]
enum Attempt {
    Taken,
    Held,
    /// The file system has no locks.
    Unsupported,
}

fn open(path: &Path) -> Result<File> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| HubError::io(parent, e))?;
    }
    OpenOptions::new().create(true).truncate(false).write(true).open(path).map_err(|e| HubError::io(path, e))
}

fn attempt(path: &Path, file: &File) -> Result<Attempt> {
    match file.try_lock() {
        Ok(()) => Ok(Attempt::Taken),
        Err(TryLockError::WouldBlock) => Ok(Attempt::Held),
        // ENOLCK: an NFS mount without a lock daemon.
        Err(TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported || e.raw_os_error() == Some(libc::ENOLCK) => {
            tracing::warn!(lock = %path.display(), "this file system has no file locks; going on without one ({e})");
            Ok(Attempt::Unsupported)
        }
        Err(TryLockError::Error(e)) => Err(HubError::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};
    use std::sync::Arc;
    use std::time::Instant;

    use super::*;
    use crate::cache::RepoCache;

    #[tokio::test]
    async fn a_second_taker_waits_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = RepoCache::new(dir.path(), "o/n").download_lock("abc");
        assert_eq!(path, dir.path().join(".locks/models--o--n/abc.lock"));
        let cancel = Arc::new(AtomicBool::new(false));
        let first = acquire(&path, &cancel, || panic!("nobody holds it yet")).await.unwrap();
        assert!(try_acquire(&path).unwrap().is_none(), "held");

        // A separate open file, as another process has: flock conflicts between them.
        let (path2, cancel2) = (path.clone(), cancel.clone());
        let second = tokio::spawn(async move {
            let mut waits = 0u32;
            let lock = acquire(&path2, &cancel2, || waits += 1).await;
            (lock, waits)
        });
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!second.is_finished(), "took a lock that is held");
        drop(first);
        let (lock, waits) = tokio::time::timeout(Duration::from_secs(10), second).await.expect("taken once free").unwrap();
        assert!(lock.is_ok());
        // 500 ms at one try per 100 ms; at least 2 so that a slow machine still passes.
        assert!(waits >= 2, "reported waiting {waits} times");
        assert!(path.exists(), "the lock file stays");
    }

    #[tokio::test]
    async fn a_wait_ends_when_cancelled() {
        let dir = tempfile::tempdir().unwrap();
        let path = RepoCache::new(dir.path(), "o/n").download_lock("abc");
        let cancel = AtomicBool::new(false);
        let _held = acquire(&path, &cancel, || {}).await.unwrap();
        let started = Instant::now();
        let waiting = acquire(&path, &cancel, || cancel.store(true, Ordering::Relaxed)).await;
        assert!(matches!(waiting, Err(HubError::Cancelled)), "{waiting:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    /// A holder killed with SIGKILL runs no clean-up: the OS ends its lock. The holder is
    /// Python's `fcntl.flock`, what huggingface_hub's filelock uses, on the path it uses.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_lock_of_a_killed_process_is_free_and_huggingface_hub_s_lock_is_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = RepoCache::new(dir.path(), "o/n").download_lock("abc");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let holder = "import fcntl, sys, time\n\
                      f = open(sys.argv[1], 'a')\n\
                      fcntl.flock(f, fcntl.LOCK_EX)\n\
                      print('held', flush=True)\n\
                      time.sleep(60)\n";
        let mut child = Command::new("python3").args(["-c", holder]).arg(&path).stdout(Stdio::piped()).spawn().expect("python3 runs");
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.as_mut().unwrap()), &mut line).unwrap();
        assert_eq!(line.trim(), "held");
        assert!(try_acquire(&path).unwrap().is_none(), "Python's flock and ours are the same lock");

        let cancel = AtomicBool::new(false);
        let mut waits = 0u32;
        let waiting = acquire(&path, &cancel, || {
            waits += 1;
            if waits == 3 {
                // SIGKILL: no atexit, no unlock.
                child.kill().unwrap();
            }
        });
        let lock = tokio::time::timeout(Duration::from_secs(10), waiting).await.expect("free once the holder is dead");
        assert!(lock.is_ok());
        assert!(waits >= 3);
        let _ = child.wait();
    }
}
