//! Documents sent in a request (a PDF, DOCX, HTML, Markdown, code or text file), read as the app
//! reads an attached document and carried in the user's message the same way
//! (`confab_documents::render_for_prompt`, then `with_documents`: each document before the
//! words typed). The same turn through the app or any API is the same prompt.

use base64::Engine as _;

use crate::shared::error::ApiError;

/// A document's bytes as the prompt carries them; `name` picks how it is read (its extension,
/// as an attachment's file name does). Scanned pages are not given as images here.
pub fn document_text(name: &str, bytes: &[u8], param: &str) -> Result<String, ApiError> {
    let document = confab_documents::read_document(name, bytes).map_err(|e| ApiError::invalid(Some(param), e.to_string()))?;
    Ok(confab_documents::render_for_prompt(&document, false))
}

/// A `data:<type>;base64,<data>` URL's bytes and media type.
pub fn data_url_bytes(url: &str, param: &str) -> Result<(Vec<u8>, String), ApiError> {
    let refuse = || ApiError::invalid(Some(param), "file_data must be a data URL (data:application/pdf;base64,...).");
    let rest = url.strip_prefix("data:").ok_or_else(refuse)?;
    let (header, data) = rest.split_once(',').ok_or_else(refuse)?;
    let media_type = header.strip_suffix(";base64").ok_or_else(refuse)?;
    Ok((base64_bytes(data, param)?, media_type.to_string()))
}

pub fn base64_bytes(data: &str, param: &str) -> Result<Vec<u8>, ApiError> {
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| ApiError::invalid(Some(param), format!("the file's data is not valid base64 ({e}).")))
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
