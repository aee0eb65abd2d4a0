//! Document attachments in the app: which stored attachments are documents, and their text as
//! the user turn carries it (`confab_documents::render_for_prompt`). A document is read when it
//! is attached (`inspect`) and again from its stored bytes when a prompt needs it; the rendered
//! text is kept by content hash while the app runs, since the context meter rebuilds the chat's
//! prompt as the person types.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use confab_documents::{read_document, render_for_prompt, Document, DocumentFormat};
use confab_store::{Attachment, Store};

use crate::failure::Failure;
use crate::sync::lock;

/// What an attachment's chip says about a document.
#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct DocumentInfo {
    /// The format as a person names it ("PDF", "Markdown", "Rust source").
    pub format: String,
    /// Pages, for a format that has them (PDF).
    pub pages: Option<u32>,
    /// How it was read, where a person should know ("pages 3, 4 have no text layer").
    pub notes: Vec<String>,
}

impl DocumentInfo {
    pub fn of(document: &Document) -> Self {
        DocumentInfo { format: document.format.label(), pages: document.page_count(), notes: document.notes.clone() }
    }
}

/// Rendered documents kept at most; past it the cache starts over (a chat rarely holds more).
const KEPT_DOCUMENTS: usize = 64;

fn kept() -> &'static Mutex<HashMap<String, Arc<str>>> {
    static KEPT: OnceLock<Mutex<HashMap<String, Arc<str>>>> = OnceLock::new();
    KEPT.get_or_init(Default::default)
}

/// Whether a stored attachment is a document (read as text) rather than media.
pub fn is_document(attachment: &Attachment) -> bool {
    DocumentFormat::is_document_mime(&attachment.mime)
}

/// The name a stored document is read under: the one it was attached with (its extension tells
/// the format of text files).
fn name_of(attachment: &Attachment) -> String {
    attachment.original_name.clone().unwrap_or_else(|| "document.txt".into())
}

/// A stored document, read from its bytes.
pub async fn read_stored(store: &Store, attachment: &Attachment) -> Result<Document, Failure> {
    let path = store.attachment_path(&attachment.hash).await?;
    let name = name_of(attachment);
    tauri::async_runtime::spawn_blocking(move || {
        let bytes =
            std::fs::read(&path).map_err(|e| Failure(format!("{name}: the stored copy could not be read ({e}); attach it again")))?;
        read_document(&name, &bytes).map_err(|e| Failure(e.to_string()))
    })
    .await
    .map_err(|e| Failure(e.to_string()))?
}

/// The document's text as a prompt carries it.
pub async fn prompt_text(store: &Store, attachment: &Attachment) -> Result<Arc<str>, Failure> {
    // The name is part of the key: it is in the rendering, and a text file's extension decides
    // its format.
    let key = format!("{}/{}", attachment.hash.as_str(), name_of(attachment));
    if let Some(text) = lock(kept()).get(&key) {
        return Ok(text.clone());
    }
    let text: Arc<str> = render_for_prompt(&read_stored(store, attachment).await?).into();
    let mut kept = lock(kept());
    if kept.len() >= KEPT_DOCUMENTS {
        kept.clear();
    }
    kept.insert(key, text.clone());
    Ok(text)
}

/// The prompt texts of a message's document attachments, in the order they were attached.
pub async fn prompt_texts(store: &Store, attachments: &[Attachment]) -> Result<Vec<Arc<str>>, Failure> {
    let mut texts = Vec::new();
    for attachment in attachments.iter().filter(|a| is_document(a)) {
        texts.push(prompt_text(store, attachment).await?);
    }
    Ok(texts)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use confab_store::{NewConversation, Role};

    use super::*;
    use crate::inspect::inspect_bytes;
    use crate::reply::{branch_turns, chat_messages};

    #[test]
    fn a_stored_pdf_reaches_its_turn_with_page_markers_and_its_chip_info() {
        let pdf = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/documents/tests/fixtures/two_pages.pdf")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        tauri::async_runtime::block_on(async {
            let store = Store::open(dir.path().join("confab.db")).await.unwrap();
            // Attached as the app attaches it: checked, then kept by content hash.
            let meta = inspect_bytes("report.pdf", &pdf).unwrap();
            let hash = store.add_attachment_bytes(pdf.clone(), &meta).await.unwrap();
            let attachment = store.attachment(&hash).await.unwrap();
            assert!(is_document(&attachment));
            assert_eq!(DocumentInfo::of(&read_stored(&store, &attachment).await.unwrap()).pages, Some(2));

            let chat = store.create_conversation(NewConversation { title: "t".into(), ..Default::default() }).await.unwrap().id;
            let question = store.add_message_with_attachments(chat, None, Role::User, "What grew?", &[hash]).await.unwrap();
            let branch = store.branch(chat, question).await.unwrap();
            let messages = chat_messages("", &branch_turns(&store, &branch, false).await.unwrap());
            let turn = &messages[0];
            assert!(turn.media.is_empty(), "a document is not media");
            assert!(
                turn.content.starts_with("<document name=\"report.pdf\" pages=\"2\">\n[page 1]\nQuarterly report\n"),
                "{}",
                turn.content
            );
            assert!(turn.content.contains("[page 2]\nOutlook\n"), "{}", turn.content);
            assert!(turn.content.ends_with("</document>\n\nWhat grew?"), "{}", turn.content);
        });
    }
}
