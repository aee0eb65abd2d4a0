//! Documents sent in a request (a PDF, DOCX, HTML, Markdown, code or text file), read as the app
//! reads an attached document and carried in the user's message the same way
//! (`confab_documents::render_for_prompt`, then `with_documents`: each document before the
//! words typed). The same turn through the app or any API is the same prompt.

use crate::shared::error::ApiError;

/// A document's bytes as the prompt carries them; `name` picks how it is read (its extension,
/// as an attachment's file name does). Scanned pages are not given as images here.
pub fn document_text(name: &str, bytes: &[u8], param: &str) -> Result<String, ApiError> {
    let document = confab_documents::read_document(name, bytes).map_err(|e| ApiError::invalid(Some(param), e.to_string()))?;
    Ok(confab_documents::render_for_prompt(&document, false))
}

/// A name for a document sent without one, from its media type.
pub fn name_for(media_type: &str) -> &'static str {
    match media_type {
        "application/pdf" => "document.pdf",
        "text/markdown" => "document.md",
        "text/html" => "document.html",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => "document.docx",
        _ => "document.txt",
    }
}

/// The user's text with its documents before it.
pub fn with_documents(documents: &[String], text: &[String]) -> String {
    confab_documents::with_documents(documents, &text.join("\n"))
}
