//! Fit or search in the app: the documents of a chat go into the prompt whole where they fit
//! beside it (`confab_documents::plan_documents` decides); the others are cut into passages and
//! embedded once (by content hash, embedding model and chunking, in the chat's SQLite file), and
//! each question is given the passages that answer it best, with their document and page. The
//! passages given are kept with the reply: its citations, numbered in the prompt's order.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use confab_documents::fit::MAX_PASSAGES;
use confab_documents::{
    chunk_document, plan_documents, render_passages_for_prompt, ChunkSettings, DocumentPlan, DocumentUse, PassageSource,
};
use confab_engine::discover;
use confab_engine::ChatMessage;
use confab_engine::EmbedPrompt;
use confab_engine::ModelId;
use confab_engine::{Engine, Prompt};
use confab_store::{
    Attachment, AttachmentHash, IndexKey, Message, NewPassage, PassageQuery, ReplySource, RetrievalMode, Role, Store, RRF_K,
};
use confab_turn::prompt_budget;

use super::turns::{self, Turn};
use crate::attachments::documents;
use crate::failure::Failure;
use crate::models::embedder::{self, Loaded};
use crate::models::slot::Current;
use crate::settings::Settings;
use crate::state::AppState;
use crate::sync::lock;

/// Passages embedded per call to the engine: small enough that a reply elsewhere gets the
/// engine between batches and the progress bar moves.
const EMBED_BATCH: usize = 16;

/// Sent as the `document-index` event while a document's index is made.
#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct IndexProgress {
    /// The document's attachment hash.
    pub hash: String,
    /// Passages embedded so far, of `passages`.
    pub embedded: u32,
    pub passages: u32,
    /// The index is complete (or failed): the progress bar goes.
    pub done: bool,
}

/// Hears how an index being made comes along (the app sends it to the window as the
/// `document-index` event).
pub type Progress<'a> = dyn Fn(IndexProgress) + Send + Sync + 'a;

/// What a search for a reply reports to, and its Stop switch (checked between batches of
/// passages embedded: an index left unfinished is not kept).
pub struct Search<'a> {
    pub progress: &'a Progress<'a>,
    pub cancel: &'a std::sync::atomic::AtomicBool,
}

/// A prompt for the local model, with the passages it was given (none when its documents went
/// in whole).
pub struct DocumentPrompt {
    pub messages: Vec<ChatMessage>,
    pub sources: Vec<ReplySource>,
}

/// The branch as the local model takes it: its documents whole where they fit beside the chat
/// (`confab_documents::plan_documents`, the rule); the others searched for the branch's last
/// user message, whose turn is given the passages found.
pub async fn local_prompt(
    search_with: &Search<'_>,
    state: &Arc<AppState>,
    model: &Current,
    settings: &Settings,
    system_prompt: &str,
    branch: &[Message],
    result_images: bool,
) -> Result<DocumentPrompt, Failure> {
    let store = &state.store;
    let mut turns = turns::branch_turns(store, branch, result_images).await?;
    let documents = branch_documents(store, branch).await?;
    if documents.is_empty() {
        return Ok(DocumentPrompt { messages: turns::chat_messages(system_prompt, &turns), sources: Vec::new() });
    }
    // First with the default passages; if some document is searched, again with the passages
    // sized for the embedding model that searches them.
    let plan =
        plan(store, Some(&state.engine), model, settings, system_prompt, &turns, &documents, &ChunkSettings::default(), None).await?;
    if plan.uses.iter().all(|u| *u == DocumentUse::Whole) {
        return Ok(DocumentPrompt { messages: turns::chat_messages(system_prompt, &turns), sources: Vec::new() });
    }
    let searched_first = searched(&documents, &plan);
    let embedder = load_embedder(state, settings, &searched_first).await?;
    let chunking = chunk_settings(embedder.max_tokens);
    let plan = self::plan(store, Some(&state.engine), model, settings, system_prompt, &turns, &documents, &chunking, None).await?;
    let searched = searched(&documents, &plan);
    if plan.starved() {
        return Err(Failure(format!(
            "{} is larger than the context, and this chat leaves no room for passages of it. Ask in a new chat, or load a model with a longer context.",
            names(&searched)
        )));
    }
    for attachment in &searched {
        ensure_indexed(search_with, state, &embedder, &chunking, attachment).await?;
    }
    let question = branch.iter().rev().find(|m| m.role == Role::User).map(|m| m.content.clone()).unwrap_or_default();
    let sources = search(state, &embedder, &chunking, &searched, &question, plan.passages).await?;
    keep_whole_documents(store, branch, &mut turns, &plan, &documents, result_images).await?;
    if let Some(asked) = turns.iter_mut().rev().find(|t| t.message.role == Role::User) {
        asked.documents.push(render_sources(&sources).into());
    }
    Ok(DocumentPrompt { messages: turns::chat_messages(system_prompt, &turns), sources })
}

/// What a prompt may take: the context less the room kept for the reply (as the engine fits it).
pub fn prompt_limit(model: &Current, settings: &Settings) -> usize {
    let context = model.info.context_length;
    prompt_budget(settings.max_tokens, context)
}

/// "report.pdf", "report.pdf and notes.md".
fn names(documents: &[Attachment]) -> String {
    let names: Vec<&str> = documents.iter().map(|d| d.original_name.as_deref().unwrap_or("This document")).collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The branch's document attachments, each once, in the order they were first attached.
async fn branch_documents(store: &Store, branch: &[Message]) -> Result<Vec<Attachment>, Failure> {
    let mut seen = HashSet::new();
    let mut found = Vec::new();
    for message in branch.iter().filter(|m| m.role == Role::User) {
        for attachment in store.message_attachments(message.id).await? {
            if documents::is_document(&attachment) && seen.insert(attachment.hash.clone()) {
                found.push(attachment);
            }
        }
    }
    Ok(found)
}

/// The rule's decision for `documents` beside the chat of `turns` (their documents left out)
/// and `draft` (the context meter's words being typed, counted as a new user turn).
#[allow(clippy::too_many_arguments)]
async fn plan(
    store: &Store,
    engine: Option<&Arc<Engine>>,
    model: &Current,
    settings: &Settings,
    system_prompt: &str,
    turns: &[Turn],
    documents: &[Attachment],
    chunking: &ChunkSettings,
    draft: Option<&str>,
) -> Result<DocumentPlan, Failure> {
    let chat_tokens = chat_tokens(engine, model, system_prompt, turns, draft).await?;
    let mut document_tokens = Vec::with_capacity(documents.len());
    for attachment in documents {
        document_tokens.push(document_tokens_of(store, model, attachment).await?);
    }
    Ok(plan_documents(prompt_limit(model, settings), chat_tokens, &document_tokens, chunking, MAX_PASSAGES))
}

/// The chat's tokens beside its documents (left out). With media it is measured on the engine,
/// whose processors count an image's or a clip's tokens, when `engine` is given (a reply about
/// to be sent); otherwise (the meter while typing, which must not wait behind a reply) the
/// counter counts its text and its media are left out of the estimate.
async fn chat_tokens(
    engine: Option<&Arc<Engine>>,
    model: &Current,
    system_prompt: &str,
    turns: &[Turn],
    draft: Option<&str>,
) -> Result<usize, Failure> {
    let bare: Vec<Turn> = turns.iter().map(|t| Turn { documents: Vec::new(), ..t.clone() }).collect();
    let mut chat = turns::chat_messages(system_prompt, &bare);
    if let Some(draft) = draft {
        chat.push(ChatMessage::user(draft));
    }
    match engine {
        Some(engine) if chat.iter().any(|m| !m.media.is_empty()) => {
            let (engine, id) = (Arc::clone(engine), model.id);
            Ok(tauri::async_runtime::spawn_blocking(move || engine.tokenize(id, Prompt::Chat(chat)))
                .await
                .map_err(|e| e.to_string())??
                .len())
        }
        _ => {
            chat.iter_mut().for_each(|m| m.media.clear());
            Ok(model.counter.chat(&chat)?)
        }
    }
}

/// A document's tokens rendered whole, counted once per model (a long one takes a while).
async fn document_tokens_of(store: &Store, model: &Current, attachment: &Attachment) -> Result<usize, Failure> {
    static COUNTED: OnceLock<Mutex<HashMap<(ModelId, AttachmentHash), usize>>> = OnceLock::new();
    let counted = COUNTED.get_or_init(Default::default);
    let key = (model.id, attachment.hash.clone());
    if let Some(tokens) = lock(counted).get(&key) {
        return Ok(*tokens);
    }
    let text = documents::prompt_text(store, attachment, model.info.vision).await?;
    let counter = model.counter.clone();
    let tokens = tauri::async_runtime::spawn_blocking(move || counter.text(&text)).await??;
    lock(counted).insert(key, tokens);
    Ok(tokens)
}

/// Each user turn keeps the documents the plan takes whole; the searched ones leave the prompt.
async fn keep_whole_documents(
    store: &Store,
    branch: &[Message],
    turns: &mut [Turn],
    plan: &DocumentPlan,
    documents: &[Attachment],
    images: bool,
) -> Result<(), Failure> {
    let whole: HashSet<&AttachmentHash> =
        documents.iter().zip(&plan.uses).filter(|(_, u)| **u == DocumentUse::Whole).map(|(d, _)| &d.hash).collect();
    for (message, turn) in branch.iter().zip(turns.iter_mut()) {
        if turn.documents.is_empty() {
            continue;
        }
        let attached = store.message_attachments(message.id).await?;
        let kept: Vec<Attachment> = attached.into_iter().filter(|a| documents::is_document(a) && whole.contains(&a.hash)).collect();
        turn.documents = documents::prompt_texts(store, &kept, images).await?;
    }
    Ok(())
}

/// The documents the plan searches.
fn searched(documents: &[Attachment], plan: &DocumentPlan) -> Vec<Attachment> {
    documents.iter().zip(&plan.uses).filter(|(_, u)| **u == DocumentUse::Searched).map(|(d, _)| d.clone()).collect()
}

/// The embedding model Settings name (else the first found), loaded; or the message saying how
/// to get one, naming the documents that need it.
async fn load_embedder(state: &Arc<AppState>, settings: &Settings, searched: &[Attachment]) -> Result<Loaded, Failure> {
    let folders = state.model_folders();
    let found = tauri::async_runtime::spawn_blocking(move || discover(&folders)).await?;
    let model =
        embedder::choose(settings.embedding_model.as_deref(), &found).map_err(|missing| Failure(missing.message(&names(searched))))?;
    state.embedder.ensure(&state.engine, &model).await
}

/// The passages as the question's turn carries them, in the order the reply cites them.
fn render_sources(sources: &[ReplySource]) -> String {
    let passages: Vec<PassageSource<'_>> =
        sources.iter().map(|s| PassageSource { document: &s.document, page: s.page, headings: &[], text: &s.text }).collect();
    render_passages_for_prompt(&passages)
}

/// The chunking an index is made with: the default passages, smaller for an embedding model
/// that reads less (sizes are estimates; a quarter of its length leaves room for a tokenizer
/// denser than four characters a token).
fn chunk_settings(embedding_max_tokens: Option<usize>) -> ChunkSettings {
    let default = ChunkSettings::default();
    match embedding_max_tokens {
        Some(max) if max / 4 < default.target_tokens => {
            ChunkSettings { target_tokens: max / 4, overlap_tokens: default.overlap_tokens.min(max / 16) }
        }
        _ => default,
    }
}

/// Makes the document's index unless it is there: its passages, embedded in batches, kept in
/// the store; the window hears how far it has come (`document-index`). One index is made at a
/// time.
async fn ensure_indexed(
    search_with: &Search<'_>,
    state: &Arc<AppState>,
    embedder: &Loaded,
    chunking: &ChunkSettings,
    attachment: &Attachment,
) -> Result<(), Failure> {
    let (model, chunking_key) = (embedder.key(), chunking.key());
    let key = IndexKey { document: &attachment.hash, model: &model, chunking: &chunking_key };
    let store = &state.store;
    let _one_at_a_time = state.embedder.indexing.lock().await;
    if store.document_indexed(key).await? {
        return Ok(());
    }
    let document = documents::read_stored(store, attachment).await?;
    let settings = *chunking;
    let passages = tauri::async_runtime::spawn_blocking(move || chunk_document(&document, &settings)).await?;
    let hash = attachment.hash.as_str().to_owned();
    let total = passages.len() as u32;
    let progress = |embedded: usize, done: bool| {
        (search_with.progress)(IndexProgress { hash: hash.clone(), embedded: embedded as u32, passages: total, done })
    };
    progress(0, false);
    let name = attachment.original_name.as_deref().unwrap_or("the document");
    let mut indexed = Vec::with_capacity(passages.len());
    for batch in passages.chunks(EMBED_BATCH) {
        if search_with.cancel.load(std::sync::atomic::Ordering::Relaxed) {
            progress(indexed.len(), true);
            return Err(Failure(format!("Stopped while {name} was being indexed; send the question again to go on.")));
        }
        let texts = batch.iter().map(|p| p.text.clone()).collect();
        let vectors = match embedder::embed(&state.engine, embedder, texts, EmbedPrompt::Document).await {
            Ok(vectors) => vectors,
            Err(e) => {
                progress(indexed.len(), true);
                return Err(Failure(format!("Could not index {name} for search: {e}")));
            }
        };
        for (passage, vector) in batch.iter().zip(vectors) {
            indexed.push(NewPassage {
                ordinal: passage.ordinal,
                page: passage.page,
                section: passage.section as u32,
                span: passage.span.start as u32..passage.span.end as u32,
                headings: passage.headings.clone(),
                text: passage.text.clone(),
                vector,
            });
        }
        progress(indexed.len(), false);
    }
    let kept = store.index_document(key, &indexed).await;
    progress(indexed.len(), true);
    kept.map_err(|e| Failure(format!("Could not keep the index of {name}: {e}")))?;
    tracing::info!(passages = total, document = attachment.hash.as_str(), "indexed a document too large for the context");
    Ok(())
}

/// The `k` passages of `documents` that answer `question` best (vectors and words, fused by
/// reciprocal rank), numbered from 1 in that order.
async fn search(
    state: &Arc<AppState>,
    embedder: &Loaded,
    chunking: &ChunkSettings,
    documents: &[Attachment],
    question: &str,
    k: usize,
) -> Result<Vec<ReplySource>, Failure> {
    let vector = embedder::embed(&state.engine, embedder, vec![question.to_owned()], EmbedPrompt::Query).await?.pop();
    let hashes: Vec<AttachmentHash> = documents.iter().map(|d| d.hash.clone()).collect();
    let (model, chunking_key) = (embedder.key(), chunking.key());
    let query = PassageQuery {
        text: question,
        vector: vector.as_deref(),
        model: &model,
        chunking: &chunking_key,
        documents: &hashes,
        k,
        mode: RetrievalMode::Hybrid,
        rrf_k: RRF_K,
    };
    let hits = state.store.search_passages(&query).await?;
    Ok(hits
        .into_iter()
        .enumerate()
        .map(|(index, hit)| ReplySource {
            number: index as u32 + 1,
            document: hit.document_name.unwrap_or_else(|| "document".into()),
            attachment: hit.document,
            page: hit.page,
            text: hit.text,
        })
        .collect())
}

/// What the context meter counts for the open chat and the draft: the chat as `local_prompt`
/// would send it, and the draft's text with its documents where the rule takes them whole.
/// Where documents are searched, the passages are not known before the question is sent; they
/// count as the tokens the rule keeps for them (`extra`).
pub struct Metered {
    pub history: Vec<ChatMessage>,
    pub draft: String,
    pub extra: usize,
}

#[allow(clippy::too_many_arguments)]
pub async fn metered(
    state: &Arc<AppState>,
    model: &Current,
    settings: &Settings,
    system_prompt: &str,
    branch: &[Message],
    result_images: bool,
    draft_documents: &[Attachment],
    draft: &str,
) -> Result<Metered, Failure> {
    let store = &state.store;
    let mut turns = turns::branch_turns(store, branch, result_images).await?;
    let mut documents = branch_documents(store, branch).await?;
    for attachment in draft_documents {
        if !documents.iter().any(|d| d.hash == attachment.hash) {
            documents.push(attachment.clone());
        }
    }
    let whole_draft = |kept: Vec<Arc<str>>| confab_documents::with_documents(&kept, draft);
    if documents.is_empty() {
        return Ok(Metered { history: turns::chat_messages(system_prompt, &turns), draft: draft.to_owned(), extra: 0 });
    }
    // Passages as the loaded embedding model would cut them (the default before one is loaded).
    let chunking = state.embedder.loaded().await.map(|e| chunk_settings(e.max_tokens)).unwrap_or_default();
    let plan = plan(store, None, model, settings, system_prompt, &turns, &documents, &chunking, Some(draft)).await?;
    if plan.uses.iter().all(|u| *u == DocumentUse::Whole) {
        let texts = documents::prompt_texts(store, draft_documents, result_images).await?;
        return Ok(Metered { history: turns::chat_messages(system_prompt, &turns), draft: whole_draft(texts), extra: 0 });
    }
    keep_whole_documents(store, branch, &mut turns, &plan, &documents, result_images).await?;
    let whole: Vec<Attachment> = documents
        .iter()
        .zip(&plan.uses)
        .filter(|(d, u)| **u == DocumentUse::Whole && draft_documents.iter().any(|a| a.hash == d.hash))
        .map(|(d, _)| d.clone())
        .collect();
    let texts = documents::prompt_texts(store, &whole, result_images).await?;
    Ok(Metered {
        history: turns::chat_messages(system_prompt, &turns),
        draft: whole_draft(texts),
        extra: plan.passages * plan.passage_tokens,
    })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use confab_store::NewConversation;

    use super::*;
    use crate::attachments::inspect::inspect_bytes;

    fn fixture(path: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
    }

    /// A chat whose first message carries `file` (from the repository), asking `question`.
    async fn asked(store: &Store, file: &str, question: &str) -> Vec<Message> {
        let bytes = std::fs::read(fixture(file)).unwrap();
        let name = Path::new(file).file_name().unwrap().to_str().unwrap();
        let meta = inspect_bytes(name, &bytes).unwrap();
        let hash = store.add_attachment_bytes(bytes, &meta).await.unwrap();
        let chat = store.create_conversation(NewConversation { title: "t".into(), ..Default::default() }).await.unwrap().id;
        let message = store.add_message_with_attachments(chat, None, Role::User, question, &[hash]).await.unwrap();
        store.branch(chat, message).await.unwrap()
    }

    /// The tiny llama (a 256-token context) replying.
    fn tiny_llama() -> PathBuf {
        fixture("tests/reference/fixtures/tiny/llama")
    }

    /// The default model (SmolLM2-135M-Instruct, an 8,192-token context) replying.
    fn default_model() -> PathBuf {
        let manifest = confab_paths::DefaultModel::manifest();
        let paths = confab_paths::AppPaths::from_env();
        assert!(manifest.is_present(&paths), "the default model is not installed; run scripts/setup.sh");
        manifest.path(&paths)
    }

    /// `chat_model` replying; the tiny Qwen3-Embedding (random weights: its vectors rank at
    /// random, words decide) searching.
    async fn app(dir: &Path, chat_model: &Path) -> (Arc<AppState>, Current, Settings) {
        let state = Arc::new(AppState::open(confab_paths::AppPaths::under(dir)).await.unwrap());
        let model = Current::load_for_test(&state.engine, chat_model);
        let embedder = fixture("tests/reference/fixtures/tiny/qwen3_embedding");
        let settings =
            Settings { max_tokens: 16, model_folders: vec![embedder.clone()], embedding_model: Some(embedder), ..Settings::default() };
        *lock(&state.settings) = settings.clone();
        (state, model, settings)
    }

    #[test]
    fn a_document_larger_than_the_context_is_indexed_once_and_searched_for_the_question() {
        let dir = tempfile::tempdir().unwrap();
        tauri::async_runtime::block_on(async {
            let (state, model, settings) = app(dir.path(), &default_model()).await;
            let question = "What is the lighthouse keeper's cat named?";
            let branch = asked(&state.store, "tests/reference/fixtures/documents/long_report.pdf", question).await;
            let heard = Mutex::new(Vec::new());
            let progress = |p: IndexProgress| lock(&heard).push(p);
            let cancel = std::sync::atomic::AtomicBool::new(false);
            let progress = Search { progress: &progress, cancel: &cancel };

            let prompt = local_prompt(&progress, &state, &model, &settings, "", &branch, false).await.unwrap();
            let first = std::mem::take(&mut *lock(&heard));
            let last = first.last().expect("progress was reported");
            assert!(last.done && last.embedded == last.passages && last.passages > 40, "{last:?}");
            assert!(first.windows(2).all(|w| w[0].embedded <= w[1].embedded), "progress only grows");
            // The rule's count for an 8,192-token context: the most it gives.
            assert_eq!(prompt.sources.len(), MAX_PASSAGES, "{:?}", prompt.sources);
            assert_eq!(prompt.sources[0].number, 1);
            // The words of the question are on page 27 alone (tests/reference/make_long_documents.py).
            let cat = prompt
                .sources
                .iter()
                .find(|s| s.text.contains("Marmalade"))
                .unwrap_or_else(|| panic!("the passage that answers was not found: {:?}", prompt.sources));
            assert_eq!((cat.document.as_str(), cat.page), ("long_report.pdf", Some(27)));
            let turn = &prompt.messages.last().unwrap().content;
            assert!(turn.starts_with("<search_results") && turn.ends_with(question), "{turn}");
            assert!(turn.contains("page=\"27\"") && !turn.contains("Chapter 1\n"), "passages, not the document: {turn}");
            let tokens = model.counter.chat(&prompt.messages).unwrap();
            assert!(tokens <= prompt_limit(&model, &settings), "{tokens} tokens fit the context");

            // Asked again: the index is there, nothing is embedded but the question.
            let again = local_prompt(&progress, &state, &model, &settings, "", &branch, false).await.unwrap();
            assert!(lock(&heard).is_empty(), "indexed once");
            assert_eq!(again.sources, prompt.sources);

            // The meter counts the chat without the document, and the room kept for passages.
            let metered = metered(&state, &model, &settings, "", &branch, false, &[], "And the dog?").await.unwrap();
            assert!(metered.extra > 0 && !metered.history[0].content.contains("Chapter"), "{:?}", metered.history);
        });
    }

    #[test]
    fn a_document_that_fits_goes_whole_one_that_does_not_stops_on_stop_or_without_an_embedding_model_says_how() {
        let dir = tempfile::tempdir().unwrap();
        tauri::async_runtime::block_on(async {
            let (state, model, settings) = app(dir.path(), &tiny_llama()).await;
            let branch = asked(&state.store, "crates/documents/tests/fixtures/two_pages.pdf", "What grew?").await;
            let quiet = |_: IndexProgress| panic!("nothing is indexed");
            let cancel = std::sync::atomic::AtomicBool::new(false);
            let quiet = Search { progress: &quiet, cancel: &cancel };
            let prompt = local_prompt(&quiet, &state, &model, &settings, "", &branch, false).await.unwrap();
            assert!(prompt.sources.is_empty());
            assert!(prompt.messages[0].content.starts_with("<document name=\"two_pages.pdf\""), "{}", prompt.messages[0].content);

            // Stop pressed while it is indexed: it stops between batches, and says so.
            let long = asked(&state.store, "tests/reference/fixtures/documents/long_report.pdf", "Who is the cat?").await;
            let ignore = |_: IndexProgress| {};
            let stopped = std::sync::atomic::AtomicBool::new(true);
            let stop = Search { progress: &ignore, cancel: &stopped };
            let refused = local_prompt(&stop, &state, &model, &settings, "", &long, false).await.err().expect("stopped").0;
            assert!(refused.starts_with("Stopped while long_report.pdf was being indexed"), "{refused}");

            let gone = Settings { embedding_model: Some("/models/gone-embedding".into()), ..settings };
            let branch = asked(&state.store, "tests/reference/fixtures/documents/long_report.pdf", "Who is the cat?").await;
            let refused = local_prompt(&quiet, &state, &model, &gone, "", &branch, false).await.err().expect("refused").0;
            assert!(refused.starts_with("long_report.pdf is larger than the context"), "{refused}");
            assert!(refused.contains("/models/gone-embedding") && refused.contains("Get models"), "{refused}");
        });
    }
}
