//! Speculative decoding for a row stepping alone: cheap proposals for its next tokens, fed with
//! its unfed token in one forward pass that scores every position; the row keeps the longest
//! run of proposals the model agrees with, plus the model's own next token, and its state is
//! cut back past the rest. The reply is token for token the one plain decoding gives.
//!
//! Proposals come from prompt lookup (n-gram matches in the prompt and the reply so far) or
//! from a draft model sharing the vocabulary, which decodes greedily on a state of its own that
//! is cut back as the row's is.
//!
//! This slice verifies greedy rows whose every layer state can be cut back. Sampling rows,
//! rotating windows and recurrent state, and rows in a batch decode plainly; the plan says why.

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, transforms, Array};

use super::{argmax, tokens_array, Row, Unfed};
use crate::error::Result;
use crate::runtime::model::ReadyModel;
use crate::runtime::request::{PromptLookup, Speculative};
use crate::sample::Sampler;
use crate::state::SequenceState;
use crate::text::Tokenizer;

/// Why a request goes without the speculative decoding it asked for (`None`: it uses it).
pub(super) fn declined(
    model: &ReadyModel,
    asked: Option<&Speculative>,
    draft: Option<&ReadyModel>,
    sampler: &Sampler,
    state: &SequenceState,
    media: bool,
    grammar: bool,
) -> Option<&'static str> {
    let Some(asked) = asked else { return Some("the request did not ask for it") };
    match (asked, draft) {
        (Speculative::PromptLookup(lookup), _) if lookup.ngram == 0 || lookup.max_draft == 0 => {
            return Some("prompt lookup with an n-gram or a draft of 0 tokens proposes nothing")
        }
        (Speculative::DraftModel { max_draft: 0, .. }, _) => return Some("a draft of 0 tokens proposes nothing"),
        (Speculative::DraftModel { .. }, None) => return Some("the draft model is not loaded"),
        (Speculative::DraftModel { .. }, Some(draft)) if !same_vocabulary(&model.tokenizer, &draft.tokenizer) => {
            return Some("the draft model's vocabulary is not the model's")
        }
        (Speculative::DraftModel { .. }, Some(draft)) if !draft.model.new_state().trimmable() => {
            return Some("the draft model's state cannot be cut back past rejected proposals")
        }
        _ => {}
    }
    if media {
        Some("the prompt has media")
    } else if grammar {
        Some("the reply follows a grammar (grammar jump feeds its forced tokens instead)")
    } else if !sampler.is_greedy() {
        Some("only greedy decoding is verified so far; this request samples")
    } else if !state.trimmable() {
        Some("the model's state cannot be cut back past rejected proposals (a rotating window or recurrent state)")
    } else if !model.model.scores_every_position() {
        Some("the model gives the logits of its last position only")
    } else {
        None
    }
}

/// Whether two tokenizers map every id to the same token (a draft's proposals are ids).
fn same_vocabulary(a: &Tokenizer, b: &Tokenizer) -> bool {
    a.vocab_size() == b.vocab_size() && (0..a.vocab_size() as u32).all(|id| a.id_to_token(id) == b.id_to_token(id))
}

/// A speculating row's method and what it has done so far.
pub(super) struct Speculation {
    pub method: Speculative,
    /// The draft model's state: a prefix of the row's history, caught up at each step.
    draft_state: Option<SequenceState>,
    /// Tokens proposed, and those the model agreed with.
    pub proposed: usize,
    pub accepted: usize,
}

impl Speculation {
    pub fn new(method: Speculative, draft: Option<&ReadyModel>) -> Self {
        Self { method, draft_state: draft.map(|d| d.model.new_state()), proposed: 0, accepted: 0 }
    }
}

/// Draft tokens fed in one pass while the draft catches up with a long prompt.
const DRAFT_CHUNK: usize = crate::defaults::PREFILL_CHUNK_TOKENS;

/// The draft model's greedy continuation of `history`, `count` tokens: it first reads the
/// tokens of `history` its state lacks, then feeds each proposal back. Its state then holds
/// `history` and all proposals but the last. Ids past the model's vocabulary end the draft.
fn draft_proposals(draft: &ReadyModel, state: &mut SequenceState, history: &[u32], count: usize, vocab: usize) -> Result<Vec<u32>> {
    let missing = &history[state.len()..];
    let mut logits = None;
    for chunk in missing.chunks(DRAFT_CHUNK) {
        if logits.is_some() {
            transforms::eval(state.arrays())?;
        }
        logits = Some(draft.model.forward(&tokens_array(chunk), state)?);
    }
    let Some(logits) = logits else { return Ok(vec![]) };
    // Each proposal is fed back on the device; all are read at the end, in one wait.
    let mut next = argmax(&logits)?;
    let mut chosen = vec![next.clone()];
    for _ in 1..count {
        let logits = draft.model.forward(&next.reshape(&[1, 1])?, state)?;
        next = argmax(&logits)?;
        chosen.push(next.clone());
    }
    let chosen = ops::concatenate(&chosen, 0)?.as_dtype(mlx_rs::Dtype::Uint32)?;
    chosen.eval()?;
    Ok(chosen.as_slice::<u32>().iter().copied().take_while(|&t| (t as usize) < vocab).collect())
}

/// What prompt lookup proposes after `tokens`: the tokens that followed the latest earlier
/// occurrence of its last n tokens, for the longest n from `ngram` down to 1 that has one; at
/// most `max` of them.
pub(super) fn look_up(tokens: &[u32], settings: PromptLookup, max: usize) -> &[u32] {
    for n in (1..=settings.ngram.min(tokens.len().saturating_sub(1))).rev() {
        let tail = &tokens[tokens.len() - n..];
        // Starts of earlier occurrences, latest first (the tail itself excluded).
        let found = (0..tokens.len() - n).rev().find(|&start| &tokens[start..start + n] == tail);
        if let Some(start) = found {
            let from = start + n;
            return &tokens[from..(from + max).min(tokens.len())];
        }
    }
    &[]
}

impl Row {
    /// One speculative step, when the row has something to propose: feeds its unfed token and
    /// the proposals in one pass, keeps what the model agrees with, streams it, and leaves the
    /// model's own next token unfed. `false` when there is nothing to propose (the caller
    /// takes a plain step instead).
    pub(super) fn speculative_step(&mut self, model: &ReadyModel, draft: Option<&ReadyModel>) -> Result<bool> {
        let (Some(speculation), Some(Unfed::Known(token))) = (&mut self.speculation, &self.unfed) else { return Ok(false) };
        let token = *token;
        // Room for the proposals: the tokens the reply may still generate (the model's own next
        // token among them), and positions the context still has.
        let room = (self.max_tokens - self.generated)
            .saturating_sub(1)
            .min(model.config().max_position.saturating_sub(self.history.len() + 1));
        let _in_span = self.span.clone().entered();
        let held = self.history.len();
        let drafts: Vec<u32> = match (speculation.method, draft, speculation.draft_state.as_mut()) {
            (Speculative::PromptLookup(settings), _, _) => look_up(&self.history, settings, settings.max_draft.min(room)).to_vec(),
            (Speculative::DraftModel { max_draft, .. }, Some(draft), Some(state)) if max_draft.min(room) > 0 => {
                draft_proposals(draft, state, &self.history, max_draft.min(room), model.config().vocab_size)?
            }
            // The draft model was unloaded, or the reply has no room left for proposals.
            (Speculative::DraftModel { .. }, _, _) => vec![],
        };
        if drafts.is_empty() {
            return Ok(false);
        }
        self.unfed = None;
        let fed: Vec<u32> = std::iter::once(token).chain(drafts.iter().copied()).collect();
        let logits = model.model.forward_every(&tokens_array(&fed), &mut self.state)?;
        self.fed.push(token);
        let mut agreed = 0;
        for (i, &draft) in drafts.iter().enumerate() {
            let chosen = self.sampler.sample(&logits.index(i as i32), &self.history)?;
            if chosen != draft {
                break;
            }
            agreed += 1;
            // As plain decoding would: streamed and checked; fed unless it ended the reply
            // (plain decoding never feeds the token that ends a reply).
            self.accept(model, chosen)?;
            if self.stopped.is_some() {
                break;
            }
            self.fed.push(chosen);
        }
        if self.stopped.is_none() {
            let next = self.sampler.sample(&logits.index(agreed as i32), &self.history)?;
            self.take(model, next)?;
        }
        // Keys and values past what was kept go: the rejected proposals leave no trace.
        self.state.trim(self.fed.len())?;
        if let Some(speculation) = self.speculation.as_mut() {
            speculation.proposed += drafts.len();
            speculation.accepted += agreed;
            // The draft's state holds the history it read and every proposal but the last:
            // the accepted ones stay, the next step feeds it the rest.
            if let Some(state) = speculation.draft_state.as_mut() {
                state.trim(state.len().min(held + agreed))?;
            }
        }
        tracing::trace!(proposed = drafts.len(), accepted = agreed, "speculative step");
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETTINGS: PromptLookup = PromptLookup { ngram: 3, max_draft: 8 };

    #[test]
    fn proposes_what_followed_the_latest_earlier_occurrence() {
        // "1 2 3" occurs twice before the tail; the later occurrence wins.
        let tokens = [1, 2, 3, 4, 5, 1, 2, 3, 6, 7, 8, 1, 2, 3];
        assert_eq!(look_up(&tokens, SETTINGS, 8), [6, 7, 8, 1, 2, 3]);
        assert_eq!(look_up(&tokens, SETTINGS, 2), [6, 7]);
    }

    #[test]
    fn falls_back_to_shorter_ngrams_and_proposes_nothing_without_a_match() {
        // No earlier "9 2 3" or "2 3"... but "3" occurs earlier.
        let tokens = [5, 3, 4, 9, 2, 3];
        assert_eq!(look_up(&tokens, SETTINGS, 8), [4, 9, 2, 3]);
        assert!(look_up(&[1, 2, 3, 4], SETTINGS, 8).is_empty());
        assert!(look_up(&[7], SETTINGS, 8).is_empty());
        assert!(look_up(&[], SETTINGS, 8).is_empty());
        assert!(look_up(&[1, 1, 1], SETTINGS, 0).is_empty());
    }
}
