//! Prints a document as a prompt carries it: `cargo run -p confab-documents --example read_document -- FILE`.

fn main() {
    for path in std::env::args().skip(1) {
        match confab_documents::read_document_file(std::path::Path::new(&path)) {
            Ok(document) => println!("{}", confab_documents::render_for_prompt(&document, false)),
            Err(error) => println!("error: {error}"),
        }
    }
}
