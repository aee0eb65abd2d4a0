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
    let mut all = Vec::with_capacity(texts.len());
    for (index, text) in texts.iter().enumerate() {
        let ids = model.tokenizer.encode(&head.prompted(text, prompt), true)?;
        head.check_length(index, ids.len())?;
        all.push(ids);
    }
    let prompt_tokens = all.iter().map(Vec::len).sum();
    let mut vectors = vec![Vec::new(); texts.len()];
    for batch in batches(&all.iter().map(Vec::len).collect::<Vec<_>>(), batch_tokens()) {
        let ids: Vec<&[u32]> = batch.iter().map(|&i| all[i].as_slice()).collect();
        for (i, vector) in batch.into_iter().zip(head.embed_batch(model.model.as_ref(), &ids)?) {
            vectors[i] = vector;
        }
    }
    Ok(Embeddings { vectors, prompt_tokens })
}

/// The most positions (padding included) one forward pass of `embed` reads: several texts
/// together read the weights once, and the attention's [texts, heads, L, L] scores stay small.
pub const BATCH_TOKENS: usize = 4096;

/// The batch budget: the environment's `CONFAB_EMBED_BATCH_TOKENS` where it is set (`0`: one text
/// per pass, to compare), read once; else one text per pass where Confab's CPU kernels run the
/// model (measured there: batching indexed 30% slower, bench/documents.py and docs/benchmarks.md,
/// the arithmetic being the same and a passage's 256 rows already filling the kernels), and
/// `BATCH_TOKENS` elsewhere.
fn batch_tokens() -> usize {
    static BUDGET: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let set = *BUDGET.get_or_init(|| {
        let value = std::env::var("CONFAB_EMBED_BATCH_TOKENS").ok()?;
        let budget = value.trim().parse().ok();
        if budget.is_none() {
            tracing::warn!(%value, "CONFAB_EMBED_BATCH_TOKENS is not a number of tokens; ignored");
        }
        budget
    });
    set.unwrap_or(if crate::model::layers::cpu_linear::enabled() { 0 } else { BATCH_TOKENS })
}

/// Texts of these token counts grouped for `EmbeddingHead::embed_batch`, by index: sorted by
/// length, so that texts of about the same length share a batch and little is padding, each
/// batch at most `budget` positions once padded to its longest (a text longer than that alone).
pub fn batches(lengths: &[usize], budget: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&i| lengths[i]);
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for i in order {
        // Sorted ascending, so this text is the batch's longest once in it.
        if !current.is_empty() && (current.len() + 1) * lengths[i] > budget {
            out.push(std::mem::take(&mut current));
        }
        current.push(i);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_sorted_by_length_within_the_budget() {
        let lengths = [300, 10, 5000, 12, 290, 11];
        let got = batches(&lengths, 700);
        assert_eq!(got, vec![vec![1, 5, 3], vec![4, 0], vec![2]]);
        for batch in &got {
            let longest = batch.iter().map(|&i| lengths[i]).max().unwrap();
            assert!(batch.len() == 1 || batch.len() * longest <= 700);
        }
        let mut every: Vec<usize> = got.into_iter().flatten().collect();
        every.sort();
        assert_eq!(every, (0..lengths.len()).collect::<Vec<_>>());
    }
}
