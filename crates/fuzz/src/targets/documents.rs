//! Documents: PDF, DOCX (a ZIP of XML), HTML, CSV and plain text.

/// The format comes from the first bytes where it has a signature, else from the name; the first
/// byte picks the name so that every reader is reached.
pub fn document(data: &[u8]) {
    const NAMES: [&str; 6] = ["a.pdf", "a.docx", "a.html", "a.csv", "a.txt", "a.md"];
    let Some((&first, rest)) = data.split_first() else { return };
    let _ = confab_documents::read_document(NAMES[first as usize % NAMES.len()], rest);
}
