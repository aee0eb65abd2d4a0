//! One request, start to finish, on the engine thread: tokenize, plan, prefill in chunks,
//! decode, stream text, stop. The scheduler (`scheduler`) interleaves rows and batches their
//! decode steps. Prompts with media take their own path to ids and embeddings
//! (`media_prompt`, `media_encode`, `media_prefill`); decoding is the same. A row stepping
//! alone may decode speculatively (`speculative`).

mod speculative;

use std::collections::VecDeque;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Instant;

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, transforms, Array};

use crate::cache::{EncoderCache, PrefixCache, PrefixKey, Reuse, ReuseSource};
use crate::constraint::{Constraint, Guide, TokenMask};
use crate::error::{EngineError, Result};
use crate::media::MediaLimits;
use crate::runtime::context;
use crate::runtime::media_encode::MediaOutputs;
use crate::runtime::media_prefill::{chunk_ranges, forward_chunk, image_ranges, split_at};
use crate::runtime::media_prompt::MediaPrompt;
use crate::runtime::model::ReadyModel;
use crate::runtime::prepared::{prepare, Prepared};
use crate::runtime::request::{Event, ModelId, Plan, Prompt, Request, StopReason, Timings, Usage};
use crate::sample::{Sampler, SamplingParams};
use crate::state::{Checkpoint, SequenceState};
use crate::text::{ChatMessage, ChatOptions, StopMatcher, StreamDecoder};
use speculative::Speculation;

/// What a request uses besides its model: the caches, and the limits media must keep to.
pub struct Shared<'a> {
    pub prefix: &'a mut PrefixCache,
    pub encoders: &'a mut EncoderCache,
    pub limits: &'a MediaLimits,
}

/// The prompt as token ids, through the chat template when it is a conversation.
pub fn prompt_ids(model: &ReadyModel, prompt: &Prompt, chat: &ChatOptions, limits: &MediaLimits) -> Result<Vec<u32>> {
    Ok(prepare(model, prompt, chat, limits)?.ids)
}

/// Messages whose ends are checkpointed (the latest ones): an edit or a regenerate resumes at
/// one of them.
const CHECKPOINTED_MESSAGES: usize = 8;

/// Where the last few messages of a conversation end in `ids`, for models whose state must be
/// checkpointed to be reused. A message whose rendering is not a prefix of the whole (a
/// template that rewrites earlier turns) has no boundary.
fn message_boundaries(model: &ReadyModel, messages: &[ChatMessage], chat: &ChatOptions, ids: &[u32]) -> Vec<usize> {
    let Some(template) = model.template.as_ref() else { return vec![] };
    let first = messages.len().saturating_sub(CHECKPOINTED_MESSAGES).max(1);
    (first..=messages.len())
        .filter_map(|k| {
            let text = template.render_any(&messages[..k], false, chat).ok()?;
            let prefix = model.tokenizer.encode_prompt(&text).ok()?;
            (prefix.len() < ids.len() && ids.starts_with(&prefix)).then_some(prefix.len())
        })
        .collect()
}

/// Checks a request before it waits for a place: its settings, then its prompt, fitted to the
/// context under the request's policy (which may leave the oldest turns out of it).
pub fn check(model: &ReadyModel, request: &mut Request, limits: &MediaLimits) -> Result<Prepared> {
    // Invalid settings fail before any work. `max_tokens` 0 asks for a reply up to the
    // context's end, which `admit` resolves once the prompt's length is known.
    let sampling = SamplingParams { max_tokens: request.sampling.max_tokens.max(1), ..request.sampling.clone() };
    Sampler::new(sampling, model.config().vocab_size)?;
    StopMatcher::new(request.sampling.stop.iter().cloned())?;
    // A schema or grammar that cannot be used fails here, before the prompt is even read.
    let guide = request.constraint.as_ref().map(|c| model.grammars()?.guide(c)).transpose()?;
    let (mut prepared, dropped) =
        context::fit(model, &mut request.prompt, &request.chat, request.context_policy, request.sampling.max_tokens, limits)?;
    prepared.dropped_messages = dropped;
    prepared.guide = guide;
    Ok(prepared)
}

/// `CONFAB_GRAMMAR_JUMP=0` turns grammar jump off for every request (every constrained token is
/// then sampled under its mask, one pass each), so that a benchmark can measure the mask's cost
/// alone (bench/structured.py), as `CONFAB_CPU_KERNELS=0` does for the CPU kernels.
fn grammar_jump_switched_off() -> bool {
    std::env::var("CONFAB_GRAMMAR_JUMP").is_ok_and(|v| v == "0")
}

/// Positions a request may come to hold: its prompt and every token it may generate.
pub fn positions_needed(model: &ReadyModel, request: &Request, prompt: usize) -> usize {
    let context = model.config().max_position;
    match request.sampling.max_tokens as usize {
        0 => context,
        n => (prompt + n).min(context),
    }
}

/// One request alone, start to finish, on the caller's thread, its events handed to `emit`
/// (for tests that drive a model directly; the engine runs requests through its scheduler).
pub fn run(model: &ReadyModel, shared: &mut Shared, mut request: Request, cancel: &AtomicBool, emit: &mut dyn FnMut(Event)) -> Result<()> {
    let prepared = check(model, &mut request, shared.limits)?;
    let (events, received) = std::sync::mpsc::channel();
    let cancel = Arc::new(AtomicBool::new(cancel.load(Ordering::Relaxed)));
    // Only `model` is at hand here: a draft model is for requests the engine runs.
    let mut row = admit(model, None, shared, prepared, request, cancel, events)?;
    let result = (|| {
        while row.stopped.is_none() {
            row.check_cancel();
            if !row.prefilled() {
                row.prefill_chunk(model)?;
            } else if row.stopped.is_none() {
                decode_step(model, None, &mut [&mut row])?;
            }
        }
        Ok(())
    })();
    match result {
        Ok(()) => row.finish(shared.prefix),
        Err(e) => row.fail(e),
    }
    received.try_iter().for_each(emit);
    Ok(())
}

/// The token a row chose but has not fed to the model yet.
enum Unfed {
    /// Read on the host (and already streamed).
    Known(u32),
    /// A sampled token and the tokens its grammar forces after it (all streamed): fed
    /// together in one forward pass (grammar jump).
    Jump(Vec<u32>),
    /// Still on the device: row `row` of `tokens`, the batch's choices at step `step`. Read
    /// (and streamed) after the next step is queued, so the device never waits for the host.
    Pending { tokens: Array, row: usize, step: u64 },
}

/// One request being served: prefilled chunk by chunk, then one token per decode step,
/// until it stops. Its state is its own; the scheduler batches rows' decode steps.
pub struct Row {
    /// The request's log span: every line about it carries its id.
    span: tracing::Span,
    events: Sender<Event>,
    cancel: Arc<AtomicBool>,
    started: Instant,
    ids: Vec<u32>,
    media: Option<(MediaPrompt, MediaOutputs)>,
    key: PrefixKey,
    state: SequenceState,
    /// Exactly the tokens the state holds, to key it when the request ends.
    fed: Vec<u32>,
    /// State that cannot be cut back is checkpointed at chunk and message boundaries (and
    /// where this request resumed), so a later request sharing part of this prompt can
    /// resume there; `None` for state that can be cut back.
    checkpoints: Option<Vec<Checkpoint>>,
    /// Prompt chunks still to prefill.
    chunks: VecDeque<Range<usize>>,
    reused: usize,
    logits_path: Option<PathBuf>,
    ignore_eos: bool,
    sampler: Sampler,
    /// Greedy without penalties: the token is chosen on the device and read a step later.
    pipelined: bool,
    stops: StopMatcher,
    decoder: StreamDecoder,
    /// Prompt and generated tokens, for penalties and the context limit.
    history: Vec<u32>,
    generated: usize,
    max_tokens: usize,
    first_token_at: Option<Instant>,
    unfed: Option<Unfed>,
    /// The reply's matcher, when it must follow a grammar.
    guide: Option<Guide>,
    /// The tokens the grammar allows next, computed while the forward pass runs.
    mask: Option<Result<TokenMask>>,
    /// Feed forced tokens without sampling them (`Request::grammar_jump`).
    grammar_jump: bool,
    /// Generated tokens the grammar forced.
    forced: usize,
    /// Forced tokens waiting to be fed one per step (streamed already): in a batch, a row's
    /// jump would cost a forward pass of its own, so its forced tokens ride along in the
    /// batch's steps instead, neither sampled nor masked.
    queued: VecDeque<u32>,
    /// Forced tokens fed one per step, in a pass of their own (in a batch).
    forced_stepped: usize,
    /// Speculative decoding, when the request asked for it and can use it.
    speculation: Option<Speculation>,
    /// What ended it, when something went wrong with this row alone (its grammar reached a
    /// dead end); `finish` reports it instead of `Done`.
    error: Option<EngineError>,
    /// Why it stopped, once it has.
    pub stopped: Option<StopReason>,
}

/// Starts a checked request: reuses the longest cached prefix, sends the plan, runs the
/// towers its media needs. The row then prefills and decodes in the scheduler's steps.
/// `draft`: the draft model the request names, when it is loaded.
pub fn admit(
    model: &ReadyModel,
    draft: Option<&ReadyModel>,
    shared: &mut Shared,
    prepared: Prepared,
    request: Request,
    cancel: Arc<AtomicBool>,
    events: Sender<Event>,
) -> Result<Row> {
    let started = Instant::now();
    let span = tracing::info_span!("request", id = NEXT_REQUEST.fetch_add(1, Ordering::Relaxed));
    let _in_span = span.clone().entered();
    let Prepared { ids, media, dropped_messages, reply_opening, guide } = prepared;
    let context = model.config().max_position;
    let mut sampling = request.sampling.clone();
    if sampling.max_tokens == 0 {
        sampling.max_tokens = (context - ids.len()) as u32;
    }
    let chunk = request.chunk_size.max(1);

    // Reuse the longest cached prefix (never ending inside a media item); prefill only the rest.
    let fingerprint = &model.info.fingerprint;
    let key = match &media {
        Some(m) => m.prefix_key(fingerprint, ids.clone()),
        None => PrefixKey { fingerprint: fingerprint.clone(), tokens: ids.clone(), media: vec![] },
    };
    let reuse = if request.reuse_prefix {
        shared.prefix.lookup(&key, &|n| media.as_ref().map_or(n, |m| m.reusable(n)))
    } else {
        Reuse::none("the request asked not to reuse")
    };
    let state = reuse.state.unwrap_or_else(|| model.model.new_state());
    let reused = reuse.reused;
    let mut checkpoints = reuse.checkpoints;
    let checkpointing = !state.trimmable();
    if checkpointing && reused > 0 && checkpoints.last().is_none_or(|c| c.len < reused) {
        checkpoints.extend(state.checkpoint());
    }
    // Boundaries: where messages end, and where media items start (a prompt with another
    // image in the same place resumes just before it).
    let boundaries = match (&request.prompt, &media) {
        _ if !checkpointing => vec![],
        (_, Some(m)) => m.items.iter().map(|i| i.span.start).collect(),
        // A continuation's earlier messages end where the same chat's do.
        (Prompt::Chat(messages) | Prompt::Continue(messages), None) => message_boundaries(model, messages, &request.chat, &ids),
        _ => vec![],
    };

    // Tower outputs for the media past the reused prefix: from the encoder cache where it has them.
    let encoder = model.encoder.as_deref();
    let mut outputs = match (&media, encoder) {
        (Some(m), Some(e)) => Some(MediaOutputs::lookup(m, reused, e, shared.encoders)),
        _ => None,
    };
    let whole = media.as_ref().map(image_ranges).unwrap_or_default();
    let ranges = split_at(chunk_ranges(reused, ids.len(), chunk, &whole), &boundaries);
    match &reuse.declined {
        _ if reused > 0 => {
            tracing::info!(prompt_tokens = ids.len(), reused, source = reuse.source.as_str(), chunks = ranges.len(), "prefix cache hit")
        }
        why => tracing::info!(
            prompt_tokens = ids.len(),
            chunks = ranges.len(),
            why = why.as_deref().unwrap_or("nothing cached"),
            "prefix cache miss"
        ),
    }
    let jump_declined = match (&guide, request.grammar_jump) {
        (None, _) => None,
        (Some(_), false) => Some("the request turned grammar jump off"),
        (Some(_), true) if grammar_jump_switched_off() => Some("CONFAB_GRAMMAR_JUMP=0 turned grammar jump off"),
        (Some(_), true) => None,
    };
    let grammar_jump = guide.is_some() && jump_declined.is_none();
    let sampler = Sampler::new(sampling.clone(), model.config().vocab_size)?;
    let speculative_declined = speculative::declined(model, request.speculative.as_ref(), draft, &state, media.is_some(), guide.is_some());
    let speculation = match request.speculative.filter(|_| speculative_declined.is_none()) {
        Some(method) => Some(Speculation::new(method, draft, &sampling, sampler.is_greedy())?),
        None => None,
    };
    let _ = events.send(Event::Plan(Plan {
        prompt_tokens: ids.len(),
        reused_tokens: reused,
        reuse_source: if reused > 0 { reuse.source.as_str() } else { ReuseSource::None.as_str() },
        reuse_declined: reuse.declined,
        resumed_from_checkpoint: reuse.from_checkpoint,
        checkpoints: if checkpointing { ranges.len() } else { 0 },
        chunk_size: chunk,
        chunks: ranges.len(),
        media: match (&media, &outputs) {
            (Some(m), Some(o)) => o.plan(m),
            _ => vec![],
        },
        tower_runs: outputs.as_ref().map_or(0, MediaOutputs::misses),
        dropped_messages,
        constraint: request.constraint.as_ref().map(Constraint::kind),
        grammar_jump,
        grammar_jump_declined: jump_declined.map(str::to_owned),
        speculative: speculation.as_ref().map(|s| s.method.name()),
        speculative_declined: speculative_declined.map(str::to_owned),
    }));
    // A forced start is the reply's own text; an opened reasoning block only for callers
    // that read the markup.
    if let Some(opening) = reply_opening.filter(|_| request.reply_markup || request.chat.reply_prefix.is_some()) {
        let _ = events.send(Event::Text(opening));
    }
    if let (Some(m), Some(o), Some(e)) = (&media, outputs.as_mut(), encoder) {
        if !cancel.load(Ordering::Relaxed) {
            o.run_towers(m, e, shared.encoders, shared.limits)?;
        }
    }

    // A constrained row's next mask needs its last token on the host: never pipelined; nor a
    // speculating row, whose proposals follow its last token.
    let pipelined = sampler.is_greedy()
        && speculation.is_none()
        && sampling.repetition_penalty == 1.0
        && sampling.presence_penalty == 0.0
        && sampling.logit_bias.is_empty()
        && guide.is_none();
    Ok(Row {
        span,
        events,
        cancel,
        started,
        fed: ids[..reused].to_vec(),
        history: ids.clone(),
        ids,
        media: media.zip(outputs),
        key,
        state,
        checkpoints: checkpointing.then_some(checkpoints),
        chunks: ranges.into(),
        reused,
        logits_path: request.logits_path,
        ignore_eos: request.ignore_eos,
        sampler,
        pipelined,
        stops: StopMatcher::new(sampling.stop.iter().cloned())?,
        decoder: match request.reply_markup {
            true => StreamDecoder::new(model.tokenizer.clone(), true).keeping(model.markup_ids.clone()),
            false => StreamDecoder::new(model.tokenizer.clone(), true),
        },
        generated: 0,
        max_tokens: sampling.max_tokens as usize,
        first_token_at: None,
        unfed: None,
        grammar_jump,
        guide,
        mask: None,
        forced: 0,
        queued: VecDeque::new(),
        forced_stepped: 0,
        speculation,
        error: None,
        stopped: None,
    })
}

impl Row {
    /// Whether its prompt is all in the state (it now decodes).
    pub fn prefilled(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Stops the row if its caller asked to.
    pub fn check_cancel(&mut self) {
        if self.stopped.is_none() && self.cancel.load(Ordering::Relaxed) {
            self.stopped = Some(StopReason::Cancelled);
        }
    }

    /// The draft model its speculative decoding runs, if any.
    pub fn draft_model(&self) -> Option<ModelId> {
        self.speculation.as_ref().and_then(|s| s.method.draft_model())
    }

    /// Whether it is greedy without penalties (see `Unfed::Pending`).
    pub fn pipelined(&self) -> bool {
        self.pipelined
    }

    /// Runs its next prompt chunk. After the last one it has its first token: chosen on the
    /// device when pipelined, else sampled (and streamed) now.
    pub fn prefill_chunk(&mut self, model: &ReadyModel) -> Result<()> {
        let Some(range) = self.chunks.pop_front() else { return Ok(()) };
        let _in_span = self.span.clone().entered();
        let began = Instant::now();
        let out = match &self.media {
            Some((m, o)) => forward_chunk(model, m, o, range.clone(), &mut self.state)?,
            None => model.model.forward(&tokens_array(&self.ids[range.clone()]), &mut self.state)?,
        };
        self.fed.extend_from_slice(&self.ids[range.clone()]);
        let last = self.chunks.is_empty();
        if !last {
            transforms::eval(self.state.arrays())?;
        }
        // The last chunk is only queued here; its time shows in the first token's.
        tracing::debug!(start = range.start, tokens = range.len(), ms = millis(began), last, "prefill chunk");
        // Also at the prompt's end: the next turn shares the prompt, and often not the reply
        // as the template writes it back.
        if let Some(checkpoints) = self.checkpoints.as_mut() {
            checkpoints.extend(self.state.checkpoint());
        }
        if !last {
            return Ok(());
        }
        if let Some(path) = &self.logits_path {
            out.eval()?;
            crate::npy::write_f32(path, out.as_slice::<f32>(), &[out.size()])?;
        }
        if self.pipelined {
            // Queued on its own, so the first token is ready when the prefill is, not after
            // the step that follows it.
            let first = argmax(&out)?;
            transforms::async_eval([&first])?;
            self.unfed = Some(Unfed::Pending { tokens: first, row: 0, step: NEXT_STEP.fetch_add(1, Ordering::Relaxed) });
        } else {
            masks_during(&out, &mut [self])?;
            let mask = self.mask.take().transpose()?;
            let token = self.sampler.sample_masked(&out, &self.history, mask.as_ref())?;
            self.take(model, token)?;
        }
        Ok(())
    }

    /// A sampled token: accepted, then, under a grammar with grammar jump, every token the
    /// grammar forces after it; all are fed at the next step.
    fn take(&mut self, model: &ReadyModel, token: u32) -> Result<()> {
        self.accept(model, token)?;
        let forced = match self.guide.as_mut() {
            Some(guide) if self.grammar_jump && self.stopped.is_none() => guide.forced(),
            _ => vec![],
        };
        let mut unfed = vec![token];
        for token in forced {
            self.accept(model, token)?;
            self.forced += 1;
            unfed.push(token);
            if self.stopped.is_some() {
                break;
            }
        }
        self.unfed = Some(if unfed.len() == 1 { Unfed::Known(token) } else { Unfed::Jump(unfed) });
        Ok(())
    }

    /// Ends this row alone with `error` (the batch goes on); `finish` reports it.
    fn fail_later(&mut self, error: EngineError) {
        self.error = Some(error);
        self.stopped = Some(StopReason::Cancelled);
    }

    /// A chosen token: streamed, and checked against every reason to stop.
    fn accept(&mut self, model: &ReadyModel, token: u32) -> Result<()> {
        if self.first_token_at.is_none() {
            self.first_token_at = Some(Instant::now());
            tracing::debug!(parent: &self.span, ms = millis(self.started), "first token");
        }
        if !self.ignore_eos && model.eos_ids.contains(&token) {
            self.stopped = Some(StopReason::Eos);
            return Ok(());
        }
        if let Some(guide) = self.guide.as_mut() {
            guide.consume(token)?;
        }
        self.history.push(token);
        self.generated += 1;
        let step = self.stops.push(&self.decoder.push(token)?);
        let listening = self.events.send(Event::Token { id: token, text: step.text }).is_ok();
        self.stopped = if !listening {
            // Nobody reads its events any more (the caller dropped its `Generation`).
            Some(StopReason::Cancelled)
        } else if step.stopped.is_some() {
            Some(StopReason::StopString)
        } else if self.generated >= self.max_tokens {
            Some(StopReason::MaxTokens)
        } else if self.history.len() >= model.config().max_position {
            Some(StopReason::Context)
        } else if self.guide.as_ref().is_some_and(Guide::finished) {
            // The grammar is complete and allows nothing more: the reply ends as at EOS.
            Some(StopReason::Eos)
        } else {
            None
        };
        Ok(())
    }

    /// Ends the row: waits for a step still running on its behalf, streams held-back text,
    /// sends `Done`, and keeps its state in the prefix cache.
    pub fn finish(mut self, prefix: &mut PrefixCache) {
        if let Some(error) = self.error.take() {
            return self.fail(error);
        }
        // A speculative step may still be running on MLX's stream: let it finish before its
        // arrays are dropped (and before the cache it extended is stored).
        if let Some(Unfed::Pending { tokens, .. }) = self.unfed.take() {
            if let Err(e) = tokens.eval() {
                return self.fail(e.into());
            }
        }
        if let Err(e) = self.send_done() {
            return self.fail(e);
        }
        prefix.insert(PrefixKey { tokens: self.fed, ..self.key }, self.state, self.checkpoints.unwrap_or_default());
    }

    fn send_done(&mut self) -> Result<()> {
        let _in_span = self.span.clone().entered();
        let reason = self.stopped.unwrap_or(StopReason::Cancelled);
        let decoded = self.first_token_at.is_some();
        if decoded && reason != StopReason::StopString {
            let tail = self.stops.push(&self.decoder.finish()?).text + &self.stops.finish();
            if !tail.is_empty() {
                let _ = self.events.send(Event::Text(tail));
            }
        }
        let done = Finished {
            reason,
            prompt: self.ids.len(),
            cached: self.reused,
            generated: self.generated,
            forced: self.forced,
            // Every other forced token shared a pass, or was never fed (the reply ended).
            passes_saved: self.forced - self.forced_stepped,
            state: if decoded { self.state.bytes() } else { Default::default() },
            draft_proposed: self.speculation.as_ref().map_or(0, |s| s.proposed),
            draft_accepted: self.speculation.as_ref().map_or(0, |s| s.accepted),
            stop_string: self.stops.stopped().filter(|_| reason == StopReason::StopString).map(|i| self.stops.stops()[i].clone()),
        };
        finish(&mut |e| drop(self.events.send(e)), done, self.started, self.first_token_at, decoded.then(Instant::now))
    }

    /// Reports an error that ended the row.
    pub fn fail(self, error: EngineError) {
        tracing::info!(parent: &self.span, "failed: {error}");
        let _ = self.events.send(Event::Error(error));
    }
}

/// Request ids, for the log.
static NEXT_REQUEST: AtomicU64 = AtomicU64::new(1);

/// Where a decode step's tokens came from, so the next step can feed them without a copy.
static NEXT_STEP: AtomicU64 = AtomicU64::new(1);

/// One decode step for every row (all prefilled, all of one model): each row's unfed token
/// goes in, one forward pass for the batch (or one per row where the model cannot batch),
/// and each row chooses its next token. When every row is greedy the choices stay on the
/// device and are read after the next step is queued; otherwise they are sampled now.
/// `draft`: the draft model of a row stepping alone that speculates with one.
pub fn decode_step(model: &ReadyModel, draft: Option<&ReadyModel>, rows: &mut [&mut Row]) -> Result<()> {
    tracing::trace!(rows = rows.len(), "decode step");
    // Grammar jump pays when a row steps alone; in a batch, forced tokens go one per step.
    let alone = rows.len() == 1;
    // So does speculative decoding, when the row has proposals; else it steps plainly.
    if let [row] = rows {
        if row.speculative_step(model, draft)? {
            return Ok(());
        }
    }
    for row in rows.iter_mut() {
        match row.unfed.take() {
            Some(Unfed::Jump(tokens)) if !alone => {
                row.queued.extend(&tokens[1..]);
                row.unfed = Some(Unfed::Known(tokens[0]));
            }
            Some(Unfed::Known(token)) if alone && !row.queued.is_empty() => {
                row.unfed = Some(Unfed::Jump(std::iter::once(token).chain(row.queued.drain(..)).collect()));
            }
            unfed => row.unfed = unfed,
        }
    }
    // Rows that feed one token step together; a row that feeds a sampled token and the tokens
    // its grammar forced after it (grammar jump) runs its own forward pass of all of them.
    let single: Vec<usize> = (0..rows.len()).filter(|&i| !matches!(rows[i].unfed, Some(Unfed::Jump(_)))).collect();
    let input = match single.is_empty() {
        true => None,
        false => Some(single_input(rows, &single)?),
    };

    let logits = if single.len() == rows.len() {
        let input = input.as_ref().expect("every row feeds one token");
        forward_single(model, rows.iter_mut().map(|r| &mut r.state).collect(), input)?
    } else {
        let mut each: Vec<Option<Array>> = vec![None; rows.len()];
        if let Some(input) = &input {
            let states = rows.iter_mut().enumerate().filter(|(i, _)| single.contains(i)).map(|(_, r)| &mut r.state).collect();
            let logits = forward_single(model, states, input)?;
            for (k, &i) in single.iter().enumerate() {
                each[i] = Some(logits.index(k as i32..k as i32 + 1));
            }
        }
        for (i, row) in rows.iter_mut().enumerate() {
            if let Some(Unfed::Jump(tokens)) = &row.unfed {
                each[i] = Some(model.model.forward(&tokens_array(tokens), &mut row.state)?);
            }
        }
        let each: Vec<Array> = each.into_iter().map(|l| l.expect("every row has logits")).collect();
        ops::concatenate(&each, 0)?
    };
    let pipelined = rows.iter().all(|r| r.pipelined);
    let next = if pipelined {
        let next = argmax(&logits)?;
        transforms::async_eval([&next])?;
        Some(next)
    } else {
        None
    };

    // What was fed: tokens already streamed, or the previous step's choices, read now.
    let mut fed_values: Option<Vec<u32>> = None;
    for (i, row) in rows.iter_mut().enumerate() {
        let token = match row.unfed.take() {
            Some(Unfed::Known(t)) => t,
            Some(Unfed::Jump(tokens)) => {
                row.fed.extend_from_slice(&tokens);
                continue;
            }
            _ => {
                let values = match &fed_values {
                    Some(v) => v,
                    None => {
                        let input = input.as_ref().expect("a row fed a chosen token");
                        input.eval()?;
                        fed_values.insert(input.as_slice::<u32>().to_vec())
                    }
                };
                let slot = single.iter().position(|&s| s == i).expect("a row fed one token");
                let token = values[slot];
                row.fed.push(token);
                row.accept(model, token)?;
                continue;
            }
        };
        row.fed.push(token);
    }

    // Grammars' next masks, computed while the step runs.
    if next.is_none() && rows.iter().any(|r| r.guide.is_some() && r.stopped.is_none()) {
        masks_during(&logits, rows)?;
    }

    let step = NEXT_STEP.fetch_add(1, Ordering::Relaxed);
    for (i, row) in rows.iter_mut().enumerate() {
        if row.stopped.is_some() {
            continue;
        }
        match &next {
            Some(tokens) => row.unfed = Some(Unfed::Pending { tokens: tokens.clone(), row: i, step }),
            None if !row.queued.is_empty() => {
                row.unfed = row.queued.pop_front().map(Unfed::Known);
                row.forced_stepped += 1;
            }
            None => {
                let mask = row.mask.take().transpose();
                let chosen = mask.and_then(|mask| row.sampler.sample_masked(&logits.index(i as i32), &row.history, mask.as_ref()));
                // A grammar's dead end ends its own row; the others go on.
                if let Err(e) = chosen.and_then(|token| row.take(model, token)) {
                    row.fail_later(e);
                }
            }
        }
    }
    Ok(())
}

/// The tokens rows `which` feed, [which.len(), 1]: the previous step's choices as they are
/// when those rows are all of its rows, in order; else gathered row by row.
fn single_input(rows: &[&mut Row], which: &[usize]) -> Result<Array> {
    let whole = match rows.first().and_then(|r| r.unfed.as_ref()) {
        Some(Unfed::Pending { tokens, step, .. }) if which.len() == rows.len() && tokens.dim(0) as usize == rows.len() => {
            let same = rows
                .iter()
                .enumerate()
                .all(|(i, r)| matches!(&r.unfed, Some(Unfed::Pending { row, step: s, .. }) if *row == i && s == step));
            same.then(|| tokens.clone())
        }
        _ => None,
    };
    let input = match whole {
        Some(tokens) => tokens,
        None => {
            let pieces = which
                .iter()
                .map(|&i| match &rows[i].unfed {
                    Some(Unfed::Known(t)) => Ok(Array::from_slice(&[*t], &[1])),
                    Some(Unfed::Pending { tokens, row, .. }) => {
                        Ok(tokens.index(*row as i32..*row as i32 + 1).as_dtype(mlx_rs::Dtype::Uint32)?)
                    }
                    Some(Unfed::Jump(_)) | None => Err(EngineError::Internal("a decoding row has no single token to feed".into())),
                })
                .collect::<Result<Vec<_>>>()?;
            if pieces.len() == 1 {
                pieces.into_iter().next().expect("one row")
            } else {
                ops::concatenate(&pieces, 0)?
            }
        }
    };
    Ok(input.reshape(&[which.len() as i32, 1])?)
}

/// One decode step of one token per row: batched where the model can, else row by row.
fn forward_single(model: &ReadyModel, mut states: Vec<&mut SequenceState>, input: &Array) -> Result<Array> {
    if states.len() == 1 {
        return model.model.forward(input, states[0]);
    }
    if model.model.batches() {
        return model.model.forward_batch(input, &mut states);
    }
    let mut each = Vec::with_capacity(states.len());
    for (i, state) in states.into_iter().enumerate() {
        each.push(model.model.forward(&input.index(i as i32..i as i32 + 1), state)?);
    }
    Ok(ops::concatenate(&each, 0)?)
}

/// Computes the next mask of every constrained row still going, on worker threads, while MLX
/// evaluates `logits` (queued first, so the forward pass and the masks overlap); returns once
/// both are done. Each row keeps its mask, or its grammar's error, in `Row::mask`.
fn masks_during(logits: &Array, rows: &mut [&mut Row]) -> Result<()> {
    let mut work: Vec<(&mut Guide, &mut Option<Result<TokenMask>>)> = rows
        .iter_mut()
        .filter(|r| r.stopped.is_none() && r.queued.is_empty())
        .filter_map(|r| {
            let Row { guide, mask, .. } = &mut **r;
            guide.as_mut().map(|g| (g, mask))
        })
        .collect();
    if work.is_empty() {
        return Ok(());
    }
    transforms::async_eval([logits])?;
    let began = Instant::now();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(work.len());
    let per_worker = work.len().div_ceil(workers);
    let evaluated = std::thread::scope(|scope| {
        for share in work.chunks_mut(per_worker) {
            scope.spawn(move || {
                for (guide, mask) in share.iter_mut() {
                    **mask = Some(guide.mask());
                }
            });
        }
        let evaluated = logits.eval();
        tracing::trace!(us = began.elapsed().as_micros() as u64, "forward pass done; waiting for masks");
        evaluated
    });
    tracing::trace!(us = began.elapsed().as_micros() as u64, rows = work.len(), "masks ready");
    Ok(evaluated?)
}

fn tokens_array(ids: &[u32]) -> Array {
    let ids: Vec<i32> = ids.iter().map(|&t| t as i32).collect();
    Array::from_slice(&ids, &[1, ids.len() as i32])
}

fn argmax(logits: &Array) -> Result<Array> {
    Ok(ops::indexing::argmax_axis(logits, -1, None)?)
}

/// How a request ended, for its `Done` event.
struct Finished {
    reason: StopReason,
    prompt: usize,
    cached: usize,
    generated: usize,
    forced: usize,
    passes_saved: usize,
    state: crate::state::StateBytes,
    draft_proposed: usize,
    draft_accepted: usize,
    stop_string: Option<String>,
}

fn finish(
    emit: &mut dyn FnMut(Event),
    done: Finished,
    started: Instant,
    first_token: Option<Instant>,
    ended: Option<Instant>,
) -> Result<()> {
    let Finished { reason, prompt, cached, generated, forced, passes_saved, state, draft_proposed, draft_accepted, stop_string } = done;
    let secs = |a: Instant, b: Instant| b.duration_since(a).as_secs_f64();
    let ttft = first_token.map(|t| secs(started, t)).unwrap_or(0.0);
    let decode = match (first_token, ended) {
        (Some(f), Some(e)) if generated > 1 && secs(f, e) > 0.0 => (generated - 1) as f64 / secs(f, e),
        _ => 0.0,
    };
    let timings = Timings {
        time_to_first_token_ms: ttft * 1e3,
        prefill_tokens_per_s: if ttft > 0.0 { (prompt - cached) as f64 / ttft } else { 0.0 },
        decode_tokens_per_s: decode,
        peak_memory_bytes: mlx_rs::memory::peak_memory().unwrap_or(0) as u64,
    };
    tracing::info!(
        reason = ?reason,
        prompt,
        cached,
        generated,
        forced,
        passes_saved,
        draft_proposed,
        draft_accepted,
        stop_string = stop_string.as_deref(),
        ttft_ms = timings.time_to_first_token_ms.round(),
        prefill_tok_s = timings.prefill_tokens_per_s.round(),
        decode_tok_s = (timings.decode_tokens_per_s * 10.0).round() / 10.0,
        "done"
    );
    emit(Event::Done {
        reason,
        usage: Usage { prompt, cached, generated, forced, passes_saved, state_bytes: state, draft_proposed, draft_accepted, stop_string },
        timings,
    });
    Ok(())
}

fn millis(since: Instant) -> u64 {
    since.elapsed().as_millis() as u64
}
