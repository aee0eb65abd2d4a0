//! The documents crate's one error type. Every message says what went wrong and what to do about
//! it: the app shows it on the attachment's chip as it is.

/// A document Confab cannot read; `file` is its name as the person knows it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}: {problem}")]
pub struct DocumentError {
    pub file: String,
    pub problem: DocumentProblem,
}

use crate::DocumentFormat;
use confab_limits::Limit;

pub type Result<T, E = DocumentError> = std::result::Result<T, E>;

impl DocumentError {
    pub fn new(file: impl Into<String>, problem: DocumentProblem) -> Self {
        DocumentError { file: file.into(), problem }
    }
}

/// What is wrong with a document. Each message ends with what to do about it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DocumentProblem {
    #[error("the file is empty; attach it again")]
    EmptyFile,

    #[error("the file is {} and the limit is {} ({}); attach a smaller file or the part you need", megabytes(*.bytes), megabytes(.limit.value), .limit.name)]
    FileTooLarge { bytes: u64, limit: Limit },

    #[error(
        "the PDF has {pages} pages and the limit is {} ({}); split it (print the pages you need to a new PDF) and attach the part you need", .limit.value, .limit.name
    )]
    TooManyPages { pages: u32, limit: Limit },

    #[error("its text is {} and the limit is {} ({}); attach the part you need", megabytes(*.bytes as u64), megabytes(.limit.value), .limit.name)]
    TooMuchText { bytes: usize, limit: Limit },

    #[error("its {part} unpacks to more than {} (the limit, {}), far more than any document needs; open it, save it again and attach that", megabytes(*.limit as u64), confab_limits::DOCUMENT_INFLATED_PART_BYTES.name)]
    PartTooLarge { part: String, limit: usize },

    #[error("the Word document's archive holds {entries} files and the limit is {limit} ({}); open it in Word, save it again and attach that", confab_limits::DOCUMENT_ZIP_ENTRIES.name)]
    TooManyEntries { entries: usize, limit: usize },

    #[error("its {part} nests elements more than {limit} deep (the limit, {}); open it in Word, save it again and attach that", confab_limits::DOCUMENT_XML_DEPTH.name)]
    XmlTooDeep { part: String, limit: usize },

    #[error("the PDF is protected with a password; open it, save or print it as a PDF without a password, and attach that")]
    Encrypted,

    #[error("this PDF has no text layer: it is scanned pages (images of text); run it through text recognition (OCR, e.g. macOS Preview or Adobe Acrobat) and attach the result, or attach the pages as images to a vision model")]
    NoTextLayer { pages: u32 },

    #[error("the file is damaged or incomplete ({detail}); export or download it again")]
    Damaged { detail: String },

    #[error("the file holds binary data, not text; attach a {} file", DocumentFormat::ACCEPTED)]
    NotText,

    #[error("the file is gzip-compressed, not text; decompress it (gunzip, or open it with an archive tool) and attach what it holds")]
    Compressed,

    #[error("{} are not supported; {}", kind_of(extension), unsupported_hint(extension))]
    Unsupported { extension: String },

    #[error("the file could not be read ({detail}); check that it still exists and is readable")]
    Unreadable { detail: String },
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn kind_of(extension: &str) -> String {
    if extension.is_empty() {
        "files without an extension".into()
    } else {
        format!(".{extension} files")
    }
}

/// What to do with a format we don't read: the common ones have a known way out.
fn unsupported_hint(extension: &str) -> &'static str {
    match extension {
        "doc" | "rtf" | "odt" | "pages" => "save it as DOCX or PDF and attach that",
        "xls" | "xlsx" | "ods" | "numbers" => "export the sheet as CSV and attach that",
        "ppt" | "pptx" | "odp" | "key" => "export the slides as PDF and attach that",
        "epub" | "mobi" => "convert the book to PDF or plain text and attach that",
        _ => "attach an image, audio clip or video, or a PDF, DOCX, HTML, Markdown, plain text, CSV or source code file",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_to_do() {
        let e = DocumentError::new("old.doc", DocumentProblem::Unsupported { extension: "doc".into() });
        assert_eq!(e.to_string(), "old.doc: .doc files are not supported; save it as DOCX or PDF and attach that");
        let e = DocumentError::new("scan.pdf", DocumentProblem::NoTextLayer { pages: 3 });
        assert!(e.to_string().starts_with("scan.pdf: this PDF has no text layer: it is scanned pages"));
        let e = DocumentProblem::FileTooLarge { bytes: 80_000_000, limit: confab_limits::DOCUMENT_FILE_BYTES };
        assert_eq!(
            e.to_string(),
            "the file is 80.0 MB and the limit is 50.0 MB (document.file_bytes); attach a smaller file or the part you need"
        );
    }
}
