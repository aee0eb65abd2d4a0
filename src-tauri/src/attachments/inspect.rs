//! What an attached file is, checked before it is stored. Documents (by name, or a PDF by its
//! bytes) are read in full by the documents crate, so an encrypted, damaged or scanned one is
//! refused now. Media go through the media crate's decoders: the limits (size, pixels,
//! duration, frames) first, then images decoded in full and a video's first frame, so a
//! damaged one is refused now rather than when a model reads it.

use std::io::Read;
use std::path::Path;

use confab_documents::{DocumentFormat, DocumentProblem};
use confab_media::{decode_image, decode_video, probe, MediaError, MediaKind, MediaLimits, MediaProblem};
use confab_store::AttachmentMeta;

/// The file's metadata for the store, or a message naming the file and what to do.
pub fn inspect_file(path: &Path, name: &str) -> Result<AttachmentMeta, String> {
    if confab_documents::is_document_name(name) || starts_as_pdf(path) {
        match inspect_document(path, name) {
            // A name both kinds claim (`.ts`: TypeScript or an MPEG transport stream) that
            // holds binary data may be media.
            Err(DocumentProblem::NotText) if inspect_media(path, name).is_ok() => return inspect_media(path, name),
            Err(problem) => return Err(confab_documents::DocumentError::new(name, problem).to_string()),
            Ok(meta) => return Ok(meta),
        }
    }
    inspect_media(path, name)
}

fn starts_as_pdf(path: &Path) -> bool {
    let mut start = [0u8; 5];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut start)).is_ok() && &start == b"%PDF-"
}

/// A document read whole: what it is, for the store.
fn inspect_document(path: &Path, name: &str) -> Result<AttachmentMeta, DocumentProblem> {
    let unreadable = |e: std::io::Error| DocumentProblem::Unreadable { detail: e.to_string() };
    let bytes = std::fs::metadata(path).map_err(unreadable)?.len();
    if bytes > confab_documents::limits::DOCUMENT_FILE_BYTES.value {
        return Err(DocumentProblem::FileTooLarge { bytes, limit: confab_documents::limits::DOCUMENT_FILE_BYTES });
    }
    let data = std::fs::read(path).map_err(unreadable)?;
    let document = confab_documents::read_document(name, &data).map_err(|e| e.problem)?;
    tracing::debug!(file = name, format = %document.format.label(), pages = ?document.page_count(), "document attached");
    Ok(AttachmentMeta {
        mime: document.format.mime().into(),
        original_name: Some(name.into()),
        width: None,
        height: None,
        duration_ms: None,
    })
}

fn inspect_media(path: &Path, name: &str) -> Result<AttachmentMeta, String> {
    let limits = MediaLimits::default();
    let info = probe(path, &limits).map_err(|e| match e {
        // Neither media nor a document: say that documents are read too.
        MediaError::Media { problem: MediaProblem::Unrecognised, .. } => {
            format!("{e}, or a document: {}", DocumentFormat::ACCEPTED)
        }
        e => e.to_string(),
    })?;
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
    fn documents_are_read_when_attached_and_refused_with_their_problem() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/documents/tests/fixtures");
        let pdf = inspect_bytes("report.pdf", &std::fs::read(fixtures.join("two_pages.pdf")).unwrap()).expect("a readable PDF");
        assert_eq!(pdf.mime, "application/pdf");
        assert_eq!(pdf.original_name.as_deref(), Some("report.pdf"));
        // A PDF under another name is still one.
        assert_eq!(inspect_bytes("report.bin", &std::fs::read(fixtures.join("two_pages.pdf")).unwrap()).unwrap().mime, "application/pdf");
        assert_eq!(inspect_bytes("notes.md", b"# Notes\n").unwrap().mime, "text/markdown");
        assert_eq!(inspect_bytes("main.rs", b"fn main() {}\n").unwrap().mime, "text/x-source");
        let locked = inspect_bytes("locked.pdf", &std::fs::read(fixtures.join("encrypted.pdf")).unwrap()).unwrap_err();
        assert!(locked.starts_with("locked.pdf: the PDF is protected with a password"), "{locked}");
        // Scanned pages are read as their images (given to a vision model); a PDF with neither
        // text nor an image is refused.
        assert_eq!(inspect_bytes("scan.pdf", &std::fs::read(fixtures.join("scanned.pdf")).unwrap()).unwrap().mime, "application/pdf");
        let blank = inspect_bytes("blank.pdf", &std::fs::read(fixtures.join("blank.pdf")).unwrap()).unwrap_err();
        assert!(blank.contains("no text layer"), "{blank}");
        // Neither media nor a document: the message names both.
        let rtf = inspect_bytes("notes.rtf", b"{\\rtf1 notes}").unwrap_err();
        assert!(rtf.contains("or a document: PDF, DOCX"), "{rtf}");
    }

    #[test]
    fn a_real_image_gives_its_size() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/media/tests/fixtures/media");
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
