//! Files the user drops, picks or pastes: checked, then kept in the store by content hash.

use std::path::{Path, PathBuf};

use confab_store::{Attachment, AttachmentHash};
use tauri::ipc::Response;

use super::App;
use crate::attachments::documents::{is_document, read_stored, DocumentInfo};
use crate::attachments::inspect::{inspect_bytes, inspect_file};
use crate::failure::Failure;

/// Files dropped on the window. Only paths the window's own drop event delivered are read.
#[tauri::command]
pub async fn attach_paths(state: App<'_>, paths: Vec<PathBuf>) -> Result<Vec<Attachment>, Failure> {
    let mut attached = Vec::new();
    for path in paths {
        if !state.was_dropped(&path) {
            return Err(format!("{} was not dropped on Confab; drag it onto the window or use the paperclip.", name_of(&path)).into());
        }
        let name = name_of(&path);
        let checked = path.clone();
        let meta = tauri::async_runtime::spawn_blocking(move || inspect_file(&checked, &name)).await??;
        let hash = state.store.add_attachment_file(&path, &meta).await?;
        attached.push(state.store.attachment(&hash).await?);
    }
    Ok(attached)
}

/// A picked or pasted file, as bytes.
#[tauri::command]
pub async fn attach_bytes(state: App<'_>, name: String, bytes: Vec<u8>) -> Result<Attachment, Failure> {
    let (meta, bytes) = tauri::async_runtime::spawn_blocking(move || inspect_bytes(&name, &bytes).map(|m| (m, bytes))).await??;
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

/// What a document attachment's chip shows: its format, pages and notes.
#[tauri::command]
pub async fn document_info(state: App<'_>, hash: String) -> Result<DocumentInfo, Failure> {
    let attachment = state.store.attachment(&AttachmentHash::parse(&hash)?).await?;
    if !is_document(&attachment) {
        return Err(format!("{} is not a document", attachment.original_name.as_deref().unwrap_or("the attachment")).into());
    }
    Ok(DocumentInfo::of(&read_stored(&state.store, &attachment).await?))
}

/// A video attachment's first frame as a PNG, for its chip and bubble (the web view need not
/// play the file's codec).
#[tauri::command]
pub async fn attachment_thumbnail(state: App<'_>, hash: String) -> Result<Response, Failure> {
    let hash = AttachmentHash::parse(&hash)?;
    let path = state.store.attachment_path(&hash).await?;
    let png = tauri::async_runtime::spawn_blocking(move || {
        confab_media::video_thumbnail(&path, THUMBNAIL_SIDE, &confab_media::MediaLimits::default())
    })
    .await
    .map_err(|e| Failure(e.to_string()))?
    .map_err(|e| Failure(e.to_string()))?;
    Ok(Response::new(png))
}

/// Chips show videos at 64 px and bubbles at up to 240; twice that for high-density screens.
const THUMBNAIL_SIDE: u32 = 480;

async fn tokio_read(path: PathBuf) -> Result<Vec<u8>, Failure> {
    tauri::async_runtime::spawn_blocking(move || std::fs::read(&path)).await.map_err(|e| Failure(e.to_string()))?.map_err(Failure::from)
}

fn name_of(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string())
}
