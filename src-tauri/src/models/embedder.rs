//! The embedding model that searches documents too large for the context: the one picked in
//! Settings › Model, else the first found in the model folders. It is loaded beside the chat
//! model the first time a document must be searched, and stays loaded until another is picked;
//! it is never the chat model.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use confab_engine::EmbedPrompt;
use confab_engine::LoadOptions;
use confab_engine::ModelSummary;
use confab_engine::{Engine, ModelId};

use crate::failure::Failure;

/// The repository Get models offers for documents: small, multilingual, long inputs.
pub const DEFAULT_EMBEDDING_REPO: &str = "Qwen/Qwen3-Embedding-0.6B";

/// An embedding model loaded on the engine.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub path: PathBuf,
    pub name: String,
    pub id: ModelId,
    /// The longest text it reads whole, where its files say.
    pub max_tokens: Option<usize>,
}

impl Loaded {
    /// What an index is kept under: a document embedded by another model is indexed again.
    pub fn key(&self) -> String {
        self.path.display().to_string()
    }
}

/// Why no embedding model can search a document.
#[derive(Debug, Clone, PartialEq)]
pub enum Missing {
    /// None in the model folders.
    NoneFound,
    /// The one picked in Settings is no longer there.
    Gone(PathBuf),
}

impl Missing {
    /// The message a person sees instead of a reply, naming what to do.
    pub fn message(&self, document: &str) -> String {
        let larger = format!("{document} is larger than the context of the loaded model, so it must be searched");
        match self {
            Missing::NoneFound => format!(
                "{larger}, and that takes an embedding model. Get one in Get models (such as {DEFAULT_EMBEDDING_REPO}), or load a model with a longer context."
            ),
            Missing::Gone(path) => format!(
                "{larger} with the embedding model picked in Settings › Model, {}, which is no longer in the model folders. Pick another there, or get one in Get models.",
                path.display()
            ),
        }
    }
}

/// The embedding model to search with: `picked` (Settings::embedding_model) if it is among
/// `found`, else, with none picked, the first embedding model this build runs. A picked model
/// that is gone is said so, never replaced by another behind the person's back.
pub fn choose(picked: Option<&Path>, found: &[ModelSummary]) -> Result<ModelSummary, Missing> {
    let usable = |m: &&ModelSummary| m.embedding && m.supported;
    match picked {
        Some(path) => found.iter().filter(usable).find(|m| m.path == path).cloned().ok_or_else(|| Missing::Gone(path.into())),
        None => found.iter().find(usable).cloned().ok_or(Missing::NoneFound),
    }
}

/// Keeps the loaded embedding model; one at a time.
#[derive(Default)]
pub struct Embedder {
    loaded: tokio::sync::Mutex<Option<Loaded>>,
    /// Held while a document's index is made: one at a time, so that two replies over the same
    /// document make it once.
    pub indexing: tokio::sync::Mutex<()>,
}

impl Embedder {
    /// `model`, loaded now unless it is already (the one loaded before is unloaded).
    pub async fn ensure(&self, engine: &Arc<Engine>, model: &ModelSummary) -> Result<Loaded, Failure> {
        // Held across the load: two documents searched at once load it once.
        let mut loaded = self.loaded.lock().await;
        if let Some(current) = loaded.as_ref().filter(|l| l.path == model.path) {
            return Ok(current.clone());
        }
        if let Some(previous) = loaded.take() {
            let _ = engine.unload(previous.id);
        }
        let (engine, path) = (engine.clone(), model.path.clone());
        let (id, info) = tauri::async_runtime::spawn_blocking(move || engine.load(path, LoadOptions::default(), |_| {}))
            .await?
            .map_err(|e| Failure(format!("Could not load the embedding model {}: {e}", model.name)))?;
        let Some(embedding) = info.embedding else {
            return Err(Failure(format!("{} is not an embedding model; pick one in Settings › Model.", model.name)));
        };
        let current = Loaded { path: model.path.clone(), name: model.name.clone(), id, max_tokens: embedding.max_tokens };
        *loaded = Some(current.clone());
        Ok(current)
    }

    /// The loaded model, if any (none is loaded for asking).
    pub async fn loaded(&self) -> Option<Loaded> {
        self.loaded.lock().await.clone()
    }
}

/// One vector per text, on the engine thread (between decode steps of a reply).
pub async fn embed(engine: &Arc<Engine>, model: &Loaded, texts: Vec<String>, prompt: EmbedPrompt) -> Result<Vec<Vec<f32>>, Failure> {
    let (engine, id) = (engine.clone(), model.id);
    let embeddings = tauri::async_runtime::spawn_blocking(move || engine.embed(id, texts, prompt)).await??;
    Ok(embeddings.vectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/reference/fixtures/tiny").join(name)
    }

    fn found() -> Vec<ModelSummary> {
        confab_engine::discover(&[fixture("qwen3_embedding"), fixture("embeddinggemma"), fixture("llama")])
    }

    #[test]
    fn the_picked_embedding_model_is_used_else_the_first_found_and_a_gone_one_is_said() {
        let found = found();
        assert!(found.iter().any(|m| !m.embedding), "the chat fixture is among them");
        let first = choose(None, &found).unwrap();
        assert!(first.embedding, "a chat model is never chosen to embed");
        let gemma = fixture("embeddinggemma");
        assert_eq!(choose(Some(&gemma), &found).unwrap().path, gemma);
        let gone = PathBuf::from("/models/gone-embedding");
        assert_eq!(choose(Some(&gone), &found).unwrap_err(), Missing::Gone(gone.clone()));
        assert_eq!(choose(Some(&fixture("llama")), &found).unwrap_err(), Missing::Gone(fixture("llama")), "a chat model is not picked");
        assert_eq!(choose(None, &[]).unwrap_err(), Missing::NoneFound);

        let message = Missing::NoneFound.message("book.pdf");
        assert!(message.starts_with("book.pdf is larger than the context"), "{message}");
        assert!(message.contains("Get models") && message.contains(DEFAULT_EMBEDDING_REPO), "{message}");
        assert!(Missing::Gone(gone).message("book.pdf").contains("Settings › Model"));
    }

    #[test]
    fn an_embedding_model_loads_once_beside_and_gives_one_vector_per_text() {
        let engine = Arc::new(Engine::start(Default::default()).unwrap());
        let embedder = Embedder::default();
        let model = choose(Some(&fixture("qwen3_embedding")), &found()).unwrap();
        tauri::async_runtime::block_on(async {
            let loaded = embedder.ensure(&engine, &model).await.unwrap();
            assert_eq!(embedder.ensure(&engine, &model).await.unwrap(), loaded, "kept, not loaded again");
            let vectors = embed(&engine, &loaded, vec!["Paris".into(), "Rust closures".into()], EmbedPrompt::Document).await.unwrap();
            assert_eq!(vectors.len(), 2);
            assert_eq!(vectors[0].len(), 64, "the tiny checkpoint's width");
        });
    }
}
