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
    decode_declared(bytes, None)
}

/// A web page's bytes: as `decode`, but bytes that are not UTF-8 are read in the encoding the page
/// declares (`<meta charset>`, or `http-equiv` content's `charset=`, in its first 1024 bytes, as a
/// browser looks), and refused as damaged when they are not valid in it either (never shown as
/// the wrong characters).
pub(crate) fn decode_html(bytes: &[u8]) -> Result<Decoded, DocumentProblem> {
    decode_declared(bytes, declared_charset(&bytes[..bytes.len().min(1024)]))
}

/// The encoding a page's head declares.
fn declared_charset(head: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    let lower: Vec<u8> = head.to_ascii_lowercase();
    let at = lower.windows(8).position(|w| w == b"charset=")? + 8;
    let label: Vec<u8> = lower[at..]
        .iter()
        .skip_while(|b| matches!(b, b'"' | b'\'' | b' '))
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':' | b'.'))
        .copied()
        .collect();
    encoding_rs::Encoding::for_label(&label)
}

fn decode_declared(bytes: &[u8], declared: Option<&'static encoding_rs::Encoding>) -> Result<Decoded, DocumentProblem> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(DocumentProblem::Compressed);
    }
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
        Err(_) if declared.is_some_and(|e| e != encoding_rs::UTF_8 && e.is_ascii_compatible()) => {
            let encoding = declared.unwrap_or(encoding_rs::WINDOWS_1252);
            let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
            if had_errors {
                return Err(DocumentProblem::Damaged {
                    detail: format!("its bytes are not valid {}, the encoding it declares, nor UTF-8", encoding.name()),
                });
            }
            let note = (encoding != encoding_rs::WINDOWS_1252 && encoding.name() != "ISO-8859-1")
                .then(|| format!("read as {}, the encoding the page declares", encoding.name()));
            Ok(Decoded { text: text.into_owned(), note })
        }
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

    #[test]
    fn compressed_bytes_are_refused() {
        assert_eq!(decode(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03").err(), Some(DocumentProblem::Compressed));
        assert_eq!(decode_html(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03").err(), Some(DocumentProblem::Compressed));
    }

    /// A page in the encoding it declares reads in it (Shift_JIS read as Latin-1 is garbage); one
    /// whose bytes are valid in neither is refused.
    #[test]
    fn a_page_reads_in_the_encoding_it_declares() {
        let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode("<meta charset=\"shift_jis\"><p>土壌の調査</p>");
        let page = decode_html(&sjis).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(page.text, "<meta charset=\"shift_jis\"><p>土壌の調査</p>");
        assert!(page.note.is_some_and(|n| n.contains("Shift_JIS")));
        // Declared in http-equiv's content, in single quotes.
        let (koi8, _, _) = encoding_rs::KOI8_R.encode("<meta http-equiv='Content-Type' content='text/html; charset=koi8-r'>Почва");
        assert!(decode_html(&koi8).is_ok_and(|p| p.text.ends_with("Почва")));
        // Declared Latin-1: read as it is, with no note (Windows-1252 is what the label means).
        assert!(decode_html(b"<meta charset=iso-8859-1>caf\xe9").is_ok_and(|p| p.text.ends_with("café") && p.note.is_none()));
        // Valid UTF-8 wins over a wrong declaration.
        assert_eq!(
            decode_html("<meta charset=iso-8859-1>café".as_bytes()).ok().map(|p| p.text),
            Some("<meta charset=iso-8859-1>café".into())
        );
        // Bytes that are no Shift_JIS (a lead byte with no trail byte) nor UTF-8.
        let bad = decode_html(b"<meta charset=\"shift_jis\"><p>\x82\x20\x82</p>");
        assert!(matches!(&bad, Err(DocumentProblem::Damaged { detail }) if detail.contains("not valid Shift_JIS")), "{:?}", bad.err());
    }
}
