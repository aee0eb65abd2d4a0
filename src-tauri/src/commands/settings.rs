//! The settings pane.

use super::App;
use crate::failure::Failure;
use crate::local_server::ServerStatus;
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
/// server follows at once (a port that cannot be opened shows in its status).
#[tauri::command]
pub async fn save_settings(state: App<'_>, settings: Settings) -> Result<Settings, Failure> {
    settings.save(&state.store, &state.secrets).await?;
    *lock(&state.settings) = settings.clone();
    state.apply_server_settings(&settings).await;
    Ok(settings)
}

/// Whether the local server runs, where, and how many requests it is serving.
#[tauri::command]
pub async fn server_status(state: App<'_>) -> Result<ServerStatus, Failure> {
    Ok(state.server.status().await)
}
