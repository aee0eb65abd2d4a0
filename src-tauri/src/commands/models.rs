//! The model picker: what is on disk, what is loaded, and loading another.

use std::path::PathBuf;

use confab_engine::draft_vocabulary_mismatch;
use confab_engine::ModelInfo;
use confab_engine::{discover, ModelSummary};
use tauri::AppHandle;

use super::App;
use crate::failure::Failure;
use crate::models::slot::{load_blocking, ModelState};
use crate::sync::lock;

#[tauri::command]
pub async fn list_models(
    state: App<'_>,
    downloads: tauri::State<'_, std::sync::Arc<crate::models::downloads::Downloads>>,
) -> Result<Vec<ModelSummary>, Failure> {
    let folders = state.model_folders();
    // A model still downloading is not there yet, even where some of its files are.
    let unfinished = downloads.unfinished_folders(&super::hub::cache_dir());
    let found = tauri::async_runtime::spawn_blocking(move || discover(&folders)).await?;
    Ok(found.into_iter().filter(|m| !unfinished.iter().any(|f| m.path.starts_with(f))).collect())
}

#[tauri::command]
pub fn model_state(state: App<'_>) -> ModelState {
    state.model.state()
}

/// Loads `path` in place of the current model and remembers it for the next launch; replies
/// go to it from now on, even if a remote model was picked.
#[tauri::command]
pub async fn load_model(app: AppHandle, state: App<'_>, path: PathBuf) -> Result<ModelInfo, Failure> {
    if state.model.state().loading.is_some() {
        return Err("A model is already loading; wait for it to finish.".into());
    }
    // Picking a local model takes replies back from a remote one, before the load: the window
    // asks for the providers' list when the model state it is sent changes (loading, loaded), and
    // that list must already say so. (Deselected after the load, a model with a draft model was
    // reported loaded while its draft still loaded, and the header went on naming the remote.)
    state.providers.lock().await.select(None, &state.store).await?;
    let worker = state.inner().clone();
    let target = path.clone();
    let (options, draft) = (state.settings().load_options(&path), state.settings().draft_for(&path));
    let loaded =
        tauri::async_runtime::spawn_blocking(move || load_blocking(&app, &worker.engine, &worker.model, &target, options, draft)).await??;
    let mut settings = state.settings();
    settings.model_path = Some(path);
    settings.save(&state.store, &state.secrets).await?;
    *crate::sync::lock(&state.settings) = settings;
    Ok(loaded)
}

/// The models that could draft for the model at `model` (Settings › Model › Draft model):
/// chat models found in the model folders, other than it, that share its vocabulary (read from
/// their tokenizers; no weights are loaded).
#[tauri::command]
pub async fn draft_candidates(state: App<'_>, model: PathBuf) -> Result<Vec<ModelSummary>, Failure> {
    let folders = state.model_folders();
    let found = tauri::async_runtime::spawn_blocking(move || {
        discover(&folders)
            .into_iter()
            .filter(|m| m.supported && !m.embedding && m.path != model)
            .filter(|m| matches!(draft_vocabulary_mismatch(&model, &m.path), Ok(None)))
            .collect()
    })
    .await?;
    Ok(found)
}

/// Unloads the local model to free its memory. Refused while a reply is being written.
#[tauri::command]
pub fn unload_model(app: AppHandle, state: App<'_>) -> Result<(), Failure> {
    if state.model.state().loading.is_some() {
        return Err("A model is loading; wait for it to finish, then unload it.".into());
    }
    if !lock(&state.replies).is_empty() {
        return Err("A reply is being written; stop it before unloading the model.".into());
    }
    Ok(crate::models::slot::unload(&app, &state.engine, &state.model)?)
}
