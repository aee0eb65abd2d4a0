//! Links and folders handed to the desktop (opener.rs): a link the person confirmed, a model's
//! folder. Nothing else is opened.

use std::path::PathBuf;

use super::App;
use crate::failure::Failure;
use crate::opener;

/// Opens a web or mail link in the system's browser or mail app; anything else is refused with
/// a message that says why. The window asks the person before it calls this.
#[tauri::command]
pub fn open_link(url: String) -> Result<(), Failure> {
    let url = opener::checked_link(&url)?;
    tracing::info!(scheme = url.scheme(), "opening a link");
    Ok(opener::open(url.as_str().as_ref())?)
}

/// Shows a model in the file manager: its folder, or the folder holding a model file. Only
/// paths inside the folders searched for models are shown.
#[tauri::command]
pub fn show_in_folder(state: App<'_>, path: PathBuf) -> Result<(), Failure> {
    // Resolved first, so that `..` or a link cannot lead out of the model folders.
    let Ok(resolved) = path.canonicalize() else {
        return Err(format!("{} is no longer there; refresh the model list.", path.display()).into());
    };
    let inside = state.model_folders().iter().filter_map(|f| f.canonicalize().ok()).any(|f| resolved.starts_with(f));
    if !inside {
        return Err(format!("{} is not in a model folder, so it is not shown.", path.display()).into());
    }
    let folder = if resolved.is_dir() { resolved.as_path() } else { resolved.parent().unwrap_or(&resolved) };
    Ok(opener::open(folder.as_os_str())?)
}
