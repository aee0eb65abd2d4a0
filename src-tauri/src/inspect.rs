//! What an attached file is, checked by the media crate's decoders before it is stored: the
//! limits (size, pixels, duration, frames) first, then images decoded in full and a video's
//! first frame, so a damaged one is refused now rather than when a model reads it.

use std::path::Path;

use confab_media::{decode_image, decode_video, probe, MediaKind, MediaLimits};
use confab_store::AttachmentMeta;

/// The file's metadata for the store, or a message naming the file and what to do.
pub fn inspect_file(path: &Path, name: &str) -> Result<AttachmentMeta, String> {
    let limits = MediaLimits::default();
    let info = probe(path, &limits).map_err(|e| e.to_string())?;
    match info.kind {
        MediaKind::Image => drop(decode_image(path, &limits).map_err(|e| e.to_string())?),
        MediaKind::Video => drop(decode_video(path, &[0], &limits).map_err(|e| e.to_string())?),
        MediaKind::Audio => {}
    }
    Ok(AttachmentMeta {
        mime: info.kind.stored_mime(info.mime),
        original_name: Some(name.into()),
        width: info.width,
        height: info.height,
        duration_ms: info.seconds.map(|s| (s * 1000.0).round() as u64),
    })
}

/// Pasted or picked bytes: checked through a temporary file that keeps the original name,
/// since the decoders name the file in their messages and read formats by extension too.
pub fn inspect_bytes(name: &str, bytes: &[u8]) -> Result<AttachmentMeta, String> {
    let safe_name = Path::new(name).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "pasted".into());
    let dir = tempfile::tempdir().map_err(|e| format!("could not check {name}: {e}"))?;
    let path = dir.path().join(&safe_name);
    std::fs::write(&path, bytes).map_err(|e| format!("could not check {name}: {e}"))?;
    inspect_file(&path, &safe_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_empty_and_damaged_files_are_refused_by_name() {
        assert!(inspect_bytes("notes.zip", b"PK\x03\x04rest").unwrap_err().contains("notes.zip"));
        assert!(inspect_bytes("empty.png", b"").unwrap_err().contains("empty.png"));
        let broken = inspect_bytes("broken.png", b"\x89PNG\r\n\x1a\ngarbage garbage garbage").unwrap_err();
        assert!(broken.contains("broken.png"), "{broken}");
    }

    #[test]
    fn a_real_image_gives_its_size() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/engine/tests/fixtures/media");
        let png = std::fs::read_dir(&fixture)
            .expect("media fixtures")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.extension().is_some_and(|e| e == "png") && std::fs::metadata(p).map(|m| m.len() < 100_000).unwrap_or(false))
            .expect("a png fixture");
        let meta = inspect_bytes("photo.png", &std::fs::read(png).unwrap()).expect("a valid png");
        assert_eq!(meta.mime, "image/png");
        assert!(meta.width.unwrap() > 0 && meta.height.unwrap() > 0);
    }
}
