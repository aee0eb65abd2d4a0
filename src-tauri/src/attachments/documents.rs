//! Document attachments in the app: which stored attachments are documents, and their text as
//! the user turn carries it (`confab_documents::render_for_prompt`). A document is read when it
//! is attached (`inspect`) and again from its stored bytes when a prompt needs it; the rendered
//! text is kept by content hash while the app runs, since the context meter rebuilds the chat's
//! prompt as the person types.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use confab_documents::{read_document, render_for_prompt, Document, DocumentFormat};
use confab_media::MediaItem;
use confab_store::{Attachment, AttachmentHash, AttachmentMeta, Store};

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

/// The document's text as a prompt carries it; `images` when the model reads images, so its
/// scanned pages are given as images (`scan_images`) and marked so in the text.
pub async fn prompt_text(store: &Store, attachment: &Attachment, images: bool) -> Result<Arc<str>, Failure> {
    // The name is part of the key: it is in the rendering, and a text file's extension decides
    // its format.
    let key = format!("{}/{}/{images}", attachment.hash.as_str(), name_of(attachment));
    if let Some(text) = lock(kept()).get(&key) {
        return Ok(text.clone());
    }
    let document = read_stored(store, attachment).await?;
    if !images && document.only_scanned() {
        return Err(Failure(only_scanned_refusal(&document)));
    }
    let text: Arc<str> = render_for_prompt(&document, images).into();
    let mut kept = lock(kept());
    if kept.len() >= KEPT_DOCUMENTS {
        kept.clear();
    }
    kept.insert(key, text.clone());
    Ok(text)
}

/// What a model that does not read images is told of a PDF that is only scanned pages.
fn only_scanned_refusal(document: &Document) -> String {
    let pages = document.page_images().map(|(page, _)| page.to_string()).collect::<Vec<_>>().join(", ");
    format!(
        "{}: this PDF has no text, only scanned pages ({} {pages}), and the loaded model does not read images. Load a model with vision (such as Gemma 4 or Qwen3-VL) from the model menu to have the pages read as images, or run the PDF through text recognition (OCR) and attach the result.",
        document.name,
        if pages.contains(',') { "pages" } else { "page" },
    )
}

/// The prompt texts of a message's document attachments, in the order they were attached.
pub async fn prompt_texts(store: &Store, attachments: &[Attachment], images: bool) -> Result<Vec<Arc<str>>, Failure> {
    let mut texts = Vec::new();
    for attachment in attachments.iter().filter(|a| is_document(a)) {
        texts.push(prompt_text(store, attachment, images).await?);
    }
    Ok(texts)
}

/// The scanned pages of a message's documents as images for a model that reads them, in the
/// order the documents were attached. Each page image is stored as an attachment (once, by its
/// hash) so it takes the image path as it is: the media processor, and the encoder cache keyed
/// by that hash.
pub async fn scan_images(store: &Store, attachments: &[Attachment]) -> Result<Vec<MediaItem>, Failure> {
    let mut items = Vec::new();
    for attachment in attachments.iter().filter(|a| is_document(a) && a.mime == "application/pdf") {
        let pages = match stored_pages(store, attachment).await {
            Some(pages) => pages,
            None => store_pages(store, attachment).await?,
        };
        items.extend(pages.into_iter().map(|(hash, path)| MediaItem::image(path).with_hash(hash.as_str())));
    }
    Ok(items)
}

/// Each PDF's scanned pages as stored attachments, by the PDF's hash: the prompt is rebuilt as
/// the person types (the context meter), and most PDFs have none, so each is read once.
fn scanned_pages() -> &'static Mutex<HashMap<String, Vec<AttachmentHash>>> {
    static SCANNED: OnceLock<Mutex<HashMap<String, Vec<AttachmentHash>>>> = OnceLock::new();
    SCANNED.get_or_init(Default::default)
}

/// A PDF's page images as stored before, while every one is still stored (unused attachments
/// are deleted with their conversation; then the PDF is read again).
async fn stored_pages(store: &Store, pdf: &Attachment) -> Option<Vec<(AttachmentHash, PathBuf)>> {
    let hashes = lock(scanned_pages()).get(pdf.hash.as_str()).cloned()?;
    let mut pages = Vec::with_capacity(hashes.len());
    for hash in hashes {
        let path = store.attachment_path(&hash).await.ok()?;
        pages.push((hash, path));
    }
    Some(pages)
}

/// Reads a PDF and stores its scanned pages as image attachments.
async fn store_pages(store: &Store, pdf: &Attachment) -> Result<Vec<(AttachmentHash, PathBuf)>, Failure> {
    let document = read_stored(store, pdf).await?;
    let mut pages = Vec::new();
    for (page, image) in document.page_images() {
        let meta = AttachmentMeta {
            mime: image.mime.to_string(),
            original_name: Some(format!("{} page {page}", document.name)),
            width: Some(image.width),
            height: Some(image.height),
            duration_ms: None,
        };
        let hash = store.add_attachment_bytes(image.bytes.clone(), &meta).await?;
        let path = store.attachment_path(&hash).await?;
        pages.push((hash, path));
    }
    let mut scanned = lock(scanned_pages());
    if scanned.len() >= KEPT_DOCUMENTS {
        scanned.clear();
    }
    scanned.insert(pdf.hash.as_str().to_string(), pages.iter().map(|(hash, _)| hash.clone()).collect());
    Ok(pages)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use confab_store::{NewConversation, Role};

    use super::*;
    use crate::attachments::inspect::inspect_bytes;
    use crate::chat::turns::{branch_turns, chat_messages};

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

    #[test]
    fn scanned_pages_go_as_images_to_a_vision_model_and_are_refused_by_others_with_what_to_do() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/documents/tests/fixtures");
        let dir = tempfile::tempdir().unwrap();
        tauri::async_runtime::block_on(async {
            let store = Store::open(dir.path().join("confab.db")).await.unwrap();
            let chat = store.create_conversation(NewConversation { title: "t".into(), ..Default::default() }).await.unwrap().id;
            let attach = async |name: &str, fixture: &str| {
                let bytes = std::fs::read(fixtures.join(fixture)).unwrap();
                let meta = inspect_bytes(name, &bytes).unwrap();
                let hash = store.add_attachment_bytes(bytes, &meta).await.unwrap();
                let question = store.add_message_with_attachments(chat, None, Role::User, "What does it say?", &[hash]).await.unwrap();
                store.branch(chat, question).await.unwrap()
            };

            // Only scanned: a vision model gets the page as an image, through the image path
            // (a stored attachment, its hash for the encoder cache), and the text says so.
            let scan = attach("scan.pdf", "scanned.pdf").await;
            let messages = chat_messages("", &branch_turns(&store, &scan, true).await.unwrap());
            let turn = &messages[0];
            assert_eq!(turn.media.len(), 1, "the one scanned page");
            let item = &turn.media[0];
            assert_eq!(item.kind, confab_media::MediaKind::Image);
            let stored = store.attachment(&confab_store::AttachmentHash::parse(item.hash.as_deref().unwrap()).unwrap()).await.unwrap();
            assert_eq!((stored.mime.as_str(), stored.width, stored.height), ("image/png", Some(600), Some(200)));
            let decoded = confab_media::decode_image(&item.source, &confab_media::MediaLimits::default()).unwrap();
            assert_eq!((decoded.width(), decoded.height()), (600, 200));
            assert!(turn.content.contains("[page 1: scanned, given as an image]"), "{}", turn.content);
            // Rebuilt (as the context meter does while the person types): the same stored page.
            let again = chat_messages("", &branch_turns(&store, &scan, true).await.unwrap());
            assert_eq!(again[0].media[0].hash, item.hash);
            // A page image removed since (its row and file, as unused attachments are) is stored again.
            let page = confab_store::AttachmentHash::parse(item.hash.as_deref().unwrap()).unwrap();
            std::fs::remove_file(item.path().expect("a stored page is a file")).unwrap();
            assert!(store.attachment_path(&page).await.is_err());
            let again = chat_messages("", &branch_turns(&store, &scan, true).await.unwrap());
            assert_eq!(again[0].media[0].hash, item.hash);
            assert!(store.attachment_path(&page).await.is_ok(), "the page is stored again");
            // A model that reads no images is told which pages and what would read them.
            let refusal = branch_turns(&store, &scan, false).await.err().expect("refused").0;
            assert!(refusal.starts_with("scan.pdf: this PDF has no text, only scanned pages (page 1)"), "{refusal}");
            assert!(refusal.contains("Load a model with vision"), "{refusal}");

            // Text and a scanned page: a vision model gets the page image and both pages' text
            // markers; another model gets the text, and the note names the scanned page.
            let mixed = attach("mixed.pdf", "scanned_jpeg.pdf").await;
            let messages = chat_messages("", &branch_turns(&store, &mixed, true).await.unwrap());
            assert_eq!(messages[0].media.len(), 1);
            assert!(messages[0].content.contains("[page 1]\nThe first page has text."), "{}", messages[0].content);
            assert!(messages[0].content.contains("[page 2: scanned, given as an image]"), "{}", messages[0].content);
            let messages = chat_messages("", &branch_turns(&store, &mixed, false).await.unwrap());
            assert!(messages[0].media.is_empty());
            assert!(
                messages[0].content.contains("(Note: page 2 is scanned (an image of text, no text layer): a vision model"),
                "{}",
                messages[0].content
            );
            assert!(!messages[0].content.contains("given as an image]"), "{}", messages[0].content);
        });
    }
}
