//! A Word document's text: the paragraphs of `word/document.xml` in order, headings marked as
//! Markdown headings (`Title` is `#`, `Heading N` is N+1 `#`s), list paragraphs as `- ` items,
//! table cells separated by ` | `.

use std::io::{Cursor, Read};

use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;

use crate::error::DocumentProblem;
use crate::limits::MAX_INFLATED_PART_BYTES;

pub(crate) fn read(bytes: &[u8]) -> Result<String, DocumentProblem> {
    let damaged = |detail: String| DocumentProblem::Damaged { detail };
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| damaged(format!("not a Word document: {e}")))?;
    let mut part = archive.by_name("word/document.xml").map_err(|_| damaged("not a Word document: it has no word/document.xml".into()))?;
    if part.encrypted() {
        return Err(DocumentProblem::Encrypted);
    }
    let mut xml = String::new();
    part.by_ref()
        .take(MAX_INFLATED_PART_BYTES as u64 + 1)
        .read_to_string(&mut xml)
        .map_err(|e| damaged(format!("word/document.xml: {e}")))?;
    if xml.len() > MAX_INFLATED_PART_BYTES {
        return Err(DocumentProblem::TooMuchText { bytes: xml.len(), limit: MAX_INFLATED_PART_BYTES });
    }
    paragraphs(&xml).map_err(|e| damaged(format!("word/document.xml: {e}")))
}

/// The paragraph being read.
#[derive(Default)]
struct Paragraph {
    text: String,
    /// 0 for the title, N for `Heading N`.
    heading: Option<usize>,
    list_item: bool,
}

fn paragraphs(xml: &str) -> Result<String, quick_xml::Error> {
    let mut reader = Reader::from_str(xml);
    let mut out: Vec<String> = Vec::new();
    let mut paragraph: Option<Paragraph> = None;
    let mut in_text = false;
    let mut row: Option<Vec<String>> = None;
    loop {
        match reader.read_event()? {
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
