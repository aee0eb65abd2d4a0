//! Links and folders handed to the desktop (desktop/opener.rs): a link the person confirmed, a model's
//! folder. Nothing else is opened. And the folder picker's listings (desktop/folders.rs).

use std::path::{Component, PathBuf};

use super::App;
use crate::desktop::folders::{self, FolderListing};
use crate::desktop::opener;
use crate::failure::Failure;

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
    // Checked as written, not resolved: a model folder may hold links to models kept elsewhere
    // (the link is what the picker lists). `..` could lead out of the folders, so it is refused.
    let inside = state.model_folders().iter().any(|folder| path.starts_with(folder));
    if !inside || path.components().any(|c| c == Component::ParentDir) {
        return Err(format!("{} is not in a model folder, so it is not shown.", path.display()).into());
    }
    if !path.exists() {
        return Err(format!("{} is no longer there; refresh the model list.", path.display()).into());
    }
    let folder = if path.is_dir() { path.as_path() } else { path.parent().unwrap_or(&path) };
    Ok(opener::open(folder.as_os_str())?)
}

/// One folder for the model-folder picker: its subfolders and which hold models. Without a
/// path, the home folder.
#[tauri::command]
pub async fn list_folder(path: Option<PathBuf>) -> Result<FolderListing, Failure> {
    let path = path.unwrap_or_else(folders::start_folder);
    // A slow disk (a network share) must not hold up the window's other calls.
    let listing = tauri::async_runtime::spawn_blocking(move || folders::list(&path)).await.map_err(|e| e.to_string())?;
    Ok(listing?)
}
