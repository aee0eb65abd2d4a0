//! Proposals from the model's multi-token-prediction head (`TextModel::mtp`).
//!
//! The head reads, at each position p the model computed, the model's final hidden state there
//! and the token at p + 1, into keys and values of its own placed at p (as mlx-vlm's
//! `prefill_from_target_hidden` does); its output at the last fed position with the row's unfed
//! token predicts the token after that. Each further draft feeds the head its own output and its
//! own choice (`draft_block`). After the verifying pass the drafts' entries go, and the model's
//! hidden states at the positions kept are read in their place the next time.
//!
//! Hidden states come from the passes the row takes that compute them (`Compute::LogitsAndHidden`): its
//! prompt chunks and its verifying passes. Positions it stepped plainly (resting, in a larger
//! batch) leave a gap in the head's entries; the head then reads on at the right positions, and
//! a row with no hidden state for its last position takes a verifying pass without proposals
//! first (`needs_hidden`). A prefix-cache resume starts the head at the resumed position.

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, transforms, Array};

use crate::error::Result;
use crate::model::MultiTokenPredictor;
use crate::sample::Sampler;
use crate::state::SequenceState;

use super::Proposals;

pub(in crate::runtime::generate) struct MtpDrafts {
    state: SequenceState,
    /// The model's hidden states [1, L, hidden] at positions `from..from + L`, not yet read
    /// (the head reads a position once the token after it is known).
    unread: Option<(usize, Array)>,
    /// The head's length before its latest drafts: what it read of the model.
    read: usize,
}

impl MtpDrafts {
    pub fn new(head: &dyn MultiTokenPredictor) -> Self {
        Self { state: head.mtp_state(), unread: None, read: 0 }
    }

    /// The model's hidden states [1, L, hidden] at positions `from..from + L`, to read.
    pub fn hidden(&mut self, from: usize, hidden: Array) -> Result<()> {
        self.unread = match self.unread.take() {
            Some((start, before)) if start + before.dim(1) as usize == from => Some((start, ops::concatenate(&[before, hidden], 1)?)),
            _ => Some((from, hidden)),
        };
        Ok(())
    }

    /// Reads every unread position whose next token `history` holds. Returns the head's output
    /// [1, 1, hidden] at the last position before history's last token, where it read it now
    /// (what the first draft comes from).
    pub fn catch_up(&mut self, head: &dyn MultiTokenPredictor, history: &[u32]) -> Result<Option<Array>> {
        let Some((from, hidden)) = self.unread.take() else { return Ok(None) };
        let next = (self.state.len() as i64 + self.state.position_shift()) as usize;
        // Positions already read (none, unless hidden states arrived twice) are skipped.
        let skip = next.saturating_sub(from);
        let (from, end) = (from + skip, from + hidden.dim(1) as usize);
        let readable = end.min(history.len().saturating_sub(1));
        if from >= readable {
            self.unread = (from < end).then(|| (from, hidden.index((.., skip as i32.., ..))));
            return Ok(None);
        }
        let take = |a: usize, b: usize| hidden.index((.., (a - from + skip) as i32..(b - from + skip) as i32, ..));
        if from != next {
            self.state.set_position_shift(from as i64 - self.state.len() as i64);
        }
        let tokens: Vec<i32> = history[from + 1..readable + 1].iter().map(|&t| t as i32).collect();
        let out = head.mtp_forward(&Array::from_slice(&tokens, &[1, tokens.len() as i32]), &take(from, readable), &mut self.state)?;
        transforms::async_eval(self.state.arrays())?;
        self.unread = (readable < end).then(|| (readable, take(readable, end)));
        self.read = self.state.len();
        let last = readable + 1 == history.len();
        Ok(last.then(|| out.index((.., -1.., ..))))
    }

    /// Up to `count` drafts after `history` (whose last token is the row's unfed one), each
    /// chosen by `sampler` from the head's logits (the request's processing; greedy rows take
    /// its top token, sampling rows draw, recording the distribution). Nothing where the head
    /// has not read the model's hidden state at the last fed position.
    pub fn propose(
        &mut self,
        head: &dyn MultiTokenPredictor,
        history: &[u32],
        count: usize,
        vocab: usize,
        sampler: &mut Sampler,
    ) -> Result<Proposals> {
        let mut proposals = Proposals { tokens: vec![], drawn_from: None, draft_checkpoint: None };
        let Some(mut out) = self.catch_up(head, history)? else { return Ok(proposals) };
        let greedy = sampler.is_greedy();
        let (mut seen, mut drawn_from) = (history.to_vec(), vec![]);
        for i in 0..count {
            if i > 0 {
                let last = Array::from_slice(&[seen[seen.len() - 1] as i32], &[1, 1]);
                out = head.mtp_forward(&last, &out, &mut self.state)?;
            }
            let logits = head.mtp_logits(&out.reshape(&[1, -1])?)?;
            let token = match greedy {
                true => Some(sampler.sample(&logits, &seen)?),
                false => {
                    let q = sampler.distribution(&logits, &seen)?;
                    let token = sampler.draw_from(&q);
                    drawn_from.push(q.into_iter().collect());
                    token
                }
            };
            match token {
                Some(token) if (token as usize) < vocab => {
                    proposals.tokens.push(token);
                    seen.push(token);
                }
                _ => {
                    drawn_from.truncate(proposals.tokens.len());
                    break;
                }
            }
        }
        proposals.drawn_from = (!greedy).then_some(drawn_from);
        Ok(proposals)
    }

    /// Whether the head lacks the model's hidden state at the last fed position (`fed`
    /// positions): the row's next pass must give it before the head can propose.
    pub fn needs_hidden(&self, fed: usize) -> bool {
        let known = self.unread.as_ref().map(|(from, h)| from + h.dim(1) as usize);
        let read = self.state.len() as i64 + self.state.position_shift();
        known.unwrap_or(read as usize) < fed
    }

    /// After a verifying pass: the drafts' entries go, and `hidden` [1, kept, hidden] (the model's
    /// at positions `from..`, those kept) waits to be read.
    pub fn verified(&mut self, from: usize, hidden: Array) -> Result<()> {
        self.state.trim(self.read)?;
        self.hidden(from, hidden)
    }
}
