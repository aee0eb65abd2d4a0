//! confab-documents: a document's bytes turned into text with its structure kept: a PDF's text
//! layer page by page in reading order, a Word document's paragraphs and headings, a web page's
//! visible text and headings, Markdown, plain text, source code with its language, and CSV. Each
//! file is checked as it is read (size and page limits, encrypted or damaged files, a PDF with no
//! text layer, binary data where text was promised), with errors that say what to do. No models:
//! the app reads an attachment with this crate alone, and `render` is the one place that decides
//! how a document reads in a prompt.

pub mod chunk;
mod csv;
mod docx;
pub mod error;
pub mod fit;
mod format;
mod html;
pub mod limits;
mod pdf;
pub mod render;
mod text;

use std::path::Path;

pub use self::chunk::{chunk_document, ChunkSettings, Passage};
pub use self::error::{DocumentError, DocumentProblem, Result};
pub use self::fit::{plan_documents, DocumentPlan, DocumentUse};
pub use self::format::DocumentFormat;
pub use self::render::{render_for_prompt, render_passages_for_prompt, with_documents, PassageSource};

use crate::limits::{DOCUMENT_FILE_BYTES, DOCUMENT_TEXT_BYTES};

/// A document read into text.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Document {
    /// The file's name as the person knows it.
    pub name: String,
    pub format: DocumentFormat,
    /// A PDF's pages, in order (the ones without text too, empty, so page numbers stay true);
    /// one section for every other format.
    pub sections: Vec<Section>,
    /// What the person should know about how it was read ("read as Latin-1", "page 3 has no
    /// text").
    pub notes: Vec<String>,
    /// A PDF's pages with no text layer that draw an image (scanned pages), in order: a model
    /// that reads images can be given them.
    #[serde(skip)]
    pub scanned_pages: Vec<ScannedPage>,
}

/// A page with no text layer and the image it draws.
#[derive(Debug, Clone, PartialEq)]
pub struct ScannedPage {
    /// The 1-based page number.
    pub page: u32,
    /// The page's image as a file, or why it could not be taken out (an encoding Confab does
    /// not decode, such as JBIG2).
    pub image: std::result::Result<PageImage, String>,
}

/// An image file taken out of a document.
#[derive(Debug, Clone, PartialEq)]
pub struct PageImage {
    /// "image/jpeg" or "image/png".
    pub mime: &'static str,
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Section {
    /// The 1-based page number, for formats that have pages.
    pub page: Option<u32>,
    /// The text, headings marked as Markdown headings.
    pub text: String,
}

impl Document {
    /// Pages, for a format that has them.
    pub fn page_count(&self) -> Option<u32> {
        self.sections.last().and_then(|s| s.page)
    }

    /// Whether every page is scanned: no text at all, only page images.
    pub fn only_scanned(&self) -> bool {
        !self.scanned_pages.is_empty() && self.sections.iter().all(|s| s.text.trim().is_empty())
    }

    /// The pages given as images to a model that reads them.
    pub fn page_images(&self) -> impl Iterator<Item = (u32, &PageImage)> {
        self.scanned_pages.iter().filter_map(|s| Some((s.page, s.image.as_ref().ok()?)))
    }

    /// All the text, sections separated by blank lines.
    pub fn text(&self) -> String {
        self.sections.iter().map(|s| s.text.as_str()).filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n\n")
    }
}

/// Whether a file with this name is read as a document (by its extension; PDFs are recognised
/// by their bytes too, see `read_document`).
pub fn is_document_name(name: &str) -> bool {
    DocumentFormat::of_name(name).is_some()
}

/// Reads a document from a file, checking its size before reading it.
pub fn read_document_file(path: &Path) -> Result<Document> {
    let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let unreadable = |e: std::io::Error| DocumentError::new(&name, DocumentProblem::Unreadable { detail: e.to_string() });
    let bytes = std::fs::metadata(path).map_err(unreadable)?.len();
    check_bytes(&name, bytes)?;
    let data = std::fs::read(path).map_err(unreadable)?;
    read_document(&name, &data)
}

/// Reads a document named `name` (its format comes from its first bytes where it has a
/// signature, else from the name's extension).
pub fn read_document(name: &str, bytes: &[u8]) -> Result<Document> {
    let error = |problem| DocumentError::new(name, problem);
    check_bytes(name, bytes.len() as u64)?;
    let format =
        DocumentFormat::detect(name, bytes).ok_or_else(|| error(DocumentProblem::Unsupported { extension: format::extension_of(name) }))?;
    // The PDF and ZIP readers take untrusted bytes; a panic in them is a damaged file, not a
    // crash.
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_format(&format, bytes))).unwrap_or_else(|panic| {
        let detail = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the reader failed".into());
        Err(DocumentProblem::Damaged { detail })
    });
    let Reading { sections, notes, scanned_pages } = read.map_err(error)?;
    let text_bytes: usize = sections.iter().map(|s| s.text.len()).sum();
    if text_bytes > DOCUMENT_TEXT_BYTES.as_usize() {
        return Err(error(DocumentProblem::TooMuchText { bytes: text_bytes, limit: DOCUMENT_TEXT_BYTES }));
    }
    tracing::debug!(file = name, format = %format.label(), sections = sections.len(), text_bytes, "document read");
    Ok(Document { name: name.to_string(), format, sections, notes, scanned_pages })
}

fn check_bytes(name: &str, bytes: u64) -> Result<()> {
    if bytes == 0 {
        return Err(DocumentError::new(name, DocumentProblem::EmptyFile));
    }
    if bytes > DOCUMENT_FILE_BYTES.value {
        return Err(DocumentError::new(name, DocumentProblem::FileTooLarge { bytes, limit: DOCUMENT_FILE_BYTES }));
    }
    Ok(())
}

struct Reading {
    sections: Vec<Section>,
    notes: Vec<String>,
    scanned_pages: Vec<ScannedPage>,
}

type Read = std::result::Result<Reading, DocumentProblem>;

fn read_format(format: &DocumentFormat, bytes: &[u8]) -> Read {
    let whole =
        |text: String, notes: Vec<String>| Ok(Reading { sections: vec![Section { page: None, text }], notes, scanned_pages: Vec::new() });
    match format {
        DocumentFormat::Pdf => read_pdf(bytes),
        DocumentFormat::Docx => whole(docx::read(bytes)?, Vec::new()),
        DocumentFormat::Html => {
            let decoded = text::decode_html(bytes)?;
            whole(html::visible_text(&decoded.text), decoded.note.into_iter().collect())
        }
        DocumentFormat::Csv { delimiter } => {
            let decoded = text::decode(bytes)?;
            whole(csv::render(&decoded.text, *delimiter), decoded.note.into_iter().collect())
        }
        DocumentFormat::Markdown | DocumentFormat::Text | DocumentFormat::Code { .. } => {
            let decoded = text::decode(bytes)?;
            whole(decoded.text.trim_end().to_string(), decoded.note.into_iter().collect())
        }
    }
}

fn read_pdf(bytes: &[u8]) -> Read {
    let pages = pdf::read(bytes)?;
    let blank: Vec<u32> =
        pages.iter().filter(|p| p.text.trim().is_empty() && p.scan.is_none() && !p.unreadable()).map(|p| p.number).collect();
    let unreadable: Vec<u32> = pages.iter().filter(|p| p.unreadable()).map(|p| p.number).collect();
    let scanned_pages: Vec<ScannedPage> =
        pages.iter().filter_map(|p| Some(ScannedPage { page: p.number, image: p.scan.clone()? })).collect();
    let readable = scanned_pages.iter().filter(|s| s.image.is_ok()).map(|s| s.page).collect::<Vec<_>>();
    // With no text anywhere, a document is worth reading only for page images a model that
    // reads images can be given.
    if pages.iter().all(|p| p.text.trim().is_empty()) && readable.is_empty() {
        return Err(DocumentProblem::NoTextLayer { pages: pages.len() as u32 });
    }
    let mut notes = Vec::new();
    if !readable.is_empty() {
        let (noun, one) = page_list(&readable);
        let (verb, them, images) = if one { ("is", "it", "an image") } else { ("are", "them", "images") };
        notes.push(format!(
            "{noun} {verb} scanned ({images} of text, no text layer): a vision model (one that reads images) is given {them} as {images}; other models get no content for {them}"
        ));
    }
    for scan in &scanned_pages {
        if let Err(reason) = &scan.image {
            notes.push(format!("page {} has no text layer and {reason}; its content is not included", scan.page));
        }
    }
    if !unreadable.is_empty() {
        let (noun, one) = page_list(&unreadable);
        let (verb, its) = if one { ("is", "its") } else { ("are", "their") };
        notes.push(format!(
            "{noun} {verb} left out: {its} text cannot be decoded (the fonts it is written in are missing from the file or damaged); export or download the PDF again"
        ));
    }
    for page in pages.iter().filter(|p| !p.unreadable() && p.unknown > 0) {
        notes.push(format!(
            "page {}: {} of its {} characters cannot be decoded (their font is missing or damaged) and are left out",
            page.number, page.unknown, page.glyphs
        ));
    }
    if !blank.is_empty() {
        let (noun, one) = page_list(&blank);
        let verb = if one { "has" } else { "have" };
        let imaged = pages.iter().any(|p| blank.contains(&p.number) && p.has_images);
        notes.push(if imaged {
            format!("{noun} {verb} no text layer (drawn as images); their content is not included")
        } else {
            format!("{noun} {verb} no text")
        });
    }
    let sections = pages.into_iter().map(|p| Section { page: Some(p.number), text: p.text }).collect();
    Ok(Reading { sections, notes, scanned_pages })
}

/// "page 3" or "pages 3, 4", and whether it is one page.
fn page_list(pages: &[u32]) -> (String, bool) {
    let list = pages.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let one = pages.len() == 1;
    (format!("{} {list}", if one { "page" } else { "pages" }), one)
}
