//! Downloading a model: which files, whether Confab runs it, whether it fits the disk, then
//! each file resumed from its partial, verified, and linked into the cache's snapshot. A file
//! another pull is downloading (another process's too) is waited for, not fetched again.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use sha1::Sha1;
use sha2::{Digest, Sha256};

use crate::api::{error_chain, Checksum, HubClient, RepoFile, RepoInfo};
use crate::cache::{free_space, RepoCache};
use crate::error::{HubError, Result};
use crate::lock;

/// Drops in a row (without a byte of progress between them) before a download gives up.
const MAX_DROPS_IN_A_ROW: u32 = 5;
/// Room left free beyond the download itself.
const DISK_MARGIN: u64 = 64 << 20;

/// What to pull and how.
pub struct PullOptions {
    /// The Hugging Face cache folder.
    pub cache_dir: PathBuf,
    pub revision: String,
    /// Only these files (plus, for a Hugging Face folder, config.json); all the model's
    /// files when empty.
    pub files: Vec<String>,
    /// Whether the engine runs the model a config.json describes (the engine's `runs_here`).
    pub supported: Box<dyn Fn(&serde_json::Value) -> bool + Send + Sync>,
    /// Whether the engine reads GGUF files of a `general.architecture`.
    pub supported_gguf: Box<dyn Fn(&str) -> bool + Send + Sync>,
    /// The engine's list of what it runs, for the error.
    pub supported_list: String,
    /// Set to stop: the partial file is kept for a later resume.
    pub cancel: Arc<AtomicBool>,
    /// First wait after a drop; doubled for each drop in a row.
    pub retry_delay: Duration,
}

impl PullOptions {
    pub fn new(
        cache_dir: PathBuf,
        supported: impl Fn(&serde_json::Value) -> bool + Send + Sync + 'static,
        supported_gguf: impl Fn(&str) -> bool + Send + Sync + 'static,
        supported_list: String,
    ) -> Self {
        PullOptions {
            cache_dir,
            revision: "main".into(),
            files: vec![],
            supported: Box::new(supported),
            supported_gguf: Box::new(supported_gguf),
            supported_list,
            cancel: Arc::new(AtomicBool::new(false)),
            retry_delay: Duration::from_millis(500),
        }
    }
}

/// Where a pull stands, for a progress bar.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Progress {
    pub file: String,
    pub file_bytes: u64,
    pub file_size: u64,
    /// All the pull's files together.
    pub bytes: u64,
    pub total: u64,
    /// Another pull (the app's, `confab pull`'s, another process's) is downloading this file:
    /// this one waits for it to finish, then uses its file. `file_bytes` is how far that one got.
    pub waiting: bool,
}

/// What a finished pull gives.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Pulled {
    pub repo: String,
    pub commit: String,
    /// The snapshot folder, or the GGUF file inside it for a GGUF pull: what the engine loads.
    pub model_path: PathBuf,
    pub files: Vec<String>,
    pub bytes: u64,
}

/// Downloads `repo` into the cache. Files already complete are not fetched again; partial
/// ones resume where they stopped.
pub async fn pull(client: &HubClient, repo: &str, options: &PullOptions, mut progress: impl FnMut(&Progress) + Send) -> Result<Pulled> {
    let info = client.model_info(repo).await?;
    let commit = info.sha.clone().unwrap_or_else(|| options.revision.clone());
    let files = choose_files(repo, &info, &options.files)?;
    let cache = RepoCache::new(&options.cache_dir, repo);

    // config.json first: what it says decides whether the weights are worth fetching.
    let total: u64 = files.iter().map(|f| f.size()).sum();
    let mut done = 0u64;
    let mut send = |file: &RepoFile, file_bytes: u64, waiting: bool, before: u64| {
        progress(&Progress { file: file.name.clone(), file_bytes, file_size: file.size(), bytes: before + file_bytes, total, waiting })
    };
    if let Some(config) = files.iter().find(|f| f.name == "config.json") {
        let path =
            fetch_file(client, repo, &options.revision, &commit, config, &cache, options, &mut |n, waiting| send(config, n, waiting, done))
                .await?;
        done += config.size();
        check_architecture(repo, &path, options)?;
    } else if let Some(architecture) = info.gguf.as_ref().and_then(|g| g.get("architecture")).and_then(|a| a.as_str()) {
        if !(options.supported_gguf)(architecture) {
            return Err(unsupported(repo, architecture, options));
        }
    }

    let remaining: u64 = files.iter().filter(|f| f.name != "config.json").map(|f| still_to_fetch(&cache, f)).sum();
    if let Some(available) = free_space(&cache.root) {
        if remaining + DISK_MARGIN > available {
            return Err(HubError::DiskSpace { dir: cache.root.clone(), needed: remaining, available });
        }
    }

    for file in files.iter().filter(|f| f.name != "config.json") {
        fetch_file(client, repo, &options.revision, &commit, file, &cache, options, &mut |n, waiting| send(file, n, waiting, done)).await?;
        done += file.size();
    }
    cache.write_ref(&options.revision, &commit)?;

    let snapshot = cache.snapshot(&commit);
    let ggufs: Vec<&RepoFile> = files.iter().filter(|f| f.name.ends_with(".gguf")).collect();
    let model_path = match ggufs.as_slice() {
        [one] if !files.iter().any(|f| f.name.ends_with(".safetensors")) => snapshot.join(&one.name),
        _ => snapshot,
    };
    tracing::info!(repo, commit, bytes = total, "pulled");
    Ok(Pulled { repo: repo.into(), commit, model_path, files: files.iter().map(|f| f.name.clone()).collect(), bytes: total })
}

/// The files a model needs: a Hugging Face folder's config, weights, tokenizer and templates
/// (top level only: `original/` and the like hold other formats), or one GGUF file.
pub fn choose_files(repo: &str, info: &RepoInfo, wanted: &[String]) -> Result<Vec<RepoFile>> {
    if !wanted.is_empty() {
        let mut chosen = vec![];
        for name in wanted {
            let file = info.file(name).ok_or_else(|| HubError::FileNotFound { repo: repo.into(), file: name.clone() })?;
            chosen.push(file.clone());
        }
        // A folder's weights are nothing without its config.
        let has_safetensors = chosen.iter().any(|f| f.name.ends_with(".safetensors"));
        if has_safetensors && !chosen.iter().any(|f| f.name == "config.json") {
            if let Some(config) = info.file("config.json") {
                chosen.insert(0, config.clone());
            }
        }
        return Ok(chosen);
    }
    let top_level = |f: &&RepoFile| !f.name.contains('/');
    let has_config = info.file("config.json").is_some();
    let safetensors = info.siblings.iter().filter(top_level).any(|f| f.name.ends_with(".safetensors"));
    if has_config && safetensors {
        let needed = |name: &str| {
            name.ends_with(".safetensors")
                || name.ends_with(".json")
                || name.ends_with(".jinja")
                || name.ends_with(".txt")
                || name == "tokenizer.model"
        };
        return Ok(info.siblings.iter().filter(top_level).filter(|f| needed(&f.name)).cloned().collect());
    }
    let ggufs: Vec<&RepoFile> = info.siblings.iter().filter(|f| f.name.ends_with(".gguf")).collect();
    match ggufs.as_slice() {
        [] => Err(HubError::NoModelFiles { repo: repo.into() }),
        [one] => Ok(vec![(*one).clone()]),
        many => Err(HubError::ChooseFile {
            repo: repo.into(),
            count: many.len(),
            names: many.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", "),
        }),
    }
}

/// Refuses a config.json the engine cannot run (`options.supported` says; the rule is the
/// engine's).
fn check_architecture(repo: &str, config: &Path, options: &PullOptions) -> Result<()> {
    let text = std::fs::read_to_string(config).map_err(|e| HubError::io(config, e))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| HubError::BadAnswer { what: format!("{repo}/config.json"), reason: e.to_string() })?;
    let model_type = json.get("model_type").and_then(|v| v.as_str()).unwrap_or("");
    if (options.supported)(&json) {
        Ok(())
    } else {
        Err(unsupported(repo, if model_type.is_empty() { "(none in config.json)" } else { model_type }, options))
    }
}

fn unsupported(repo: &str, architecture: &str, options: &PullOptions) -> HubError {
    HubError::UnsupportedArchitecture { repo: repo.into(), architecture: architecture.into(), supported: options.supported_list.clone() }
}

fn still_to_fetch(cache: &RepoCache, file: &RepoFile) -> u64 {
    let Some(checksum) = file.checksum() else { return file.size() };
    if cache.blob(checksum.hex()).exists() {
        return 0;
    }
    let have = cache.incomplete(checksum.hex()).metadata().map(|m| m.len()).unwrap_or(0);
    file.size().saturating_sub(have)
}

/// How far a file got, and whether this pull is waiting for another one's download of it.
type FileProgress<'a> = dyn FnMut(u64, bool) + Send + 'a;

/// One file into the cache: resumed, verified (once more from scratch on a mismatch), linked.
/// Under the file's download lock: a second pull of it waits, then finds it complete.
#[allow(clippy::too_many_arguments)]
async fn fetch_file(
    client: &HubClient,
    repo: &str,
    revision: &str,
    commit: &str,
    file: &RepoFile,
    cache: &RepoCache,
    options: &PullOptions,
    progress: &mut FileProgress<'_>,
) -> Result<PathBuf> {
    let checksum = file.checksum().ok_or_else(|| HubError::BadAnswer {
        what: format!("{repo}'s info"),
        reason: format!("no checksum for {} (ask with ?blobs=true)", file.name),
    })?;
    let blob = cache.blob(checksum.hex());
    let complete = || blob.metadata().is_ok_and(|m| m.len() == file.size());
    if complete() {
        progress(file.size(), false);
        return cache.link(commit, &file.name, checksum.hex());
    }
    let partial = cache.incomplete(checksum.hex());
    let lock_path = cache.download_lock(checksum.hex());
    let _lock = lock::acquire(&lock_path, &options.cancel, || {
        // How far the other pull got: its partial file.
        let have = partial.metadata().map(|m| m.len()).unwrap_or(0);
        progress(have.min(file.size()), true);
    })
    .await?;
    // The pull this one waited for finished the file.
    if complete() {
        progress(file.size(), false);
        return cache.link(commit, &file.name, checksum.hex());
    }
    std::fs::create_dir_all(partial.parent().unwrap_or(&cache.root)).map_err(|e| HubError::io(&partial, e))?;
    let mut mismatch = None;
    for attempt in 0..2 {
        download(client, repo, revision, file, &partial, options, progress).await?;
        let actual = digest(&partial, &checksum)?;
        if actual == checksum.hex() {
            std::fs::rename(&partial, &blob).map_err(|e| HubError::io(&blob, e))?;
            return cache.link(commit, &file.name, checksum.hex());
        }
        tracing::warn!(file = file.name, attempt, expected = checksum.hex(), actual, "checksum mismatch; the file is removed");
        let _ = std::fs::remove_file(&partial);
        mismatch = Some(actual);
    }
    Err(HubError::Checksum {
        file: file.name.clone(),
        algorithm: checksum.algorithm(),
        expected: checksum.hex().into(),
        actual: mismatch.unwrap_or_default(),
    })
}

/// Fills `partial` up to the file's size, from its current length on; a dropped connection
/// resumes by itself from what arrived.
async fn download(
    client: &HubClient,
    repo: &str,
    revision: &str,
    file: &RepoFile,
    partial: &Path,
    options: &PullOptions,
    progress: &mut FileProgress<'_>,
) -> Result<()> {
    let size = file.size();
    // There from the start, so an empty file verifies like any other.
    std::fs::OpenOptions::new().create(true).append(true).open(partial).map_err(|e| HubError::io(partial, e))?;
    let mut drops = 0u32;
    loop {
        if options.cancel.load(Ordering::Relaxed) {
            return Err(HubError::Cancelled);
        }
        let mut have = partial.metadata().map(|m| m.len()).unwrap_or(0);
        if have > size {
            truncate(partial, 0)?;
            have = 0;
        }
        progress(have, false);
        if have == size {
            return Ok(());
        }
        if have > 0 {
            tracing::info!(file = file.name, from = have, "resuming");
        }
        let on_drop = |drops: &mut u32, reason: String| -> Result<Duration> {
            *drops += 1;
            if *drops > MAX_DROPS_IN_A_ROW {
                return Err(HubError::Network { file: file.name.clone(), attempts: *drops, reason });
            }
            tracing::warn!(file = file.name, drops = *drops, reason, "connection lost; resuming");
            Ok(options.retry_delay * 2u32.pow(*drops - 1))
        };
        let mut response = match client.open_file(repo, revision, &file.name, have).await {
            Ok(response) => response,
            Err(HubError::Unreachable { reason, .. }) => {
                tokio::time::sleep(on_drop(&mut drops, reason)?).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        match response.status() {
            StatusCode::PARTIAL_CONTENT if content_range_start(&response) == Some(have) => {}
            // The server ignored the range (or sent another): start over.
            StatusCode::OK | StatusCode::PARTIAL_CONTENT | StatusCode::RANGE_NOT_SATISFIABLE => {
                truncate(partial, 0)?;
                have = 0;
                if response.status() != StatusCode::OK {
                    continue;
                }
            }
            status => {
                return Err(HubError::Http { what: format!("{repo}/{}", file.name), status: status.as_u16(), message: String::new() })
            }
        }
        let mut out = std::fs::OpenOptions::new().create(true).append(true).open(partial).map_err(|e| HubError::io(partial, e))?;
        let start = have;
        let outcome = loop {
            if options.cancel.load(Ordering::Relaxed) {
                break Err(HubError::Cancelled);
            }
            match response.chunk().await {
                Ok(Some(bytes)) => {
                    out.write_all(&bytes).map_err(|e| HubError::io(partial, e))?;
                    have += bytes.len() as u64;
                    progress(have, false);
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(HubError::Network { file: file.name.clone(), attempts: 0, reason: error_chain(&e) }),
            }
        };
        out.sync_data().map_err(|e| HubError::io(partial, e))?;
        match outcome {
            Ok(()) if have >= size => return Ok(()),
            Ok(()) => {
                // The body ended early: a drop the server closed cleanly.
                if have > start {
                    drops = 0;
                }
                tokio::time::sleep(on_drop(&mut drops, format!("the answer ended at byte {have} of {size}"))?).await;
            }
            Err(HubError::Network { reason, .. }) => {
                if have > start {
                    drops = 0;
                }
                tokio::time::sleep(on_drop(&mut drops, reason)?).await;
            }
            Err(e) => return Err(e),
        }
    }
}

fn content_range_start(response: &reqwest::Response) -> Option<u64> {
    // "bytes 100-199/200"
    let value = response.headers().get(reqwest::header::CONTENT_RANGE)?.to_str().ok()?;
    value.strip_prefix("bytes ")?.split('-').next()?.parse().ok()
}

fn truncate(path: &Path, len: u64) -> Result<()> {
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path).map_err(|e| HubError::io(path, e))?;
    file.set_len(len).map_err(|e| HubError::io(path, e))
}

/// The file's checksum, in the kind the hub gave.
fn digest(path: &Path, checksum: &Checksum) -> Result<String> {
    let mut file = std::fs::File::open(path).map_err(|e| HubError::io(path, e))?;
    let mut buffer = vec![0u8; 1 << 20];
    let mut read_all = |update: &mut dyn FnMut(&[u8])| -> Result<()> {
        file.seek(SeekFrom::Start(0)).map_err(|e| HubError::io(path, e))?;
        loop {
            let n = file.read(&mut buffer).map_err(|e| HubError::io(path, e))?;
            if n == 0 {
                return Ok(());
            }
            update(&buffer[..n]);
        }
    };
    Ok(match checksum {
        Checksum::Sha256(_) => {
            let mut hasher = Sha256::new();
            read_all(&mut |b| hasher.update(b))?;
            hex(&hasher.finalize())
        }
        Checksum::GitSha1(_) => {
            let len = path.metadata().map_err(|e| HubError::io(path, e))?.len();
            let mut hasher = Sha1::new();
            hasher.update(format!("blob {len}\0").as_bytes());
            read_all(&mut |b| hasher.update(b))?;
            hex(&hasher.finalize())
        }
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(names: &[&str]) -> RepoInfo {
        serde_json::from_value(serde_json::json!({
            "id": "o/m",
            "siblings": names.iter().map(|n| serde_json::json!({"rfilename": n, "size": 1, "blobId": "0"})).collect::<Vec<_>>(),
        }))
        .unwrap()
    }

    #[test]
    fn a_folder_pull_takes_what_the_engine_reads_and_leaves_the_rest() {
        let names = [
            "config.json",
            "model.safetensors",
            "tokenizer.json",
            "README.md",
            ".gitattributes",
            "original/consolidated.pth",
            "chat_template.jinja",
        ];
        let chosen: Vec<String> = choose_files("o/m", &info(&names), &[]).unwrap().into_iter().map(|f| f.name).collect();
        assert_eq!(chosen, ["config.json", "model.safetensors", "tokenizer.json", "chat_template.jinja"]);
    }

    #[test]
    fn several_ggufs_need_a_choice_and_a_wrong_name_is_named() {
        let many = info(&["a.Q4_0.gguf", "a.Q8_0.gguf", "README.md"]);
        let err = choose_files("o/m", &many, &[]).unwrap_err();
        assert!(matches!(&err, HubError::ChooseFile { count: 2, names, .. } if names == "a.Q4_0.gguf, a.Q8_0.gguf"), "{err}");
        assert_eq!(choose_files("o/m", &many, &["a.Q8_0.gguf".into()]).unwrap()[0].name, "a.Q8_0.gguf");
        assert!(matches!(choose_files("o/m", &many, &["b.gguf".into()]), Err(HubError::FileNotFound { .. })));
        assert!(matches!(choose_files("o/m", &info(&["README.md"]), &[]), Err(HubError::NoModelFiles { .. })));
    }

    #[test]
    fn git_blob_ids_and_sha256_are_computed_as_the_hub_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"hello\n").unwrap();
        // `git hash-object` of "hello\n", and sha256sum of it.
        assert_eq!(digest(&path, &Checksum::GitSha1(String::new())).unwrap(), "ce013625030ba8dba906f756967f9e9ca394464a");
        assert_eq!(
            digest(&path, &Checksum::Sha256(String::new())).unwrap(),
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        );
    }
}
