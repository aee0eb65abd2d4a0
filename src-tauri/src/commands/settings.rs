//! The settings pane.

use super::App;
use crate::failure::Failure;
use crate::settings::Settings;
use crate::state::lock;

#[tauri::command]
pub fn get_settings(state: App<'_>) -> Settings {
    state.settings()
}

/// Checks and saves; a rejected value changes nothing and the message names it.
#[tauri::command]
pub async fn save_settings(state: App<'_>, settings: Settings) -> Result<Settings, Failure> {
    settings.save(&state.store).await?;
    *lock(&state.settings) = settings.clone();
    Ok(settings)
}
