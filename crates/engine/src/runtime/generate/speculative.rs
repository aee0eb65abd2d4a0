//! Speculative decoding for a row stepping alone: cheap proposals for its next tokens, fed with
//! its unfed token in one forward pass that scores every position; the row keeps the longest
//! run of proposals the model agrees with, plus the model's own next token, and its state is
//! cut back past the rest. A greedy reply is token for token the one plain decoding gives.
//!
//! Proposals come from prompt lookup (n-gram matches in the prompt and the reply so far), from
//! a draft model sharing the vocabulary, which decodes (as the request samples) on a state of
//! its own that is cut back as the row's is, or from the model's multi-token-prediction head
//! (`mtp`).
//!
//! Greedy rows keep a proposal where it is the model's own choice; sampling rows keep it with
//! probability min(1, p/q) and otherwise draw from max(0, p − q), normalised (Leviathan et al.
//! 2023; Chen et al. 2023), p and q being the model's and the draft's distributions after the
//! request's sampler processed them (penalties, temperature, top-k, top-p, min-p), so that each
//! token is distributed exactly as plain sampling's. Prompt lookup's proposals are certain
//! (q is 1 at the proposal).
//!
//! Every kind of state takes a rejected suffix back (`speculative_step` says how), and rows in
//! a batch verify together, each with its own number of proposals; each row's draft length
//! follows its acceptance, down to plain decoding for a while where proposals keep failing.

mod costs;
mod mtp;

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, transforms, Array};

use super::{argmax, tokens_array, Row, Unfed};
use crate::constraint::{Guide, TokenMask};
use crate::error::{EngineError, Result};
use crate::model::{Compute, Input, Positions, Rows};
use crate::runtime::ready_model::ReadyModel;
use crate::runtime::request::{ModelId, PromptLookup, Speculative};
use crate::sample::{Sampler, SamplingParams};
use crate::state::{Checkpoint, SequenceState};
use crate::text::Tokenizer;

/// Why a request goes without the speculative decoding it asked for (`None`: it uses it).
pub(super) fn declined(model: &ReadyModel, asked: Option<&Speculative>, draft: Option<&ReadyModel>, media: bool) -> Option<&'static str> {
    let Some(asked) = asked else { return Some("the request did not ask for it") };
    match (asked, draft) {
        (Speculative::PromptLookup(lookup), _) if lookup.ngram == 0 || lookup.max_draft == 0 => {
            return Some("prompt lookup with an n-gram or a draft of 0 tokens proposes nothing")
        }
        (Speculative::DraftModel { max_draft: 0, .. } | Speculative::Mtp { max_draft: 0 }, _) => {
            return Some("a draft of 0 tokens proposes nothing")
        }
        (Speculative::Mtp { .. }, _) if model.model.mtp().is_none() => {
            return Some("the model has no multi-token-prediction head (its checkpoint carries no mtp.* weights)")
        }
        (Speculative::DraftModel { .. }, None) => return Some("the draft model is not loaded"),
        (Speculative::DraftModel { .. }, Some(draft)) if vocabulary_mismatch(&model.tokenizer, &draft.tokenizer).is_some() => {
            return Some("the draft model's vocabulary is not the model's")
        }
        _ => {}
    }
    if media {
        Some("the prompt has media")
    } else if !model.model.accepts().every_position {
        Some("the model gives the logits of its last position only")
    } else {
        None
    }
}

/// Where a draft's vocabulary parts from the model's, in words; `None` where both map every id
/// to the same token (a draft's proposals are ids, so nothing less will do).
pub(crate) fn vocabulary_mismatch(model: &Tokenizer, draft: &Tokenizer) -> Option<String> {
    if model.vocab_size() != draft.vocab_size() {
        return Some(format!("{} tokens against the model's {}", draft.vocab_size(), model.vocab_size()));
    }
    let differs = (0..model.vocab_size() as u32).find(|&id| model.id_to_token(id) != draft.id_to_token(id))?;
    let spelled = |t: &Tokenizer| t.id_to_token(differs).map_or("nothing".to_owned(), |token| format!("{token:?}"));
    Some(format!("token {differs} is {} in the draft but {} in the model", spelled(draft), spelled(model)))
}

/// Where the model at `draft` would propose other tokens than the model at `model` reads, in
/// words (`None`: they share a vocabulary), from their tokenizers alone (no weights are read):
/// what a list of drafts to offer asks before anything is loaded.
pub fn draft_vocabulary_mismatch(model: &Path, draft: &Path) -> Result<Option<String>> {
    let read = |path: &Path| match path.is_file() {
        true => Tokenizer::from_gguf(&crate::model::format::gguf::metadata_only(path)?, path),
        false => Tokenizer::from_hf_folder(path),
    };
    Ok(vocabulary_mismatch(&read(model)?, &read(draft)?))
}

/// A speculating row's method and what it has done so far.
pub(super) struct Speculation {
    pub method: Speculative,
    /// The draft model's state: a prefix of the row's history, caught up at each step.
    draft_state: Option<SequenceState>,
    /// The draft's own sampler (the request's settings), for a row that samples (and for the
    /// multi-token-prediction head's drafts, greedy or not).
    draft_sampler: Option<Sampler>,
    /// The multi-token-prediction head's state, for `Speculative::Mtp`.
    mtp: Option<mtp::MtpDrafts>,
    /// Tokens proposed, those the model agreed with, and the verifying passes.
    pub proposed: usize,
    /// Tokens its grammar forced that verifying passes fed before the proposals (free drafts:
    /// the grammar allows nothing else, so they need no checking).
    pub from_grammar: usize,
    pub accepted: usize,
    pub steps: usize,
    /// The most tokens the next step proposes: adapts to the row's acceptance (`adapt`).
    draft_len: usize,
    /// The share of recent proposals accepted (a moving average).
    rate: f64,
    /// Steps still to decode plainly, after proposals kept failing.
    resting: usize,
    /// The next step proposes whatever the costs say: the probe after a rest.
    probing: bool,
    /// What its verifying passes cost, by width: caps the draft length (`costs`).
    costs: costs::PassCosts,
}

impl Speculation {
    /// For a row sampling under `sampling` (its draft, if any, draws under the same settings,
    /// from a seed of its own derived from the request's).
    pub fn new(
        method: Speculative,
        model: &ReadyModel,
        draft: Option<&ReadyModel>,
        sampling: &SamplingParams,
        greedy: bool,
    ) -> Result<Self> {
        let seeded = SamplingParams { seed: sampling.seed.map(|s| s ^ DRAFT_SEED), ..sampling.clone() };
        let head = model.model.mtp().filter(|_| matches!(method, Speculative::Mtp { .. }));
        let draft_sampler = match (draft, head) {
            (Some(d), _) if !greedy => Some(Sampler::new(seeded, d.config().vocab_size)?),
            (_, Some(_)) => Some(Sampler::new(seeded, model.config().vocab_size)?),
            _ => None,
        };
        let draft_len = method.max_draft();
        Ok(Self {
            method,
            draft_state: draft.map(|d| d.model.new_state()),
            draft_sampler,
            mtp: head.map(mtp::MtpDrafts::new),
            proposed: 0,
            from_grammar: 0,
            accepted: 0,
            steps: 0,
            draft_len,
            rate: 1.0,
            resting: 0,
            probing: false,
            costs: costs::PassCosts::default(),
        })
    }

    /// Whether its proposals come cut to how far their source agrees with the sequence (prompt
    /// lookup, `look_up`): that says more than the row's average acceptance, so neither the
    /// draft schedule nor the pass costs size them, and a copy that has agreed for a while
    /// pays for a long pass even on a CPU.
    fn sized_by_source(&self) -> bool {
        matches!(self.method, Speculative::PromptLookup(_))
    }

    /// After a step that kept `agreed` of `proposed` tokens: longer drafts while every
    /// proposal is kept, shorter ones (down to 1) after a rejection, as transformers' assisted
    /// generation schedules them; a verifying pass grows with every position it checks. Where
    /// the recent acceptance falls below `MIN_ACCEPTANCE`, proposals cost more than they save
    /// (a draft's passes, a longer verifying pass, a replay where the state was restored): the
    /// row decodes plainly for `REST_STEPS` steps, then tries a single proposal again.
    fn adapt(&mut self, proposed: usize, agreed: usize, max_draft: usize) {
        self.draft_len = match (self.sized_by_source(), agreed == proposed) {
            (true, _) => max_draft,
            (false, true) => (self.draft_len + 2).min(max_draft),
            (false, false) => self.draft_len.saturating_sub(1).max(1),
        };
        let share = agreed as f64 / proposed.max(1) as f64;
        self.rate = (1.0 - RATE_WEIGHT) * self.rate + RATE_WEIGHT * share;
        if self.rate < MIN_ACCEPTANCE {
            self.resting = REST_STEPS;
            self.draft_len = 1;
            // The probe after the rest starts from the threshold: one more miss rests again.
            self.rate = MIN_ACCEPTANCE;
        }
    }
}

/// How much the latest step weighs in a row's moving acceptance rate.
const RATE_WEIGHT: f64 = 0.3;
/// Below this recent acceptance a row rests from proposing (`Speculation::adapt`).
const MIN_ACCEPTANCE: f64 = 0.2;
/// Plain steps a row takes before it proposes again.
const REST_STEPS: usize = 8;

/// Mixed into the request's seed for its draft's sampler, so that the two draw differently.
const DRAFT_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// What a step proposes: tokens, and for drafted ones that were sampled, the distribution each
/// was drawn from (`None`: each proposal was certain).
struct Proposals {
    tokens: Vec<u32>,
    drawn_from: Option<Vec<HashMap<u32, f64>>>,
    /// The draft's state before it proposed, where it cannot be cut back.
    draft_checkpoint: Option<Checkpoint>,
}

/// Draft tokens fed in one pass while the draft catches up with a long prompt.
const DRAFT_CHUNK: usize = crate::defaults::PREFILL_CHUNK_TOKENS;

/// The draft reads the tokens of `history` its state lacks: its logits for what follows.
fn catch_up(draft: &ReadyModel, state: &mut SequenceState, history: &[u32]) -> Result<Option<Array>> {
    let missing = &history[state.len().min(history.len())..];
    let mut logits = None;
    for chunk in missing.chunks(DRAFT_CHUNK) {
        if logits.is_some() {
            transforms::eval(state.arrays())?;
        }
        logits = Some(draft.model.logits(&tokens_array(chunk), state)?);
    }
    Ok(logits)
}

/// The draft model's continuation of `history`, `count` tokens at most: greedy, or drawn by
/// `sampler` (each with the distribution it was drawn from). Its state then holds `history`
/// and the proposals but (at most) the last. Ids past the model's vocabulary end the draft;
/// a draft whose context is full proposes nothing.
fn draft_proposals(
    draft: &ReadyModel,
    state: &mut SequenceState,
    history: &[u32],
    count: usize,
    vocab: usize,
    sampler: Option<&mut Sampler>,
) -> Result<Proposals> {
    let nothing = || Proposals { tokens: vec![], drawn_from: None, draft_checkpoint: None };
    if history.len() + count > draft.config().max_position {
        return Ok(nothing());
    }
    let Some(logits) = catch_up(draft, state, history)? else { return Ok(nothing()) };
    let draft_checkpoint = state.checkpoint();
    let Some(sampler) = sampler else {
        return Ok(Proposals { tokens: greedy_draft(draft, state, logits, count, vocab)?, drawn_from: None, draft_checkpoint });
    };
    let (mut tokens, mut drawn_from, mut seen) = (vec![], vec![], history.to_vec());
    let mut logits = logits;
    for i in 0..count {
        if i > 0 {
            logits = draft.model.logits(&tokens_array(&seen[seen.len() - 1..]), state)?;
        }
        let q = sampler.distribution(&logits, &seen)?;
        match sampler.draw_from(&q) {
            Some(token) if (token as usize) < vocab => {
                tokens.push(token);
                drawn_from.push(q.into_iter().collect());
                seen.push(token);
            }
            _ => break,
        }
    }
    Ok(Proposals { tokens, drawn_from: Some(drawn_from), draft_checkpoint })
}

/// Greedy proposals from the draft's `logits` on: each is fed back on the device, and all are
/// read at the end, in one wait.
fn greedy_draft(draft: &ReadyModel, state: &mut SequenceState, logits: Array, count: usize, vocab: usize) -> Result<Vec<u32>> {
    let mut next = argmax(&logits)?;
    let mut chosen = vec![next.clone()];
    for _ in 1..count {
        let logits = draft.model.logits(&next.reshape(&[1, 1])?, state)?;
        next = argmax(&logits)?;
        chosen.push(next.clone());
    }
    let chosen = ops::concatenate(&chosen, 0)?.as_dtype(mlx_rs::Dtype::Uint32)?;
    chosen.eval()?;
    Ok(chosen.as_slice::<u32>().iter().copied().take_while(|&t| (t as usize) < vocab).collect())
}

/// What prompt lookup proposes after `tokens`: what followed an earlier occurrence of its last
/// n tokens, for the longest n from `ngram` down to 2 (or 1 when `ngram` is 1) that has one.
/// Of those occurrences, the one whose tokens agree with the sequence's furthest back (the
/// latest on a tie): where a reply copies its prompt, that is the passage it copies, not the
/// latest place the same few words occur. At most `max` tokens, and no more than that agreement:
/// a copy that has agreed for a while is likely to go on, one that just began often stops.
/// (A single token recurs too often in free text for what followed it to be worth a pass.)
pub(super) fn look_up(tokens: &[u32], settings: PromptLookup, max: usize) -> &[u32] {
    let shortest = settings.ngram.min(2);
    for n in (shortest..=settings.ngram.min(tokens.len().saturating_sub(1))).rev() {
        let tail = &tokens[tokens.len() - n..];
        // Each earlier occurrence's end (the tail itself excluded), by its agreement.
        let found = (n..tokens.len()).filter(|&end| &tokens[end - n..end] == tail).map(|end| (agreement(tokens, end), end)).max();
        if let Some((agreement, from)) = found {
            return &tokens[from..(from + max.min(agreement)).min(tokens.len())];
        }
    }
    &[]
}

/// How many tokens before `end` agree with the last ones of `tokens` (`end` < its length),
/// counted up to `AGREEMENT_COUNTED`.
fn agreement(tokens: &[u32], end: usize) -> usize {
    tokens[..end].iter().rev().zip(tokens.iter().rev()).take(AGREEMENT_COUNTED).take_while(|(a, b)| a == b).count()
}

/// How far back prompt lookup compares an occurrence: bounds its work on repetitive text, and
/// is well past the longest proposal.
const AGREEMENT_COUNTED: usize = 64;

/// Whether the model keeps `proposed` where its logits are `logits`, and if not, the token it
/// chooses there instead. Greedy: its own choice, kept when it is the proposal. Sampling: kept
/// with probability min(1, p/q), else replaced by a draw from max(0, p − q), normalised; `q` is
/// the distribution the proposal was drawn from (`None`: it was certain). Under a grammar, p is
/// the masked distribution plain decoding draws from: a proposal the grammar does not allow has
/// p = 0 and is always rejected, so proposals need no filtering for the rule to be exact.
fn verify(
    sampler: &mut Sampler,
    logits: &Array,
    history: &[u32],
    proposed: u32,
    q: Option<&HashMap<u32, f64>>,
    mask: Option<&TokenMask>,
) -> Result<Option<u32>> {
    if sampler.is_greedy() {
        let chosen = sampler.sample_masked(logits, history, mask)?;
        return Ok((chosen != proposed).then_some(chosen));
    }
    let p = sampler.distribution_masked(logits, history, mask)?;
    let q_of = |id: u32| match q {
        Some(q) => q.get(&id).copied().unwrap_or(0.0),
        None => f64::from(u8::from(id == proposed)),
    };
    let p_proposed = p.iter().find(|&&(id, _)| id == proposed).map_or(0.0, |&(_, w)| w);
    let q_proposed = q_of(proposed);
    if q_proposed > 0.0 && sampler.uniform() < p_proposed / q_proposed {
        return Ok(None);
    }
    let residual: Vec<(u32, f64)> = p.iter().map(|&(id, w)| (id, (w - q_of(id)).max(0.0))).collect();
    // All of the residual is 0 only where p is q, where the proposal is always kept.
    Ok(Some(sampler.draw_from(&residual).or_else(|| sampler.draw_from(&p)).unwrap_or(proposed)))
}

/// A row's part in a verifying pass: the tokens it feeds first (its chosen token, and the
/// tokens its grammar forces after it), its proposals, and the state its layers that cannot be
/// cut back had before the pass.
struct Verifying {
    prefix: Vec<u32>,
    proposals: Proposals,
    /// History length before the step (the draft's state is cut back relative to it).
    held: usize,
    /// `None` where every layer can be cut back.
    checkpoint: Option<Checkpoint>,
    /// The row's multi-token-prediction head has not read the model's hidden state at its last
    /// position: the pass runs for it even without proposals.
    needs_hidden: bool,
}

/// One speculative step for the batch (a single row, or several of one model), when any row has
/// proposals: each row feeds its unfed token and its proposals, padded at the end to the
/// longest row's, in one forward pass that scores every position; each keeps what the model
/// agrees with, streams it, and leaves the model's own next token unfed. Rows with no
/// proposals take their plain step in the same pass. `false` when this step cannot verify
/// (nothing is proposed, a row's token is still on the device or under a grammar, the model
/// cannot score every position of a batch): the caller takes a plain step.
///
/// A rejected suffix (or a row's padding) leaves no trace: keys and values are cut back; layers
/// that cannot be (rotating windows, recurrent and convolution state) are restored from the
/// copy taken before the pass, and the tokens kept are fed again in one pass (rows replaying
/// as many tokens share it). Copies are cheap (arrays are shared, not copied, until written)
/// and the replay costs a pass only where something was rejected; keeping the state after
/// every verified position instead would need every recurrent kernel to return it.
pub(super) fn speculative_step<'m>(
    model: &'m ReadyModel,
    draft_of: &dyn Fn(ModelId) -> Option<&'m ReadyModel>,
    rows: &mut [&mut Row],
) -> Result<bool> {
    let batched = rows.len() > 1;
    if !rows.iter().any(|r| r.speculation.is_some())
        || !rows.iter().all(|r| r.verifiable())
        || !model.model.accepts().every_position
        || (batched && !model.model.accepts().batches)
    {
        return Ok(false);
    }
    // The pass scores every row at the widest row's width: a batch shares out a bound on its
    // positions; a larger batch steps plainly.
    let cap = (VERIFY_POSITIONS / rows.len()).saturating_sub(1);
    if cap == 0 || rows.len() > VERIFYING_ROWS {
        return Ok(false);
    }
    // Padding must fit every row's context: rows near its end step plainly.
    let prefix = rows.iter().map(|r| r.prefix_len()).max().unwrap_or(1);
    let widest = prefix + rows.iter().filter_map(|r| r.speculation.as_ref()).map(|s| s.draft_len.min(cap)).max().unwrap_or(0);
    if rows.iter().any(|r| r.state.len() + widest > model.config().max_position) {
        return Ok(false);
    }
    let began = Instant::now();
    let mut verifying = Vec::with_capacity(rows.len());
    for row in rows.iter_mut() {
        let draft = row.draft_model().and_then(draft_of);
        verifying.push(row.propose(model, draft, cap)?);
    }
    // A grammar's forced tokens are proposals too, where the row speculates.
    let speculates = |r: &&mut Row, v: &Verifying| r.speculation.is_some() && v.prefix.len() > 1;
    if rows.iter().zip(&verifying).all(|(r, v)| v.proposals.tokens.is_empty() && !v.needs_hidden && !speculates(r, v)) {
        return Ok(false);
    }
    let width = verifying.iter().map(|v| v.prefix.len() + v.proposals.tokens.len()).max().unwrap_or(1);
    let mut input: Vec<i32> = Vec::with_capacity(rows.len() * width);
    for v in &verifying {
        let fed = v.prefix.iter().chain(&v.proposals.tokens).map(|&t| t as i32);
        input.extend(fed.chain(std::iter::repeat(PAD as i32)).take(width));
    }
    let input = Array::from_slice(&input, &[rows.len() as i32, width as i32]);
    // A row drafting with the multi-token-prediction head reads the model's hidden states.
    let with_hidden = rows.iter().any(|r| r.speculation.as_ref().is_some_and(|s| s.mtp.is_some()));
    let mut states: Vec<&mut SequenceState> = rows.iter_mut().map(|r| &mut r.state).collect();
    let (logits, hidden) = match &mut states[..] {
        _ if with_hidden => {
            let out = model.model.forward(Input::Tokens(&input), Rows::Batch(&mut states), Compute::LogitsAndHidden(Positions::Every))?;
            let (logits, hidden) = out.into_logits_and_hidden()?;
            (logits, Some(hidden))
        }
        [state] => (model.model.forward(Input::Tokens(&input), Rows::One(state), Compute::Logits(Positions::Every))?.into_logits()?, None),
        _ => {
            (model.model.forward(Input::Tokens(&input), Rows::Batch(&mut states), Compute::Logits(Positions::Every))?.into_logits()?, None)
        }
    };
    let proposing: Vec<bool> = verifying.iter().map(|v| !v.proposals.tokens.is_empty()).collect();
    let mut replays: Vec<(usize, Vec<u32>)> = vec![];
    for (i, (row, v)) in rows.iter_mut().zip(verifying).enumerate() {
        let draft = row.draft_model().and_then(draft_of);
        let from = row.fed.len();
        if let Some(tokens) = row.settle(model, draft, v, &logits.index(i as i32))? {
            replays.push((i, tokens));
        }
        // The head reads the model's hidden states at the positions kept.
        if let (Some(mtp), Some(hidden)) = (row.speculation.as_mut().and_then(|s| s.mtp.as_mut()), &hidden) {
            let kept = row.fed.len().saturating_sub(from).max(1) as i32;
            mtp.verified(from, hidden.index((i as i32..i as i32 + 1, ..kept, ..)))?;
        }
    }
    replay(model, rows, replays)?;
    // Settling read every row's logits: the pass is done (a replay is queued, not waited for).
    let seconds = began.elapsed().as_secs_f64();
    for (row, _) in rows.iter_mut().zip(&proposing).filter(|(_, &p)| p) {
        if let Some(speculation) = row.speculation.as_mut() {
            speculation.costs.observe(width, seconds);
        }
    }
    Ok(true)
}

/// The most positions a verifying pass scores, all rows and padding included: a pass costs
/// about one plain step only while reading the weights outweighs the arithmetic. A batch of B
/// rows proposes at most 16 / B - 1 tokens per row, a row alone up to its draft length.
const VERIFY_POSITIONS: usize = 16;

/// The most rows that verify together. Verifying rows sample on the host, where plain greedy
/// batches keep their choices on the device, and on a CPU each position of a pass costs about
/// a quarter of a decode step: bench/serve.py with prompt lookup (dev build, shared 2-core CPU)
/// gave 1.33× plain decoding's tok/s at 2 clients but 0.87× at 4 and 0.74× at 8 (1 proposal
/// per row from 16 positions; 0.81× with 8 per row). Again after passes of several positions
/// took the decode kernels and drafts their cost-paying length: 0.91× at 4 and 0.95× at 8 with
/// up to 8 rows verifying, 1.05× at 8 with 2 (the batch then steps plainly). Larger batches
/// step plainly.
const VERIFYING_ROWS: usize = 2;

/// The id fed after a row's last proposal to fill it to the batch's width (any id will do: no
/// earlier position sees it, and the state is cut back past it).
const PAD: u32 = 0;

/// Feeds each row's kept tokens again after its state was restored, rows replaying as many
/// tokens in one pass where the model batches.
fn replay(model: &ReadyModel, rows: &mut [&mut Row], mut replays: Vec<(usize, Vec<u32>)>) -> Result<()> {
    replays.sort_by_key(|(_, tokens)| tokens.len());
    for group in replays.chunk_by(|a, b| a.1.len() == b.1.len()) {
        if group.len() > 1 && model.model.accepts().batches {
            let flat: Vec<i32> = group.iter().flat_map(|(_, t)| t.iter().map(|&x| x as i32)).collect();
            let input = Array::from_slice(&flat, &[group.len() as i32, group[0].1.len() as i32]);
            let mut states: Vec<&mut SequenceState> =
                rows.iter_mut().enumerate().filter(|(i, _)| group.iter().any(|(j, _)| j == i)).map(|(_, r)| &mut r.state).collect();
            model.model.forward(Input::Tokens(&input), Rows::Batch(&mut states), Compute::Logits(Positions::Last))?;
        } else {
            for (i, tokens) in group {
                model.model.logits(&tokens_array(tokens), &mut rows[*i].state)?;
            }
        }
    }
    Ok(())
}

impl Row {
    /// The mask its grammar puts on the next token (`Some(None)` without a grammar); `None`
    /// where the grammar reached a dead end, which ends this row alone (as in a plain step).
    fn next_mask(&mut self) -> Option<Option<TokenMask>> {
        match self.guide.as_mut().map(Guide::mask).transpose() {
            Ok(mask) if self.stopped.is_none() => Some(mask),
            Ok(_) => None,
            Err(e) => {
                self.fail_later(e);
                None
            }
        }
    }

    /// A prompt chunk's pass for a row drafting with the multi-token-prediction head (`None`
    /// for other rows): the logits of its last position; the head reads the hidden states.
    pub(super) fn forward_prompt(&mut self, model: &ReadyModel, range: std::ops::Range<usize>) -> Result<Option<Array>> {
        let (Some(drafts), Some(head)) = (self.speculation.as_mut().and_then(|s| s.mtp.as_mut()), model.model.mtp()) else {
            return Ok(None);
        };
        let tokens = tokens_array(&self.ids[range.clone()]);
        let out = model.model.forward(Input::Tokens(&tokens), Rows::One(&mut self.state), Compute::LogitsAndHidden(Positions::Last))?;
        let (logits, hidden) = out.into_logits_and_hidden()?;
        drafts.hidden(range.start, hidden)?;
        // Read now what can be, so that a long prompt's hidden states are not all kept.
        drafts.catch_up(head, &self.history)?;
        Ok(Some(logits))
    }

    /// Whether the row can join a verifying pass: its unfed tokens are on the host, and no
    /// forced tokens wait to be fed one per step.
    fn verifiable(&self) -> bool {
        matches!(self.unfed, Some(Unfed::Known(_) | Unfed::Jump(_))) && self.queued.is_empty()
    }

    /// The tokens it feeds before any proposal.
    fn prefix_len(&self) -> usize {
        match &self.unfed {
            Some(Unfed::Jump(tokens)) => tokens.len(),
            _ => 1,
        }
    }

    /// The row's proposals for this step (none where it does not speculate, rests, or has
    /// nothing to propose), with what it needs to take back a rejected suffix.
    /// At most `cap` of them.
    fn propose(&mut self, model: &ReadyModel, draft: Option<&ReadyModel>, cap: usize) -> Result<Verifying> {
        let prefix = match &self.unfed {
            Some(Unfed::Known(token)) => vec![*token],
            Some(Unfed::Jump(tokens)) => tokens.clone(),
            _ => return Err(EngineError::Internal("a verifying row has no known token to feed".into())),
        };
        let held = self.history.len();
        let checkpoint = self.state.checkpoint();
        let nothing = Proposals { tokens: vec![], drawn_from: None, draft_checkpoint: None };
        let Some(speculation) = self.speculation.as_mut() else {
            return Ok(Verifying { prefix, proposals: nothing, held, checkpoint, needs_hidden: false });
        };
        if speculation.resting > 0 {
            speculation.resting -= 1;
            speculation.probing = speculation.resting == 0;
            return Ok(Verifying { prefix, proposals: nothing, held, checkpoint, needs_hidden: false });
        }
        let needs_hidden = speculation.mtp.as_ref().is_some_and(|m| m.needs_hidden(self.fed.len()));
        // Room for the proposals: the tokens the reply may still generate (the model's own next
        // token among them), and positions the context still has.
        let room =
            (self.max_tokens - self.generated).saturating_sub(1).min(model.config().max_position.saturating_sub(self.history.len() + 1));
        let mut count = speculation.draft_len.min(room).min(cap);
        let probing = std::mem::take(&mut speculation.probing);
        if !probing && !speculation.sized_by_source() {
            // As many as pay for their pass, at the row's acceptance; none: rest.
            count = count.min(speculation.costs.paying_length(count, speculation.rate));
            if count == 0 {
                speculation.resting = REST_STEPS;
                return Ok(Verifying { prefix, proposals: nothing, held, checkpoint, needs_hidden: false });
            }
        }
        let _in_span = self.span.clone().entered();
        let proposals = match (speculation.method, draft, speculation.draft_state.as_mut()) {
            (Speculative::PromptLookup(settings), _, _) => {
                Proposals { tokens: look_up(&self.history, settings, count).to_vec(), drawn_from: None, draft_checkpoint: None }
            }
            (Speculative::DraftModel { .. }, Some(draft), Some(state)) if count > 0 => {
                let vocab = model.config().vocab_size;
                draft_proposals(draft, state, &self.history, count, vocab, speculation.draft_sampler.as_mut())?
            }
            // The draft model was unloaded, or the reply has no room left for proposals.
            (Speculative::DraftModel { .. }, _, _) => nothing,
            (Speculative::Mtp { .. }, _, _) => match (model.model.mtp(), speculation.mtp.as_mut(), speculation.draft_sampler.as_mut()) {
                (Some(head), Some(drafts), Some(sampler)) if count > 0 => {
                    drafts.propose(head, &self.history, count, model.config().vocab_size, sampler)?
                }
                _ => nothing,
            },
        };
        Ok(Verifying { prefix, proposals, held, checkpoint, needs_hidden })
    }

    /// After the verifying pass (`logits`: [positions, vocab], this row's, padding included):
    /// keeps the proposals the model agrees with, streams them, leaves the model's next token
    /// unfed, and cuts the state back to what was kept. Returns the tokens to feed again where
    /// the state was restored from its checkpoint instead (see `speculative_step`).
    fn settle(&mut self, model: &ReadyModel, draft: Option<&ReadyModel>, v: Verifying, logits: &Array) -> Result<Option<Vec<u32>>> {
        let Verifying { prefix, proposals: Proposals { tokens: drafts, drawn_from, draft_checkpoint }, held, checkpoint, .. } = v;
        let _in_span = self.span.clone().entered();
        self.unfed = None;
        self.fed.extend_from_slice(&prefix);
        // Logits at position i of the pass choose the token after it: the first proposal's
        // come from the prefix's last position.
        let first = prefix.len() as i32 - 1;
        let (mut agreed, mut instead) = (0, None);
        for (i, &draft) in drafts.iter().enumerate() {
            let q = drawn_from.as_ref().map(|q| &q[i]);
            let Some(mask) = self.next_mask() else { break };
            if let Some(chosen) = verify(&mut self.sampler, &logits.index(first + i as i32), &self.history, draft, q, mask.as_ref())? {
                instead = Some(chosen);
                break;
            }
            agreed += 1;
            // As plain decoding would: streamed and checked; fed unless it ended the reply
            // (plain decoding never feeds the token that ends a reply).
            self.accept(model, draft)?;
            if self.stopped.is_some() {
                break;
            }
            self.fed.push(draft);
        }
        if self.stopped.is_none() {
            // The model's token in place of the first rejected proposal, or after them all.
            let next = match instead {
                Some(token) => Some(token),
                None => match self.next_mask() {
                    Some(mask) => Some(self.sampler.sample_masked(&logits.index(first + agreed as i32), &self.history, mask.as_ref())?),
                    None => None,
                },
            };
            if let Some(next) = next {
                self.take(model, next)?;
            }
        }
        // What was not kept goes: rejected proposals and padding leave no trace.
        let kept = self.fed.len();
        let replay = match &checkpoint {
            _ if self.state.can_trim_to(kept) => {
                self.state.trim(kept)?;
                None
            }
            Some(checkpoint) => {
                self.state.restore(checkpoint)?;
                Some(self.fed[checkpoint.len..].to_vec())
            }
            None => return Err(EngineError::Internal("a state that cannot be cut back had no checkpoint".into())),
        };
        if let Some(speculation) = self.speculation.as_mut() {
            speculation.from_grammar += prefix.len() - 1;
        }
        if let Some(speculation) = self.speculation.as_mut().filter(|_| !drafts.is_empty()) {
            speculation.proposed += drafts.len();
            speculation.accepted += agreed;
            speculation.steps += 1;
            speculation.adapt(drafts.len(), agreed, speculation.method.max_draft());
            // The draft's state holds the history it read and every proposal but the last:
            // the accepted ones stay, the next step feeds it the rest. A draft whose state
            // cannot be cut back goes back to before its proposals and reads the kept ones then.
            if let (Some(state), Some(_)) = (speculation.draft_state.as_mut(), draft) {
                let target = state.len().min(held + agreed);
                match &draft_checkpoint {
                    _ if state.can_trim_to(target) => state.trim(target)?,
                    Some(saved) => state.restore(saved)?,
                    None => return Err(EngineError::Internal("a draft state that cannot be cut back had no checkpoint".into())),
                }
            }
        }
        tracing::trace!(
            forced = prefix.len() - 1,
            proposed = drafts.len(),
            accepted = agreed,
            replayed = replay.as_ref().map_or(0, Vec::len),
            "speculative step"
        );
        Ok(replay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETTINGS: PromptLookup = PromptLookup { ngram: 3, max_draft: 8 };

    #[test]
    fn proposes_what_followed_the_occurrence_agreeing_furthest_back() {
        // "1 2 3" occurs twice before the tail, each agreeing for three tokens: the later one
        // wins, and proposes no more than those three.
        let tokens = [1, 2, 3, 4, 5, 1, 2, 3, 6, 7, 8, 1, 2, 3];
        assert_eq!(look_up(&tokens, SETTINGS, 8), [6, 7, 8]);
        assert_eq!(look_up(&tokens, SETTINGS, 2), [6, 7]);
        // "9 1 2 3" agrees for four at the first occurrence, three at the later one.
        let tokens = [9, 1, 2, 3, 4, 5, 6, 1, 2, 3, 7, 9, 1, 2, 3];
        assert_eq!(look_up(&tokens, SETTINGS, 8), [4, 5, 6, 1]);
        assert_eq!(look_up(&tokens, SETTINGS, 3), [4, 5, 6]);
    }

    #[test]
    fn agreement_is_counted_up_to_a_bound() {
        let repeated = vec![7; 500];
        assert_eq!(agreement(&repeated, 499), AGREEMENT_COUNTED);
        assert_eq!(look_up(&repeated, SETTINGS, 15), [7]);
        assert_eq!(agreement(&[1, 2, 3, 1, 2], 2), 2);
        assert_eq!(agreement(&[4, 2, 3, 1, 2], 2), 1);
    }

    #[test]
    fn falls_back_to_shorter_ngrams_and_proposes_nothing_without_a_match() {
        // No earlier "9 2 3", but "2 3" occurs earlier; a single "3" is not enough.
        let tokens = [2, 3, 4, 9, 2, 3];
        assert_eq!(look_up(&tokens, SETTINGS, 8), [4, 9]);
        assert!(look_up(&[5, 3, 4, 9, 2, 3], SETTINGS, 8).is_empty());
        let unigram = PromptLookup { ngram: 1, max_draft: 8 };
        assert_eq!(look_up(&[5, 3, 4, 9, 2, 3], unigram, 8), [4]);
        assert!(look_up(&[1, 2, 3, 4], SETTINGS, 8).is_empty());
        assert!(look_up(&[7], SETTINGS, 8).is_empty());
        assert!(look_up(&[], SETTINGS, 8).is_empty());
        assert!(look_up(&[1, 1, 1], SETTINGS, 0).is_empty());
    }
}
