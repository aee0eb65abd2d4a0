//! A Word document's text: the paragraphs of `word/document.xml` in order, headings marked as
//! Markdown headings (`Title` is `#`, `Heading N` is N+1 `#`s), list paragraphs as `- ` items,
//! table cells separated by ` | `.

use std::io::{Cursor, Read};

use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;

use crate::error::DocumentProblem;
use crate::limits::{MAX_DOCX_ENTRIES, MAX_INFLATED_PART_BYTES, MAX_XML_DEPTH};

/// The part that holds a Word document's text.
const BODY_PART: &str = "word/document.xml";

pub(crate) fn read(bytes: &[u8]) -> Result<String, DocumentProblem> {
    let damaged = |detail: String| DocumentProblem::Damaged { detail };
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| {
        // A Word document is a ZIP archive: one that starts as a ZIP but does not open was cut
        // short (its directory is at the end) or broken; anything else is no Word document.
        damaged(if bytes.starts_with(b"PK\x03\x04") {
            format!("the Word document is cut short or its ZIP structure is broken: {e}")
        } else {
            "not a Word document: a .docx file is a ZIP archive and this is not one".into()
        })
    })?;
    if archive.len() > MAX_DOCX_ENTRIES {
        return Err(DocumentProblem::TooManyEntries { entries: archive.len(), limit: MAX_DOCX_ENTRIES });
    }
    let mut part = archive
        .by_name(BODY_PART)
        .map_err(|_| damaged("not a whole Word document: it has no word/document.xml, the part that holds its text".into()))?;
    if part.encrypted() {
        return Err(DocumentProblem::Encrypted);
    }
    let too_large = || DocumentProblem::PartTooLarge { part: BODY_PART.into(), limit: MAX_INFLATED_PART_BYTES };
    // The size the archive declares refuses a bomb before it is inflated; one that lies is
    // stopped while inflating.
    if part.size() > MAX_INFLATED_PART_BYTES as u64 {
        return Err(too_large());
    }
    let mut raw = Vec::new();
    part.by_ref().take(MAX_INFLATED_PART_BYTES as u64 + 1).read_to_end(&mut raw).map_err(|e| {
        damaged(match e.kind() {
            std::io::ErrorKind::InvalidData if e.to_string().contains("checksum") => {
                "word/document.xml, the part that holds its text, is corrupt: its checksum fails".into()
            }
            _ => format!("word/document.xml, the part that holds its text, cannot be unpacked: {e}"),
        })
    })?;
    if raw.len() > MAX_INFLATED_PART_BYTES {
        return Err(too_large());
    }
    let xml = String::from_utf8(raw).map_err(|_| damaged("word/document.xml, the part that holds its text, is not UTF-8 text".into()))?;
    paragraphs(&xml).map_err(|e| match e {
        XmlError::TooDeep => DocumentProblem::XmlTooDeep { part: BODY_PART.into(), limit: MAX_XML_DEPTH },
        e => damaged(format!("word/document.xml, the part that holds its text, is not well-formed XML: {e}")),
    })
}

/// Why a document part's XML is not well formed.
#[derive(Debug)]
enum XmlError {
    Syntax(quick_xml::Error),
    /// The XML ends with elements still open: the part was cut off.
    CutOff,
    /// Elements nest deeper than `MAX_XML_DEPTH`.
    TooDeep,
}

impl std::fmt::Display for XmlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            XmlError::Syntax(e) => write!(f, "{e}"),
            XmlError::CutOff => f.write_str("it ends before its elements are closed (cut off)"),
            XmlError::TooDeep => write!(f, "its elements nest more than {MAX_XML_DEPTH} deep"),
        }
    }
}

impl From<quick_xml::Error> for XmlError {
    fn from(e: quick_xml::Error) -> Self {
        XmlError::Syntax(e)
    }
}

/// The paragraph being read.
#[derive(Default)]
struct Paragraph {
    text: String,
    /// 0 for the title, N for `Heading N`.
    heading: Option<usize>,
    list_item: bool,
}

fn paragraphs(xml: &str) -> Result<String, XmlError> {
    let mut reader = Reader::from_str(xml);
    // Elements open; a part whose root never closes was cut off, and what it holds so far is not
    // the document.
    let mut open = 0usize;
    let mut root_seen = false;
    let mut out: Vec<String> = Vec::new();
    let mut paragraph: Option<Paragraph> = None;
    let mut in_text = false;
    let mut row: Option<Vec<String>> = None;
    loop {
        let event = reader.read_event()?;
        match &event {
            Event::Start(_) => {
                open += 1;
                root_seen = true;
                if open > MAX_XML_DEPTH {
                    return Err(XmlError::TooDeep);
                }
            }
            Event::End(_) => open = open.saturating_sub(1),
            Event::Empty(_) => root_seen = true,
            _ => {}
        }
        match event {
            Event::Start(e) => match e.local_name().as_ref() {
                "p" => paragraph = Some(Paragraph::default()),
                "t" => in_text = true,
                "tr" => row = Some(Vec::new()),
                "numPr" => {
                    if let Some(p) = paragraph.as_mut() {
                        p.list_item = true;
                    }
                }
                "tc" => {
                    if let Some(row) = row.as_mut() {
                        row.push(String::new());
                    }
                }
                _ => {}
            },
            Event::Empty(e) => {
                if let Some(p) = paragraph.as_mut() {
                    style(&e, p);
                }
            }
            Event::Text(t) if in_text => {
                if let Some(p) = paragraph.as_mut() {
                    p.text.push_str(&t.xml10_content());
                }
            }
            Event::GeneralRef(r) if in_text => {
                if let Some(p) = paragraph.as_mut() {
                    let name: &str = &r;
                    match (r.resolve_char_ref().ok().flatten(), quick_xml::escape::resolve_xml_entity(name)) {
                        (Some(c), _) => p.text.push(c),
                        (None, Some(s)) => p.text.push_str(s),
                        (None, None) => {}
                    }
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                "t" => in_text = false,
                "p" => {
                    if let Some(p) = paragraph.take() {
                        let text = p.text.trim();
                        if let Some(cells) = row.as_mut() {
                            if let Some(cell) = cells.last_mut() {
                                if !cell.is_empty() && !text.is_empty() {
                                    cell.push(' ');
                                }
                                cell.push_str(text);
                            }
                        } else if !text.is_empty() {
                            out.push(match (p.heading, p.list_item) {
                                (Some(level), _) => format!("{} {text}", "#".repeat((level + 1).min(6))),
                                (None, true) => format!("- {text}"),
                                (None, false) => text.to_string(),
                            });
                        }
                    }
                }
                "tr" => {
                    if let Some(cells) = row.take() {
                        out.push(cells.join(" | "));
                    }
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    if open > 0 || !root_seen {
        return Err(XmlError::CutOff);
    }
    Ok(out.join("\n"))
}

/// Paragraph properties and in-run breaks, from empty elements.
fn style(e: &BytesStart, p: &mut Paragraph) {
    match e.local_name().as_ref() {
        "pStyle" => {
            let value = attribute(e, "val").unwrap_or_default();
            let lower = value.to_ascii_lowercase();
            if lower == "title" {
                p.heading = Some(0);
            } else if let Some(level) = lower.strip_prefix("heading").and_then(|n| n.trim().parse::<usize>().ok()) {
                p.heading = Some(level);
            } else if lower.starts_with("list") {
                p.list_item = true;
            }
        }
        "outlineLvl" if p.heading.is_none() => {
            p.heading = attribute(e, "val").and_then(|v| v.parse::<usize>().ok()).map(|level| level + 1);
        }
        "numPr" => p.list_item = true,
        // A tab in a run; one with a `val` is a tab stop in the paragraph's properties.
        "tab" if attribute(e, "val").is_none() => p.text.push('\t'),
        "br" | "cr" => p.text.push('\n'),
        _ => {}
    }
}

fn attribute(e: &BytesStart, local: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == local)
        .and_then(|a| a.normalized_value(quick_xml::XmlVersion::Implicit1_0).ok().map(|v| v.into_owned()))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    const BODY: &str = r#"<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>First paragraph.</w:t></w:r></w:p><w:p><w:r><w:t>Second paragraph.</w:t></w:r></w:p></w:body></w:document>"#;

    /// A ZIP with these parts, deflated.
    fn docx(parts: &[(&str, &str)]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for (name, text) in parts {
            zip.start_file(*name, options).unwrap_or_else(|e| panic!("{e}"));
            zip.write_all(text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        }
        zip.finish().unwrap_or_else(|e| panic!("{e}")).into_inner()
    }

    fn damage(bytes: &[u8]) -> String {
        match read(bytes) {
            Err(DocumentProblem::Damaged { detail }) => detail,
            other => panic!("not refused as damaged: {other:?}"),
        }
    }

    #[test]
    fn a_whole_document_reads() {
        assert_eq!(read(&docx(&[("word/document.xml", BODY)])).ok().as_deref(), Some("First paragraph.\nSecond paragraph."));
    }

    #[test]
    fn a_cut_short_archive_is_damaged() {
        let whole = docx(&[("[Content_Types].xml", "<Types/>"), ("word/document.xml", BODY)]);
        let detail = damage(&whole[..whole.len() / 2]);
        assert!(detail.starts_with("the Word document is cut short"), "{detail}");
        assert!(damage(b"plain text named .docx").starts_with("not a Word document: a .docx file is a ZIP archive"));
    }

    #[test]
    fn a_missing_body_part_is_damaged() {
        let detail = damage(&docx(&[("[Content_Types].xml", "<Types/>"), ("word/styles.xml", "<w:styles/>")]));
        assert!(detail.contains("it has no word/document.xml"), "{detail}");
    }

    /// A part cut off mid-paragraph is refused, not read as far as it goes.
    #[test]
    fn malformed_xml_is_damaged() {
        let cut = &BODY[..BODY.find("Second").unwrap_or_default()];
        let detail = damage(&docx(&[("word/document.xml", cut)]));
        assert!(detail.contains("is not well-formed XML: it ends before its elements are closed"), "{detail}");
        let mismatched = BODY.replace("</w:body>", "</w:bdy>");
        assert!(damage(&docx(&[("word/document.xml", &mismatched)])).contains("is not well-formed XML"));
        assert!(damage(&docx(&[("word/document.xml", "")])).contains("is not well-formed XML"));
    }

    /// A ZIP bomb: 100 kB that inflates past the limit is refused by its declared size before
    /// a byte is inflated, and by the bytes inflated when the declared size lies.
    #[test]
    fn a_zip_bomb_is_refused_naming_the_limit() {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("word/document.xml", options).unwrap_or_else(|e| panic!("{e}"));
        let (spaces, mebibytes) = (vec![b' '; 1 << 20], (MAX_INFLATED_PART_BYTES >> 20) + 1);
        for _ in 0..mebibytes {
            zip.write_all(&spaces).unwrap_or_else(|e| panic!("{e}"));
        }
        let bomb = zip.finish().unwrap_or_else(|e| panic!("{e}")).into_inner();
        assert!(bomb.len() < 200_000, "{} bytes", bomb.len());
        let problem = read(&bomb).unwrap_err();
        assert_eq!(problem, DocumentProblem::PartTooLarge { part: "word/document.xml".into(), limit: MAX_INFLATED_PART_BYTES });
        assert!(
            problem.to_string().starts_with("its word/document.xml unpacks to more than 64.0 MB (the limit, document.inflated_part_bytes)"),
            "{problem}"
        );

        // The same bomb declaring 1 kB (in its local header and its central directory).
        let declared = ((mebibytes as u32) << 20).to_le_bytes();
        let mut lying = bomb.clone();
        let at: Vec<usize> = lying.windows(4).enumerate().filter(|(_, w)| *w == declared).map(|(i, _)| i).collect();
        assert_eq!(at.len(), 2, "the declared size appears in both headers");
        for i in at {
            lying[i..i + 4].copy_from_slice(&1024u32.to_le_bytes());
        }
        match read(&lying) {
            Err(DocumentProblem::PartTooLarge { .. }) | Err(DocumentProblem::Damaged { .. }) => {}
            other => panic!("a lying bomb is not refused: {other:?}"),
        }
    }

    #[test]
    fn xml_nested_100k_deep_is_refused_naming_the_limit() {
        let depth = 100_000;
        let xml = format!("<w:document>{}{}</w:document>", "<w:p>".repeat(depth), "</w:p>".repeat(depth));
        let problem = read(&docx(&[("word/document.xml", &xml)])).unwrap_err();
        assert_eq!(problem, DocumentProblem::XmlTooDeep { part: "word/document.xml".into(), limit: MAX_XML_DEPTH });
        assert!(
            problem.to_string().starts_with("its word/document.xml nests elements more than 1000 deep (the limit, document.xml_depth)"),
            "{problem}"
        );
        // As deep as the limit reads.
        let xml = format!("{}{}", "<w:p>".repeat(MAX_XML_DEPTH), "</w:p>".repeat(MAX_XML_DEPTH));
        assert!(read(&docx(&[("word/document.xml", &xml)])).is_ok());
    }

    #[test]
    fn an_archive_of_too_many_entries_is_refused_naming_the_limit() {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        zip.start_file("word/document.xml", options).unwrap_or_else(|e| panic!("{e}"));
        zip.write_all(BODY.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        for i in 0..MAX_DOCX_ENTRIES {
            zip.start_file(format!("{i}"), options).unwrap_or_else(|e| panic!("{e}"));
        }
        let many = zip.finish().unwrap_or_else(|e| panic!("{e}")).into_inner();
        let problem = read(&many).unwrap_err();
        assert_eq!(problem, DocumentProblem::TooManyEntries { entries: MAX_DOCX_ENTRIES + 1, limit: MAX_DOCX_ENTRIES });
        assert!(problem.to_string().contains("holds 10001 files and the limit is 10000 (document.zip_entries)"), "{problem}");
    }

    #[test]
    fn corrupt_compressed_bytes_are_damaged() {
        let mut bytes = docx(&[("word/document.xml", &BODY.replace("First", &"First ".repeat(50)))]);
        let at = bytes.windows(17).position(|w| w == b"word/document.xml").unwrap_or_default() + 17;
        for b in &mut bytes[at + 30..at + 38] {
            *b ^= 0x5a;
        }
        let detail = damage(&bytes);
        assert!(detail.starts_with("word/document.xml, the part that holds its text, "), "{detail}");
    }
}
