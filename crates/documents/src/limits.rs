//! How big a document may be: the limits themselves are `confab_limits`' (`document.*`), checked
//! before the expensive work (the file's size before reading it, the PDF's page count before
//! extracting any page); here, how large a CSV may be and still be shown as a table.

pub use confab_limits::{DOCUMENT_FILE_BYTES, DOCUMENT_INFLATED_PART_BYTES, DOCUMENT_PDF_PAGES, DOCUMENT_TEXT_BYTES};

/// Most bytes one compressed part may inflate to, as a length in memory.
pub const MAX_INFLATED_PART_BYTES: usize = DOCUMENT_INFLATED_PART_BYTES.as_usize();

/// Most files one DOCX archive may hold (`document.zip_entries`).
pub const MAX_DOCX_ENTRIES: usize = confab_limits::DOCUMENT_ZIP_ENTRIES.as_usize();

/// How deep a DOCX's XML may nest elements (`document.xml_depth`).
pub const MAX_XML_DEPTH: usize = confab_limits::DOCUMENT_XML_DEPTH.as_usize();

/// CSV files up to this many rows and columns are shown as a Markdown table; larger ones as the
/// text they are.
pub const CSV_TABLE_MAX_ROWS: usize = 100;
pub const CSV_TABLE_MAX_COLUMNS: usize = 12;
