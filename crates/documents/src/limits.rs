//! How big a document may be: every limit in one place, checked before the expensive work (the
//! file's size before reading it, the PDF's page count before extracting any page).

/// Largest file accepted, in bytes.
pub const MAX_DOCUMENT_BYTES: u64 = 50_000_000;

/// Most pages in one PDF.
pub const MAX_PDF_PAGES: u32 = 1_000;

/// Most text one document may yield, in bytes of UTF-8 (a small file can hold a lot of
/// compressed text).
pub const MAX_TEXT_BYTES: usize = 20_000_000;

/// Most bytes one compressed part may inflate to (a PDF page's content stream or font map, a
/// DOCX's XML): a guard against decompression bombs.
pub const MAX_INFLATED_PART_BYTES: usize = 64_000_000;

/// Most files one DOCX archive may hold: Word writes a dozen parts, and hundreds with many
/// embedded images; millions of tiny entries only make the ZIP directory expensive to read.
pub const MAX_DOCX_ENTRIES: usize = 10_000;

/// How deep a DOCX's XML may nest elements: Word's deepest (tables in tables) are a few dozen
/// levels; more is a crafted file, refused before its text is gathered.
pub const MAX_XML_DEPTH: usize = 1_000;

/// CSV files up to this many rows and columns are shown as a Markdown table; larger ones as the
/// text they are.
pub const CSV_TABLE_MAX_ROWS: usize = 100;
pub const CSV_TABLE_MAX_COLUMNS: usize = 12;
