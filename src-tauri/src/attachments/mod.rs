//! Attached files: what a file is, checked before it is stored (`inspect`), and a document's text
//! as the user turn carries it (`documents`). Fitting or searching documents for a question is
//! part of the chat turn (`crate::chat::document_search`).

pub mod documents;
pub mod inspect;
