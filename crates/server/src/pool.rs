//! The models one server runs: those it starts with, and any other model Confab can find,
//! loaded when a request first names it. The loaded models' weights share one limit: a model
//! that does not fit beside those loaded unloads the least recently used idle one first (those
//! loaded for requests before those kept for good; never one a request is using: it waits for
//! that request to end), and a model loaded for a request unloads once it has been idle for its
//! keep-alive. A model that could never fit is refused
//! before loading, naming the sizes. A request holds its model through `ServedModel` (a clone
//! counts as a user), so nothing a request runs on is unloaded under it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use confab_engine::{Engine, EngineError, LoadOptions, ModelInfo, ModelSummary};

use crate::ServedModel;

/// How long an idle model stays loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepAlive {
    /// Until something needs its room, or it is unloaded by name.
    Forever,
    /// This long after its last request ended; `Duration::ZERO` unloads it once idle.
    Idle(Duration),
}

impl std::str::FromStr for KeepAlive {
    type Err = String;

    /// Ollama's forms: seconds (`300`), a duration (`5m`, `1h30m`, `45s`), `0` (unload once
    /// idle), a negative number (`-1`: stay loaded).
    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let refuse = || {
            format!("`{text}` is not a keep-alive: give seconds (300), a duration (5m, 1h30m, 45s), 0 to unload when idle, or -1 to stay loaded")
        };
        if let Ok(seconds) = text.parse::<f64>() {
            return match seconds {
                s if s < 0.0 => Ok(KeepAlive::Forever),
                s if s.is_finite() => Ok(KeepAlive::Idle(Duration::from_secs_f64(s))),
                _ => Err(refuse()),
            };
        }
        if text.starts_with('-') {
            return Ok(KeepAlive::Forever);
        }
        let (mut total, mut number) = (0.0, String::new());
        for c in text.chars() {
            match c {
                '0'..='9' | '.' => number.push(c),
                'h' | 'm' | 's' if !number.is_empty() => {
                    let value: f64 = number.parse().map_err(|_| refuse())?;
                    total += value
                        * match c {
                            'h' => 3600.0,
                            'm' => 60.0,
                            _ => 1.0,
                        };
                    number.clear();
                }
                _ => return Err(refuse()),
            }
        }
        if !number.is_empty() || text.is_empty() {
            return Err(refuse());
        }
        Ok(KeepAlive::Idle(Duration::from_secs_f64(total)))
    }
}

/// How often the pool looks for models whose keep-alive has run out.
const SWEEP_EVERY: Duration = Duration::from_millis(500);
/// How often a request waiting for room looks again.
const WAIT_STEP: Duration = Duration::from_millis(50);

pub struct PoolOptions {
    /// How a model a request names is loaded.
    pub load: LoadOptions,
    /// The most the loaded models' weights may take together, in bytes.
    pub weights_limit: u64,
    /// How long a model loaded for a request stays loaded when idle.
    pub keep_alive: KeepAlive,
    /// How long a request waits for busy models to free room before it is refused.
    pub wait_for_room: Duration,
    /// Weights loaded outside the pool that count against its limit (the app's chat model),
    /// in bytes, asked each time.
    pub weights_beside: Option<Box<dyn Fn() -> u64 + Send + Sync>>,
}

/// Every model this machine has, found on disk (`confab_engine::discover`), without loading any.
pub type FindModels = Box<dyn Fn() -> Vec<ModelSummary> + Send + Sync>;

/// Why the pool could not give a request its model.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    #[error("the model `{asked}` is not one this server can find")]
    Unknown { asked: String, available: Vec<String> },
    #[error("the model `{asked}` is not loaded")]
    NotLoaded { asked: String, available: Vec<String> },
    #[error("`{name}` cannot run here: {reason}")]
    Unsupported { name: String, reason: String },
    #[error(
        "`{name}` needs {} for its weights, more than the {} this server may keep loaded for all its models; raise that limit or pick a smaller model",
        gigabytes(*needs),
        gigabytes(*limit)
    )]
    NeverFits { name: String, needs: u64, limit: u64 },
    #[error(
        "`{name}` ({}) does not fit beside the models requests are using now ({} of {}); it waited {} s. Try again when they finish",
        gigabytes(*needs),
        gigabytes(*in_use),
        gigabytes(*limit),
        waited.as_secs()
    )]
    NoRoom { name: String, needs: u64, in_use: u64, limit: u64, waited: Duration },
    #[error("`{name}` is the model the app has loaded for its chats; unload it in the app")]
    Resident { name: String },
    #[error("loading `{name}`: {source}")]
    Load { name: String, source: EngineError },
}

/// A model as `GET /v1/models` and Ollama's `/api/tags` and `/api/ps` show it.
#[derive(Debug, Clone)]
pub struct ListedModel {
    pub name: String,
    pub path: PathBuf,
    /// What discovery found on disk (`None` for a model loaded from elsewhere, such as a path
    /// given at start outside the folders searched).
    pub found: Option<ModelSummary>,
    /// Its state while loaded.
    pub loaded: Option<LoadedState>,
}

impl ListedModel {
    pub fn is_embedding(&self) -> bool {
        match (&self.loaded, &self.found) {
            (Some(loaded), _) => loaded.info.embedding.is_some(),
            (None, Some(found)) => found.embedding,
            (None, None) => false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct LoadedState {
    pub info: ModelInfo,
    pub weights_bytes: u64,
    /// Requests using it now.
    pub requests: usize,
    /// When it unloads if it stays idle (`None`: it stays).
    pub unloads_in: Option<Duration>,
}

struct Loaded {
    model: ServedModel,
    weights: u64,
    last_used: Instant,
    keep_alive: KeepAlive,
}

impl Loaded {
    fn requests(&self) -> usize {
        self.model.users() - 1
    }

    fn idle(&self) -> bool {
        self.requests() == 0
    }

    /// How long until its keep-alive runs out, counted from its last use (as idle).
    fn unloads_in(&self, now: Instant) -> Option<Duration> {
        match self.keep_alive {
            KeepAlive::Forever => None,
            KeepAlive::Idle(keep) => Some(keep.saturating_sub(now.saturating_duration_since(self.last_used))),
        }
    }
}

pub struct ModelPool {
    engine: Arc<Engine>,
    find: FindModels,
    options: PoolOptions,
    loaded: Mutex<Vec<Loaded>>,
    /// One load at a time: two requests for one model load it once.
    loading: Mutex<()>,
    /// The models kept for good (started with, loaded by hand): loaded again after being
    /// unloaded for room, they stay kept.
    kept: Mutex<Vec<PathBuf>>,
}

impl ModelPool {
    /// A pool on `engine`, finding models with `find`; its keep-alive sweeper runs until the
    /// pool is dropped.
    pub fn new(engine: Arc<Engine>, find: FindModels, options: PoolOptions) -> Arc<Self> {
        let pool = Arc::new(Self { engine, find, options, loaded: Mutex::new(vec![]), loading: Mutex::new(()), kept: Mutex::new(vec![]) });
        let weak = Arc::downgrade(&pool);
        let spawned = std::thread::Builder::new().name("confab-model-pool".into()).spawn(move || sweep_until_dropped(weak));
        if let Err(e) = spawned {
            tracing::warn!("idle models will not unload by themselves: could not start the pool's sweeper: {e}");
        }
        pool
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Takes a model loaded elsewhere (the ones `confab serve` starts with, with a draft model
    /// it loaded beside one) into the pool.
    pub fn adopt(&self, model: ServedModel, keep_alive: KeepAlive) {
        self.remember(&model.info.path, keep_alive);
        let weights = model.info.weights_bytes;
        self.lock().push(Loaded { model, weights, last_used: Instant::now(), keep_alive });
    }

    /// The model `asked` names (its name or path), for a request: loaded first when it is not,
    /// after unloading idle models to make room. Blocks while it loads or waits for room.
    pub fn acquire(&self, asked: &str) -> Result<ServedModel, PoolError> {
        if let Some(model) = self.touch(asked) {
            return Ok(model);
        }
        let found = (self.find)();
        let Some(summary) = found.iter().find(|m| m.name == asked || m.path.to_str() == Some(asked)).cloned() else {
            let mut available: Vec<String> = self.lock().iter().map(|l| l.model.name.clone()).collect();
            available.extend(found.into_iter().filter(|m| m.supported).map(|m| m.name));
            available.dedup();
            return Err(PoolError::Unknown { asked: asked.to_string(), available });
        };
        if !summary.supported {
            let reason = summary.unsupported_reason.unwrap_or_else(|| "this build does not run its architecture".into());
            return Err(PoolError::Unsupported { name: summary.name, reason });
        }
        let needs = summary.weights_bytes;
        if needs > self.options.weights_limit {
            return Err(PoolError::NeverFits { name: summary.name, needs, limit: self.options.weights_limit });
        }
        let _one_load = self.loading.lock().unwrap_or_else(|e| e.into_inner());
        // Another request may have loaded it while this one waited to load.
        if let Some(model) = self.touch(asked) {
            return Ok(model);
        }
        self.make_room(&summary.name, needs)?;
        tracing::info!(model = %summary.name, path = %summary.path.display(), "loading a model a request names");
        let (id, info) = self
            .engine
            .load(&summary.path, self.options.load.clone(), |_| {})
            .map_err(|source| PoolError::Load { name: summary.name.clone(), source })?;
        let weights = if info.weights_bytes > 0 { info.weights_bytes } else { needs };
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner()).contains(&info.path);
        let keep_alive = if kept { KeepAlive::Forever } else { self.options.keep_alive };
        let model = ServedModel::new(id, summary.name, info, None);
        self.lock().push(Loaded { model: model.clone(), weights, last_used: Instant::now(), keep_alive });
        Ok(model)
    }

    /// Sets how long `asked` stays loaded once idle (`KeepAlive::Idle(Duration::ZERO)`: unload
    /// it when its requests end). A model that is not loaded is an error.
    pub fn keep_alive(&self, asked: &str, keep_alive: KeepAlive) -> Result<(), PoolError> {
        let mut loaded = self.lock();
        let Some(entry) = loaded.iter_mut().find(|l| l.model.answers_to(asked)) else {
            let available = loaded.iter().map(|l| l.model.name.clone()).collect();
            return Err(PoolError::NotLoaded { asked: asked.to_string(), available });
        };
        entry.keep_alive = keep_alive;
        let path = entry.model.info.path.clone();
        drop(loaded);
        self.remember(&path, keep_alive);
        self.sweep();
        Ok(())
    }

    /// Whether the model at `path` is kept for good from now on.
    fn remember(&self, path: &std::path::Path, keep_alive: KeepAlive) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|p| p != path);
        if keep_alive == KeepAlive::Forever {
            kept.push(path.to_path_buf());
        }
    }

    /// The models loaded now, without looking on disk.
    pub fn loaded(&self) -> Vec<ListedModel> {
        let now = Instant::now();
        self.lock()
            .iter()
            .map(|l| ListedModel {
                name: l.model.name.clone(),
                path: l.model.info.path.clone(),
                found: None,
                loaded: Some(LoadedState {
                    info: l.model.info.clone(),
                    weights_bytes: l.weights,
                    requests: l.requests(),
                    unloads_in: l.unloads_in(now),
                }),
            })
            .collect()
    }

    /// Every model a request may name: the loaded ones, then those found on disk.
    pub fn models(&self) -> Vec<ListedModel> {
        let mut listed = self.loaded();
        for summary in (self.find)() {
            match listed.iter_mut().find(|m| m.path == summary.path) {
                Some(loaded) => loaded.found = Some(summary),
                None if summary.supported => {
                    listed.push(ListedModel { name: summary.name.clone(), path: summary.path.clone(), found: Some(summary), loaded: None })
                }
                None => {}
            }
        }
        listed
    }

    /// The loaded model `asked` names, marked used now.
    fn touch(&self, asked: &str) -> Option<ServedModel> {
        let mut loaded = self.lock();
        let entry = loaded.iter_mut().find(|l| l.model.answers_to(asked))?;
        entry.last_used = Instant::now();
        Some(entry.model.clone())
    }

    /// Unloads idle models, least recently used first, until `needs` bytes fit beside the rest;
    /// waits for busy ones to finish while they hold the room.
    fn make_room(&self, name: &str, needs: u64) -> Result<(), PoolError> {
        let limit = self.options.weights_limit;
        let began = Instant::now();
        loop {
            let mut loaded = self.lock();
            let in_use = |loaded: &[Loaded]| {
                loaded.iter().map(|l| l.weights).sum::<u64>() + self.options.weights_beside.as_ref().map_or(0, |beside| beside())
            };
            while in_use(&loaded) + needs > limit {
                // Models loaded for a request go before those kept for good (started with, or
                // loaded by hand), as LM Studio keeps the models a user loaded.
                let order = |l: &Loaded| (l.keep_alive == KeepAlive::Forever, l.last_used);
                let Some(oldest) = (0..loaded.len()).filter(|&i| loaded[i].idle()).min_by_key(|&i| order(&loaded[i])) else {
                    break;
                };
                let gone = loaded.remove(oldest);
                tracing::info!(model = %gone.model.name, for_model = name, "unloaded the least recently used idle model to make room");
                self.unload(&gone);
            }
            let used = in_use(&loaded);
            if used + needs <= limit {
                return Ok(());
            }
            drop(loaded);
            if began.elapsed() >= self.options.wait_for_room {
                return Err(PoolError::NoRoom { name: name.to_string(), needs, in_use: used, limit, waited: began.elapsed() });
            }
            std::thread::sleep(WAIT_STEP);
        }
    }

    /// Unloads the idle models whose keep-alive has run out. A model in use counts as used now,
    /// so that its keep-alive runs from the end of its last request.
    fn sweep(&self) {
        let now = Instant::now();
        let mut loaded = self.lock();
        for entry in loaded.iter_mut().filter(|l| !l.idle()) {
            entry.last_used = now;
        }
        let (expired, kept): (Vec<Loaded>, Vec<Loaded>) =
            std::mem::take(&mut *loaded).into_iter().partition(|l| l.idle() && l.unloads_in(now) == Some(Duration::ZERO));
        *loaded = kept;
        drop(loaded);
        for gone in expired {
            tracing::info!(model = %gone.model.name, "unloaded a model idle for its keep-alive");
            self.unload(&gone);
        }
    }

    fn unload(&self, gone: &Loaded) {
        for id in std::iter::once(gone.model.id).chain(gone.model.draft) {
            if let Err(e) = self.engine.unload(id) {
                tracing::warn!(model = %gone.model.name, "could not unload: {e}");
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Loaded>> {
        self.loaded.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A pool that goes (its server stopped) unloads what it loaded.
impl Drop for ModelPool {
    fn drop(&mut self) {
        for gone in std::mem::take(&mut *self.lock()) {
            self.unload(&gone);
        }
    }
}

fn sweep_until_dropped(pool: Weak<ModelPool>) {
    loop {
        std::thread::sleep(SWEEP_EVERY);
        match pool.upgrade() {
            Some(pool) => pool.sweep(),
            None => return,
        }
    }
}

fn gigabytes(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GB", bytes as f64 / 1e9)
    } else {
        format!("{:.0} MB", bytes as f64 / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_alive_reads_ollamas_forms() {
        let idle = |s: u64| Ok(KeepAlive::Idle(Duration::from_secs(s)));
        assert_eq!("300".parse(), idle(300));
        assert_eq!("5m".parse(), idle(300));
        assert_eq!("1h30m".parse(), idle(5400));
        assert_eq!("45s".parse(), idle(45));
        assert_eq!("0".parse(), idle(0));
        assert_eq!("-1".parse(), Ok::<_, String>(KeepAlive::Forever));
        assert_eq!("-5m".parse(), Ok::<_, String>(KeepAlive::Forever));
        for bad in ["", "soon", "5x", "m", "5m3"] {
            assert!(bad.parse::<KeepAlive>().is_err(), "{bad}");
        }
    }
}
