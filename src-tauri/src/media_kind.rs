//! What an attached file is, from its first bytes (never its name alone), and its metadata.
//! The engine's media decoders check the content fully when a model uses it.

use confab_store::AttachmentMeta;

/// Larger files are refused before they are read.
pub const MAX_ATTACHMENT_BYTES: u64 = 200_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaKind {
    Image,
    Audio,
}

impl MediaKind {
    pub fn of_mime(mime: &str) -> Option<MediaKind> {
        if mime.starts_with("image/") {
            Some(MediaKind::Image)
        } else if mime.starts_with("audio/") {
            Some(MediaKind::Audio)
        } else {
            None
        }
    }
}

const SUPPORTED: &str = "Confab takes images (PNG, JPEG, WebP, GIF, BMP, TIFF) and audio (WAV, MP3, FLAC, Ogg, M4A)";

/// The file's type from its signature, with image dimensions where the header gives them.
pub fn inspect(name: &str, bytes: &[u8]) -> Result<AttachmentMeta, String> {
    if bytes.is_empty() {
        return Err(format!("{name} is empty."));
    }
    let mime = sniff(bytes).ok_or_else(|| format!("{name} is not a file Confab can read. {SUPPORTED}."))?;
    let (width, height) = if mime == "image/png" { png_size(bytes).ok_or_else(|| corrupt(name))? } else { (0, 0) };
    let known = |v: u32| (v > 0).then_some(v);
    Ok(AttachmentMeta {
        mime: mime.into(),
        original_name: Some(name.into()),
        width: known(width),
        height: known(height),
        duration_ms: None,
    })
}

fn corrupt(name: &str) -> String {
    format!("{name} looks like an image but is damaged or incomplete. Open and re-save it, then try again.")
}

fn sniff(b: &[u8]) -> Option<&'static str> {
    let at = |offset: usize, magic: &[u8]| b.get(offset..offset + magic.len()) == Some(magic);
    Some(match () {
        _ if at(0, b"\x89PNG\r\n\x1a\n") => "image/png",
        _ if at(0, b"\xff\xd8\xff") => "image/jpeg",
        _ if at(0, b"GIF87a") || at(0, b"GIF89a") => "image/gif",
        _ if at(0, b"RIFF") && at(8, b"WEBP") => "image/webp",
        _ if at(0, b"BM") && b.len() > 26 => "image/bmp",
        _ if at(0, b"II*\0") || at(0, b"MM\0*") => "image/tiff",
        _ if at(0, b"RIFF") && at(8, b"WAVE") => "audio/wav",
        _ if at(0, b"fLaC") => "audio/flac",
        _ if at(0, b"OggS") => "audio/ogg",
        _ if at(0, b"ID3") || (b.len() > 1 && b[0] == 0xff && b[1] & 0xe0 == 0xe0) => "audio/mpeg",
        _ if at(4, b"ftypM4A") || at(4, b"ftypmp42") || at(4, b"ftypisom") => "audio/mp4",
        _ => return None,
    })
}

/// Width and height from a PNG's IHDR chunk; `None` when the header is damaged.
fn png_size(b: &[u8]) -> Option<(u32, u32)> {
    if b.get(12..16)? != b"IHDR" {
        return None;
    }
    let read = |at: usize| Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?));
    let (w, h) = (read(16)?, read(20)?);
    (w > 0 && h > 0).then_some((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_decide_the_type() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        png.extend(3u32.to_be_bytes());
        png.extend(2u32.to_be_bytes());
        let meta = inspect("a.png", &png).unwrap();
        assert_eq!((meta.mime.as_str(), meta.width, meta.height), ("image/png", Some(3), Some(2)));
        assert_eq!(inspect("b.wav", b"RIFF\0\0\0\0WAVEfmt ").unwrap().mime, "audio/wav");
    }

    #[test]
    fn unknown_empty_and_damaged_files_say_what_to_do() {
        assert!(inspect("notes.zip", b"PK\x03\x04rest").unwrap_err().contains("takes images"));
        assert!(inspect("empty.png", b"").unwrap_err().contains("empty"));
        assert!(inspect("broken.png", b"\x89PNG\r\n\x1a\ngarbage").unwrap_err().contains("damaged"));
    }
}
