//! Each file's text as Confab reads it, one JSON object a line, for tests/documents/score.py:
//! `cargo run -p confab-documents --example extract -- FILE...`. Each object has `file`, `ms`
//! (reading time), then `text` and `pages`, or `error` (the message the app shows).

use std::time::Instant;

fn main() {
    for path in std::env::args().skip(1) {
        let start = Instant::now();
        let read = confab_documents::read_document_file(std::path::Path::new(&path));
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let line = match read {
            Ok(document) => serde_json::json!({
                "file": path, "ms": ms, "text": document.text(), "pages": document.page_count(), "notes": document.notes,
            }),
            Err(error) => serde_json::json!({ "file": path, "ms": ms, "error": error.to_string() }),
        };
        println!("{line}");
    }
}
