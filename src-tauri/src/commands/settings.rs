//! The settings pane.

use tauri::AppHandle;

use super::App;
use crate::failure::Failure;
use crate::local_server::ServerStatus;
use crate::models::slot::{load_blocking, set_draft, unload};
use crate::settings::{sampling_presets, SamplingPreset, Settings};
use crate::sync::lock;

#[tauri::command]
pub fn get_settings(state: App<'_>) -> Settings {
    state.settings()
}

/// What the pane offers besides the saved settings: the defaults ("Reset to defaults" puts
/// them back; nothing is saved until Save) and the sampling presets.
#[derive(Debug, serde::Serialize, ts_rs::TS)]
pub struct SettingsChoices {
    pub defaults: Settings,
    pub presets: Vec<SamplingPreset>,
}

#[tauri::command]
pub fn settings_choices() -> SettingsChoices {
    SettingsChoices { defaults: Settings::default(), presets: sampling_presets() }
}

/// Checks and saves; a rejected value changes nothing and the message names it. The local
/// server follows at once (a port that cannot be opened shows in its status). A new keys/values
/// precision for the loaded model reloads it behind the window, which shows the load as usual.
#[tauri::command]
pub async fn save_settings(app: AppHandle, state: App<'_>, settings: Settings) -> Result<Settings, Failure> {
    let loaded = state.model.current().map(|current| current.info.path);
    let reload = loaded.filter(|path| state.settings().load_options(path).kv_quantization != settings.load_options(path).kv_quantization);
    if reload.is_some() {
        if state.model.state().loading.is_some() {
            return Err("A model is loading; wait for it to finish, then change its keys and values.".into());
        }
        if !lock(&state.replies).is_empty() {
            return Err("A reply is being written; stop it before changing the loaded model's keys and values (saving reloads it).".into());
        }
    }
    // The loaded model's draft, where the choice changed it.
    let redraft = state
        .model
        .current()
        .map(|current| current.info.path)
        .filter(|path| state.settings().draft_for(path).map(|(draft, _)| draft) != settings.draft_for(path).map(|(draft, _)| draft));
    settings.save(&state.store, &state.secrets).await?;
    *lock(&state.settings) = settings.clone();
    state.apply_server_settings(&settings).await;
    if let Some(path) = reload {
        let worker = state.inner().clone();
        let (options, draft) = (settings.load_options(&path), settings.draft_for(&path));
        tauri::async_runtime::spawn_blocking(move || {
            // Unloaded first: the same weights twice could not fit where memory is tight.
            let reloaded = unload(&app, &worker.engine, &worker.model)
                .and_then(|()| load_blocking(&app, &worker.engine, &worker.model, &path, options, draft));
            if let Err(e) = reloaded {
                tracing::warn!("reloading the model with its new keys and values failed: {e}");
            }
        });
    } else if let Some(path) = redraft {
        let worker = state.inner().clone();
        let draft = settings.draft_for(&path);
        // A refused draft says why in the model's state; the settings stay saved.
        tauri::async_runtime::spawn_blocking(move || set_draft(&app, &worker.engine, &worker.model, draft));
    }
    Ok(settings)
}

/// Whether the local server runs, where, and how many requests it is serving.
#[tauri::command]
pub async fn server_status(state: App<'_>) -> Result<ServerStatus, Failure> {
    Ok(state.server.status().await)
}
