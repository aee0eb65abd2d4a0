//! Speculative decoding for a row stepping alone: cheap proposals for its next tokens, fed with
//! its unfed token in one forward pass that scores every position; the row keeps the longest
//! run of proposals the model agrees with, plus the model's own next token, and its state is
//! cut back past the rest. The reply is token for token the one plain decoding gives.
//!
//! This slice verifies greedy rows whose every layer state can be cut back. Sampling rows,
//! rotating windows and recurrent state, and rows in a batch decode plainly; the plan says why.

use mlx_rs::ops::indexing::IndexOp;

use super::{tokens_array, Row, Unfed};
use crate::error::Result;
use crate::runtime::model::ReadyModel;
use crate::runtime::request::{PromptLookup, Speculative};
use crate::sample::Sampler;
use crate::state::SequenceState;

/// Why a request goes without the speculative decoding it asked for (`None`: it uses it).
pub(super) fn declined(
    model: &ReadyModel,
    asked: Option<&Speculative>,
    sampler: &Sampler,
    state: &SequenceState,
    media: bool,
    grammar: bool,
) -> Option<&'static str> {
    let Some(asked) = asked else { return Some("the request did not ask for it") };
    if let Speculative::PromptLookup(lookup) = asked {
        if lookup.ngram == 0 || lookup.max_draft == 0 {
            return Some("prompt lookup with an n-gram or a draft of 0 tokens proposes nothing");
        }
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

/// A speculating row's method and what it has done so far.
pub(super) struct Speculation {
    pub method: Speculative,
    /// Tokens proposed, and those the model agreed with.
    pub proposed: usize,
    pub accepted: usize,
}

impl Speculation {
    pub fn new(method: Speculative) -> Self {
        Self { method, proposed: 0, accepted: 0 }
    }
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
    pub(super) fn speculative_step(&mut self, model: &ReadyModel) -> Result<bool> {
        let (Some(speculation), Some(Unfed::Known(token))) = (&self.speculation, &self.unfed) else { return Ok(false) };
        let token = *token;
        // Room for the proposals: the tokens the reply may still generate (the model's own next
        // token among them), and positions the context still has.
        let room = (self.max_tokens - self.generated)
            .saturating_sub(1)
            .min(model.config().max_position.saturating_sub(self.history.len() + 1));
        let drafts: Vec<u32> = match speculation.method {
            Speculative::PromptLookup(settings) => look_up(&self.history, settings, settings.max_draft.min(room)).to_vec(),
        };
        if drafts.is_empty() {
            return Ok(false);
        }
        let _in_span = self.span.clone().entered();
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
