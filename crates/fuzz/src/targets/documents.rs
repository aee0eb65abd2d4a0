//! Documents: PDF, DOCX (a ZIP of XML), HTML, CSV and plain text, one target a format. The name
//! picks the reader where the bytes have no signature (a PDF is a PDF whatever its name).

fn read(name: &str, data: &[u8]) {
    let _ = confab_documents::read_document(name, data);
}

pub fn pdf(data: &[u8]) {
    read("a.pdf", data)
}

pub fn docx(data: &[u8]) {
    read("a.docx", data)
}

pub fn html(data: &[u8]) {
    read("a.html", data)
}

pub fn csv(data: &[u8]) {
    read("a.csv", data)
}

/// Plain text, Markdown and source code: the first byte picks the name.
pub fn text(data: &[u8]) {
    const NAMES: [&str; 3] = ["a.txt", "a.md", "a.rs"];
    let Some((&first, rest)) = data.split_first() else { return };
    read(NAMES[first as usize % NAMES.len()], rest)
}
