//! Models downloading from the hub while the app runs: several at once, each in its own task
//! (never on the engine's thread), reported to the window as `download` events, paused,
//! resumed, cancelled, and remembered across restarts (they come back paused; resuming
//! continues each partial file with a Range request, which confab-hub does).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use confab_engine::{runs_here, Architecture};
use confab_hub::{HubClient, HubError, Progress, PullOptions, RepoCache};

use crate::sync::lock;

/// The event each change of a download is sent as.
pub const EVENT: &str = "download";
/// The unfinished downloads, in the data folder.
const SAVED_FILE: &str = "downloads.json";
/// Progress events at most this often per download (the last one always goes).
const EMIT_EVERY: Duration = Duration::from_millis(200);
/// How often the list is saved while bytes arrive, so that after a crash or a quit the row
/// shows about how far it got.
const SAVE_EVERY: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum DownloadStatus {
    Running,
    Paused,
    Done,
    Failed,
    /// The last event of a cancelled download: the window drops its row.
    Cancelled,
}

/// One download, as the window shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
pub struct Download {
    /// The repository, and the files asked for when not the whole model.
    pub id: String,
    pub repo: String,
    /// Empty: the model's files as confab-hub chooses them.
    pub files: Vec<String>,
    pub status: DownloadStatus,
    /// The file being fetched.
    pub file: String,
    pub bytes: u64,
    pub total: u64,
    /// This run's speed (not counting what a resumed partial already had).
    pub bytes_per_second: f64,
    pub seconds_left: Option<f64>,
    /// Another download of the file is running (another window's, `confab pull`'s): this one
    /// waits for it, then uses its file; `bytes` shows how far that one got. (Absent from
    /// lists saved before it existed.)
    #[serde(default)]
    pub waiting: bool,
    /// What went wrong and what to do, for a failed download.
    pub error: Option<String>,
    /// What the engine loads, once done.
    pub model_path: Option<PathBuf>,
}

impl Download {
    fn new(repo: &str, files: &[String]) -> Download {
        Download {
            id: download_id(repo, files),
            repo: repo.into(),
            files: files.to_vec(),
            status: DownloadStatus::Paused,
            file: String::new(),
            bytes: 0,
            total: 0,
            bytes_per_second: 0.0,
            seconds_left: None,
            waiting: false,
            error: None,
            model_path: None,
        }
    }
}

pub fn download_id(repo: &str, files: &[String]) -> String {
    if files.is_empty() {
        repo.to_string()
    } else {
        format!("{repo}:{}", files.join(","))
    }
}

/// Where downloads come from and go to, decided when one starts (the settings may change).
pub struct Source {
    pub client: HubClient,
    pub cache_dir: PathBuf,
}

struct Entry {
    view: Download,
    /// Set to stop the running task.
    stop: Option<Arc<AtomicBool>>,
    /// Stopped to be forgotten (and its partial files removed), not paused.
    cancelled: bool,
}

pub type Notify = Box<dyn Fn(&Download) + Send + Sync>;

pub struct Downloads {
    entries: Mutex<Vec<Entry>>,
    saved_at: PathBuf,
    notify: Notify,
}

impl Downloads {
    /// The manager, with the downloads an earlier run left unfinished (paused).
    pub fn open(data_dir: &Path, notify: Notify) -> Arc<Downloads> {
        let saved_at = data_dir.join(SAVED_FILE);
        let saved: Vec<Download> = match std::fs::read(&saved_at) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::warn!("the list of unfinished downloads was unreadable ({e}); starting without it");
                vec![]
            }),
            Err(_) => vec![],
        };
        let entries = saved
            .into_iter()
            .filter(|d| d.status != DownloadStatus::Done)
            .map(|mut view| {
                if view.status == DownloadStatus::Running {
                    view.status = DownloadStatus::Paused;
                }
                view.bytes_per_second = 0.0;
                view.seconds_left = None;
                view.waiting = false;
                Entry { view, stop: None, cancelled: false }
            })
            .collect();
        Arc::new(Downloads { entries: Mutex::new(entries), saved_at, notify })
    }

    pub fn list(&self) -> Vec<Download> {
        lock(&self.entries).iter().map(|e| e.view.clone()).collect()
    }

    pub fn get(&self, id: &str) -> Option<Download> {
        lock(&self.entries).iter().find(|e| e.view.id == id).map(|e| e.view.clone())
    }

    /// Starts (or resumes) `repo`'s download; one already running is left as it is.
    pub fn start(self: &Arc<Self>, source: Source, repo: &str, files: &[String]) -> Download {
        let id = download_id(repo, files);
        let stop = Arc::new(AtomicBool::new(false));
        let view = {
            let mut entries = lock(&self.entries);
            let index = match entries.iter().position(|e| e.view.id == id) {
                Some(i) => i,
                None => {
                    entries.push(Entry { view: Download::new(repo, files), stop: None, cancelled: false });
                    entries.len() - 1
                }
            };
            let entry = &mut entries[index];
            if entry.view.status == DownloadStatus::Running {
                return entry.view.clone();
            }
            entry.view.status = DownloadStatus::Running;
            entry.view.error = None;
            entry.view.model_path = None;
            entry.stop = Some(stop.clone());
            entry.cancelled = false;
            entry.view.clone()
        };
        self.changed(&view);
        let manager = self.clone();
        let (repo, files) = (repo.to_string(), files.to_vec());
        tauri::async_runtime::spawn(async move { manager.run(source, repo, files, stop).await });
        view
    }

    /// Stops a running download, keeping what arrived for a later resume.
    pub fn pause(&self, id: &str) {
        if let Some(entry) = lock(&self.entries).iter_mut().find(|e| e.view.id == id) {
            if let Some(stop) = &entry.stop {
                stop.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Stops a download and forgets it, removing its partial files (finished files stay in
    /// the cache, where other tools may share them).
    pub fn cancel(&self, id: &str, cache_dir: &Path) {
        let removed = {
            let mut entries = lock(&self.entries);
            let Some(index) = entries.iter().position(|e| e.view.id == id) else { return };
            match &entries[index].stop {
                // The task removes it when it stops.
                Some(stop) if entries[index].view.status == DownloadStatus::Running => {
                    stop.store(true, Ordering::Relaxed);
                    entries[index].cancelled = true;
                    None
                }
                _ => Some(entries.remove(index).view),
            }
        };
        if let Some(mut view) = removed {
            remove_partials(cache_dir, &view.repo);
            self.save();
            view.status = DownloadStatus::Cancelled;
            (self.notify)(&view);
        }
    }

    /// Repository folders in the cache with a download still to finish: the picker leaves
    /// what is inside them out until it is complete.
    pub fn unfinished_folders(&self, cache_dir: &Path) -> Vec<PathBuf> {
        lock(&self.entries)
            .iter()
            .filter(|e| e.view.status != DownloadStatus::Done)
            .map(|e| RepoCache::new(cache_dir, &e.view.repo).root)
            .collect()
    }

    async fn run(self: Arc<Self>, source: Source, repo: String, files: Vec<String>, stop: Arc<AtomicBool>) {
        let id = download_id(&repo, &files);
        let mut options = PullOptions::new(
            source.cache_dir.clone(),
            |config| runs_here(Architecture::Config(config)),
            |architecture| runs_here(Architecture::Gguf(architecture)),
            confab_engine::supported_architectures(),
        );
        options.files = files;
        options.cancel = stop;
        let started = Instant::now();
        let mut first_bytes = None;
        let mut last_sent: Option<Instant> = None;
        let mut last_saved = Instant::now();
        let mut was_waiting = false;
        let result = confab_hub::pull(&source.client, &repo, &options, |p: &Progress| {
            let first = *first_bytes.get_or_insert(p.bytes);
            let elapsed = started.elapsed().as_secs_f64();
            let speed = if elapsed > 0.0 { p.bytes.saturating_sub(first) as f64 / elapsed } else { 0.0 };
            let view = self.update(&id, |view| {
                view.file = p.file.clone();
                view.bytes = p.bytes;
                view.total = p.total;
                view.bytes_per_second = speed;
                view.seconds_left = (speed > 0.0).then(|| p.total.saturating_sub(p.bytes) as f64 / speed);
                view.waiting = p.waiting;
            });
            // The start and the end of a wait go at once.
            let wait_changed = p.waiting != was_waiting;
            was_waiting = p.waiting;
            if wait_changed || last_sent.is_none_or(|t| t.elapsed() >= EMIT_EVERY) {
                last_sent = Some(Instant::now());
                if let Some(view) = view {
                    (self.notify)(&view);
                }
            }
            if last_saved.elapsed() >= SAVE_EVERY {
                last_saved = Instant::now();
                self.save();
            }
        })
        .await;

        let cancelled = lock(&self.entries).iter().any(|e| e.view.id == id && e.cancelled);
        if cancelled {
            // The partial files go first: while the entry is listed, the picker hides its folder.
            remove_partials(&source.cache_dir, &repo);
            // Forgotten and saved in one step, so no one sees it gone while the list still has it.
            let view = {
                let mut entries = lock(&self.entries);
                let view = entries.iter().position(|e| e.view.id == id).map(|i| entries.remove(i).view);
                self.write_saved(&entries);
                view
            };
            if let Some(mut view) = view {
                view.status = DownloadStatus::Cancelled;
                (self.notify)(&view);
            }
            return;
        }
        let view = self.update(&id, |view| {
            view.bytes_per_second = 0.0;
            view.seconds_left = None;
            view.waiting = false;
            match result {
                Ok(pulled) => {
                    view.status = DownloadStatus::Done;
                    view.bytes = pulled.bytes;
                    view.total = pulled.bytes;
                    view.model_path = Some(pulled.model_path);
                }
                Err(HubError::Cancelled) => view.status = DownloadStatus::Paused,
                Err(e) => {
                    tracing::warn!(repo = view.repo, "download failed: {e}");
                    view.status = DownloadStatus::Failed;
                    view.error = Some(e.to_string());
                }
            }
        });
        if let Some(view) = view {
            self.changed(&view);
        }
    }

    fn update(&self, id: &str, change: impl FnOnce(&mut Download)) -> Option<Download> {
        let mut entries = lock(&self.entries);
        let entry = entries.iter_mut().find(|e| e.view.id == id)?;
        change(&mut entry.view);
        if entry.view.status != DownloadStatus::Running {
            entry.stop = None;
        }
        Some(entry.view.clone())
    }

    /// A status change: saved, then told to the window.
    fn changed(&self, view: &Download) {
        self.save();
        (self.notify)(view);
    }

    /// Writes the unfinished downloads (atomically: a crash leaves the old list or the new).
    fn save(&self) {
        self.write_saved(&lock(&self.entries));
    }

    fn write_saved(&self, entries: &[Entry]) {
        let unfinished: Vec<Download> = entries.iter().filter(|e| e.view.status != DownloadStatus::Done).map(|e| e.view.clone()).collect();
        let write = || -> std::io::Result<()> {
            let temporary = self.saved_at.with_extension("json.tmp");
            std::fs::write(&temporary, serde_json::to_vec_pretty(&unfinished)?)?;
            std::fs::rename(&temporary, &self.saved_at)
        };
        if let Err(e) = write() {
            tracing::warn!("could not save the list of unfinished downloads to {}: {e}", self.saved_at.display());
        }
    }
}

/// A cancelled download's partial files (`blobs/*.incomplete`); one that another pull is
/// writing (`confab pull`, another window) is its own and stays.
fn remove_partials(cache_dir: &Path, repo: &str) {
    RepoCache::new(cache_dir, repo).remove_partials();
}

#[cfg(test)]
mod tests {
    //! Against the loopback mirror (tests/hub/serve.py): nothing here leaves 127.0.0.1.

    use std::io::{BufRead, BufReader, Read, Write};
    use std::process::{Child, Command, Stdio};

    use confab_hub::HubOptions;

    use super::*;

    const REPO: &str = "confab-test/tiny-llama";
    const WEIGHTS: &str = "model.safetensors";

    struct Mirror {
        child: Child,
        endpoint: String,
    }

    impl Mirror {
        fn start(args: &[&str]) -> Mirror {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/hub/serve.py");
            let mut child = Command::new("python3")
                .arg(script)
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("python3 runs the mirror");
            let mut endpoint = String::new();
            BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut endpoint).unwrap();
            assert!(endpoint.starts_with("http://127.0.0.1:"), "{endpoint}");
            Mirror { child, endpoint: endpoint.trim().into() }
        }

        fn source(&self, cache_dir: &Path, token: Option<&str>) -> Source {
            let options = HubOptions { endpoint: self.endpoint.clone(), token: token.and_then(confab_hub::Token::new) };
            Source { client: HubClient::new(options).unwrap(), cache_dir: cache_dir.to_path_buf() }
        }

        /// Stops it; the (file, offset) of every request for bytes.
        fn ranges(mut self) -> Vec<(String, u64)> {
            drop(self.child.stdin.take());
            let mut out = String::new();
            self.child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
            let _ = self.child.wait();
            serde_json::from_str(out.trim()).unwrap()
        }
    }

    impl Drop for Mirror {
        fn drop(&mut self) {
            if let Some(mut stdin) = self.child.stdin.take() {
                let _ = stdin.flush();
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// A manager whose events are kept.
    fn manager(data_dir: &Path) -> (Arc<Downloads>, Arc<Mutex<Vec<Download>>>) {
        let events = Arc::new(Mutex::new(vec![]));
        let kept = events.clone();
        (Downloads::open(data_dir, Box::new(move |d: &Download| lock(&kept).push(d.clone()))), events)
    }

    fn wait_for(downloads: &Downloads, id: &str, what: impl Fn(&Download) -> bool) -> Download {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let now = downloads.get(id);
            if let Some(d) = now.as_ref().filter(|d| what(d)) {
                return d.clone();
            }
            assert!(Instant::now() < deadline, "waited a minute; the download is {now:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the window to be told of a change: the manager's state changes first, then it
    /// saves and sends the event.
    fn wait_for_event(events: &Mutex<Vec<Download>>, what: impl Fn(&Download) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !lock(events).last().is_some_and(&what) {
            assert!(Instant::now() < deadline, "waited a minute; the last event is {:?}", lock(events).last());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn partials(cache: &Path) -> Vec<PathBuf> {
        let blobs = RepoCache::new(cache, REPO).root.join("blobs");
        std::fs::read_dir(blobs)
            .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "incomplete")).collect())
            .unwrap_or_default()
    }

    #[test]
    fn a_download_reports_progress_and_lands_complete_in_the_cache() {
        let mirror = Mirror::start(&["--delay", "0.05"]);
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("hub");
        let (downloads, events) = manager(dir.path());
        let started = downloads.start(mirror.source(&cache, None), REPO, &[]);
        assert_eq!(started.status, DownloadStatus::Running);
        let done = wait_for(&downloads, REPO, |d| d.status != DownloadStatus::Running);
        assert_eq!(done.status, DownloadStatus::Done, "{:?}", done.error);
        wait_for_event(&events, |e| e.status != DownloadStatus::Running);
        let model = done.model_path.clone().unwrap();
        assert!(model.join("config.json").is_file() && model.join(WEIGHTS).is_file());
        assert!(model.starts_with(RepoCache::new(&cache, REPO).root.join("snapshots")));
        assert_eq!(done.bytes, done.total);
        let events = lock(&events).clone();
        let moving: Vec<u64> = events.iter().filter(|e| e.status == DownloadStatus::Running).map(|e| e.bytes).collect();
        assert!(moving.windows(2).all(|w| w[0] <= w[1]) && moving.iter().any(|&b| b > 0 && b < done.total), "progress moves: {moving:?}");
        assert!(events.iter().any(|e| e.status == DownloadStatus::Running && e.bytes_per_second > 0.0 && e.seconds_left.is_some()));
        assert_eq!(events.last().unwrap().status, DownloadStatus::Done);
        assert!(downloads.unfinished_folders(&cache).is_empty(), "the picker may show it now");
        let saved: Vec<Download> = serde_json::from_slice(&std::fs::read(dir.path().join(SAVED_FILE)).unwrap()).unwrap();
        assert!(saved.is_empty(), "a finished download is not resumed next time");
        assert!(mirror.ranges().iter().all(|(_, offset)| *offset == 0));
    }

    #[test]
    fn a_restart_shows_it_paused_and_resuming_fetches_only_the_rest() {
        let mirror = Mirror::start(&["--delay", "0.4"]);
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("hub");
        let (first, _) = manager(dir.path());
        first.start(mirror.source(&cache, None), REPO, &[]);
        wait_for(&first, REPO, |d| d.file == WEIGHTS && d.bytes > 100_000);
        // Long enough for the list to be saved with the bytes so far.
        std::thread::sleep(SAVE_EVERY + Duration::from_millis(200));

        // The app quits mid-file (its saved list says running): the next run shows it paused.
        let (second, _) = manager(dir.path());
        let paused = second.get(REPO).expect("remembered");
        assert_eq!(paused.status, DownloadStatus::Paused);
        assert!(paused.bytes > 100_000 && paused.total > paused.bytes, "shows how far it got: {paused:?}");
        assert_eq!(second.unfinished_folders(&cache), vec![RepoCache::new(&cache, REPO).root]);
        first.pause(REPO);
        let stopped = wait_for(&first, REPO, |d| d.status != DownloadStatus::Running);
        assert_eq!(stopped.status, DownloadStatus::Paused);
        assert_eq!(partials(&cache).len(), 1, "the partial weights are kept");

        second.start(mirror.source(&cache, None), REPO, &[]);
        let done = wait_for(&second, REPO, |d| d.status != DownloadStatus::Running);
        assert_eq!(done.status, DownloadStatus::Done, "{:?}", done.error);
        assert!(partials(&cache).is_empty());
        let ranges = mirror.ranges();
        let weights: Vec<u64> = ranges.iter().filter(|(f, _)| f == WEIGHTS).map(|(_, o)| *o).collect();
        assert_eq!(weights.len(), 2, "{ranges:?}");
        assert!(weights[1] >= 99_000, "resumed from where the first run stopped: {weights:?}");
    }

    #[test]
    fn a_second_download_of_the_same_model_waits_for_the_first_and_fetches_nothing() {
        // Two managers on one cache: two app windows, or the app and `confab pull`.
        let mirror = Mirror::start(&["--delay", "0.2"]);
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("hub");
        let (first_data, second_data) = (dir.path().join("first"), dir.path().join("second"));
        std::fs::create_dir_all(&first_data).unwrap();
        std::fs::create_dir_all(&second_data).unwrap();
        let (first, _) = manager(&first_data);
        let (second, second_events) = manager(&second_data);
        first.start(mirror.source(&cache, None), REPO, &[]);
        wait_for(&first, REPO, |d| d.file == WEIGHTS && d.bytes > 0);
        second.start(mirror.source(&cache, None), REPO, &[]);
        let waiting = wait_for(&second, REPO, |d| d.waiting || d.status != DownloadStatus::Running);
        assert!(waiting.waiting && waiting.file == WEIGHTS, "{waiting:?}");
        wait_for_event(&second_events, |e| e.waiting);

        let done = wait_for(&first, REPO, |d| d.status != DownloadStatus::Running);
        assert_eq!(done.status, DownloadStatus::Done, "{:?}", done.error);
        let also = wait_for(&second, REPO, |d| d.status != DownloadStatus::Running);
        assert_eq!(also.status, DownloadStatus::Done, "{:?}", also.error);
        assert_eq!(also.model_path, done.model_path);
        assert!(!also.waiting);
        // The window hears the end too (its event is sent after the state changes).
        wait_for_event(&second_events, |e| e.status == DownloadStatus::Done && !e.waiting);
        let weights = mirror.ranges().into_iter().filter(|(f, _)| f == WEIGHTS).count();
        assert_eq!(weights, 1, "the weights were fetched once");
    }

    #[test]
    fn a_connection_that_keeps_dropping_resumes_by_itself() {
        let mirror = Mirror::start(&["--drop-every", "100000"]);
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("hub");
        let (downloads, _) = manager(dir.path());
        downloads.start(mirror.source(&cache, None), REPO, &[]);
        let done = wait_for(&downloads, REPO, |d| d.status != DownloadStatus::Running);
        assert_eq!(done.status, DownloadStatus::Done, "{:?}", done.error);
        let offsets: Vec<u64> = mirror.ranges().into_iter().filter(|(f, _)| f == WEIGHTS).map(|(_, o)| o).collect();
        assert!(offsets.len() >= 5 && offsets.windows(2).all(|w| w[0] < w[1]), "each drop resumed where it stopped: {offsets:?}");
    }

    #[test]
    fn cancelling_forgets_the_download_and_removes_its_partial_file() {
        let mirror = Mirror::start(&["--delay", "0.2"]);
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("hub");
        let (downloads, _) = manager(dir.path());
        downloads.start(mirror.source(&cache, None), REPO, &[]);
        wait_for(&downloads, REPO, |d| d.file == WEIGHTS && d.bytes > 100_000);
        downloads.cancel(REPO, &cache);
        let deadline = Instant::now() + Duration::from_secs(30);
        while downloads.get(REPO).is_some() {
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(partials(&cache).is_empty());
        let saved: Vec<Download> = serde_json::from_slice(&std::fs::read(dir.path().join(SAVED_FILE)).unwrap()).unwrap();
        assert!(saved.is_empty());
    }

    #[test]
    fn failures_say_what_to_do_on_the_row() {
        let mirror = Mirror::start(&["--gated"]);
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("hub");
        let (downloads, _) = manager(dir.path());

        downloads.start(mirror.source(&cache, None), "confab-test/missing", &[]);
        let missing = wait_for(&downloads, "confab-test/missing", |d| d.status != DownloadStatus::Running);
        assert_eq!(missing.status, DownloadStatus::Failed);
        assert!(missing.error.as_deref().unwrap().contains("was not found"), "{missing:?}");

        downloads.start(mirror.source(&cache, None), REPO, &[]);
        let gated = wait_for(&downloads, REPO, |d| d.status != DownloadStatus::Running);
        let message = gated.error.unwrap();
        assert!(message.contains("accept its licence") && message.contains("token"), "{message}");

        // With the token set, the same row goes through.
        downloads.start(mirror.source(&cache, Some("hf_test_token")), REPO, &[]);
        let done = wait_for(&downloads, REPO, |d| d.status != DownloadStatus::Running);
        assert_eq!(done.status, DownloadStatus::Done, "{:?}", done.error);
    }
}
