//! Files the user drops, picks or pastes: checked, then kept in the store by content hash.

use std::path::{Path, PathBuf};

use confab_store::{Attachment, AttachmentHash};
use tauri::ipc::Response;

use super::App;
use crate::failure::Failure;
use crate::media_kind::{inspect, MediaKind, MAX_ATTACHMENT_BYTES};
use crate::model_slot::LoadedModel;

/// Files dropped on the window. Only paths the window's own drop event delivered are read.
#[tauri::command]
pub async fn attach_paths(state: App<'_>, paths: Vec<PathBuf>) -> Result<Vec<Attachment>, Failure> {
    let mut attached = Vec::new();
    for path in paths {
        if !state.was_dropped(&path) {
            return Err(format!("{} was not dropped on Confab; drag it onto the window or use the paperclip.", name_of(&path)).into());
        }
        let size = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", name_of(&path)))?.len();
        if size > MAX_ATTACHMENT_BYTES {
            return Err(too_big(&name_of(&path), size).into());
        }
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", name_of(&path)))?;
        let meta = inspect(&name_of(&path), &bytes)?;
        let hash = state.store.add_attachment_bytes(bytes, &meta).await?;
        attached.push(state.store.attachment(&hash).await?);
    }
    Ok(attached)
}

/// A picked or pasted file, as bytes.
#[tauri::command]
pub async fn attach_bytes(state: App<'_>, name: String, bytes: Vec<u8>) -> Result<Attachment, Failure> {
    if bytes.len() as u64 > MAX_ATTACHMENT_BYTES {
        return Err(too_big(&name, bytes.len() as u64).into());
    }
    let meta = inspect(&name, &bytes)?;
    let hash = state.store.add_attachment_bytes(bytes, &meta).await?;
    Ok(state.store.attachment(&hash).await?)
}

/// The bytes of a stored attachment (thumbnails, playback), sent raw rather than as JSON.
#[tauri::command]
pub async fn attachment_bytes(state: App<'_>, hash: String) -> Result<Response, Failure> {
    let hash = AttachmentHash::parse(&hash)?;
    let path = state.store.attachment_path(&hash).await?;
    let bytes = tokio_read(path).await?;
    Ok(Response::new(bytes))
}

async fn tokio_read(path: PathBuf) -> Result<Vec<u8>, Failure> {
    tauri::async_runtime::spawn_blocking(move || std::fs::read(&path))
        .await
        .map_err(|e| Failure(e.to_string()))?
        .map_err(Failure::from)
}

/// A text-only model gets no images; the message names what would work.
pub fn check_model_takes(model: &LoadedModel, attachment: &Attachment) -> Result<(), Failure> {
    let name = attachment.original_name.as_deref().unwrap_or("this file");
    let kind = MediaKind::of_mime(&attachment.mime);
    let (ok, what) = match kind {
        Some(MediaKind::Image) => (model.vision, "images"),
        Some(MediaKind::Audio) => (model.audio, "audio"),
        None => (false, "this kind of file"),
    };
    if ok {
        return Ok(());
    }
    Err(format!(
        "{} reads text only, so it cannot take {name} ({what}). Load a model with {} (such as Gemma 4) from the model menu, or remove the attachment.",
        model.name,
        if what == "audio" { "audio" } else { "vision" }
    )
    .into())
}

fn name_of(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string())
}

fn too_big(name: &str, size: u64) -> String {
    format!(
        "{name} is {} MB; attachments can be at most {} MB.",
        size / 1_000_000,
        MAX_ATTACHMENT_BYTES / 1_000_000
    )
}

