//! Bytes that should be text, decoded sensibly: UTF-8 (a byte-order mark dropped), UTF-16 with a
//! byte-order mark, else Windows-1252 (Latin-1's superset, what older Windows and Mac files are)
//! with a note saying so. Binary data is refused rather than shown as noise.

use crate::error::DocumentProblem;

/// Decoded text and, when it was not UTF-8, a note saying how it was read.
pub(crate) struct Decoded {
    pub text: String,
    pub note: Option<String>,
}

pub(crate) fn decode(bytes: &[u8]) -> Result<Decoded, DocumentProblem> {
    if let Some((encoding, bom)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, had_errors) = encoding.decode_without_bom_handling(&bytes[bom..]);
        let note =
            (encoding != encoding_rs::UTF_8).then(|| format!("read as {} (the file starts with its byte-order mark)", encoding.name()));
        let note = if had_errors { Some(format!("read as {}; some bytes were not valid and show as �", encoding.name())) } else { note };
        return Ok(Decoded { text: text.into_owned(), note });
    }
    if looks_binary(bytes) {
        return Err(DocumentProblem::NotText);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(Decoded { text: text.to_string(), note: None }),
        Err(_) => {
            let (text, _, _) = encoding_rs::WINDOWS_1252.decode(bytes);
            Ok(Decoded {
                text: text.into_owned(),
                note: Some("the file is not UTF-8; it was read as Latin-1 (Windows-1252), so a few characters may be wrong".into()),
            })
        }
    }
}

/// NUL bytes do not occur in text files without a byte-order mark (UTF-16 without one is rare
/// enough to refuse); other control characters beyond a handful mean binary data.
fn looks_binary(bytes: &[u8]) -> bool {
    let sample = &bytes[..bytes.len().min(8192)];
    if sample.contains(&0) {
        return true;
    }
    let controls = sample.iter().filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c | 0x1b)).count();
    controls * 100 > sample.len().max(1) * 5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_utf16_and_latin1() {
        let plain = decode("naïve".as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plain.text, "naïve");
        assert!(plain.note.is_none());

        let bom = decode(b"\xEF\xBB\xBFhello").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(bom.text, "hello");
        assert!(bom.note.is_none());

        let mut utf16 = vec![0xFF, 0xFE];
        utf16.extend("Grüße".encode_utf16().flat_map(u16::to_le_bytes));
        let decoded = decode(&utf16).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(decoded.text, "Grüße");
        assert!(decoded.note.is_some_and(|n| n.contains("UTF-16LE")));

        let latin1 = decode(b"caf\xE9 cr\xE8me").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(latin1.text, "café crème");
        assert!(latin1.note.is_some_and(|n| n.contains("Latin-1")));

        assert_eq!(decode(b"\x7fELF\x02\x01\x01\x00\x00\x00").err(), Some(DocumentProblem::NotText));
    }
}
