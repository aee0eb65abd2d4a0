//! Embedding requests: texts in, one vector each out, from a loaded embedding model.

use crate::error::{EngineError, Result};
use crate::model::embedding::EmbedPrompt;
use crate::runtime::ready_model::ReadyModel;

/// What `Engine::embed` returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    /// One vector per text, in order.
    pub vectors: Vec<Vec<f32>>,
    /// The tokens read, prompts and special tokens included.
    pub prompt_tokens: usize,
}

/// Each text with `prompt` written before it, tokenized as the model's tokenizer does (special
/// tokens included, as a last-token-pooling model's tokenizer appends the token it pools), read
/// whole, pooled.
pub fn embed(model: &ReadyModel, texts: &[String], prompt: &EmbedPrompt) -> Result<Embeddings> {
    let Some(head) = &model.embedding else {
        return Err(EngineError::invalid(
            "model",
            format!(
                "{} is not an embedding model (its folder has no sentence-transformers modules.json with a Pooling module)",
                model.info.path.display()
            ),
        ));
    };
    let mut vectors = Vec::with_capacity(texts.len());
    let mut prompt_tokens = 0;
    for (index, text) in texts.iter().enumerate() {
        let ids = model.tokenizer.encode(&head.prompted(text, prompt), true)?;
        head.check_length(index, ids.len())?;
        prompt_tokens += ids.len();
        vectors.push(head.embed(model.model.as_ref(), &ids)?);
    }
    Ok(Embeddings { vectors, prompt_tokens })
}
