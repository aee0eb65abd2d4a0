//! One request, start to finish, on the engine thread: tokenize, plan, prefill in chunks,
//! decode, stream text, stop. A request is checked and admitted (`admit`: its settings, its
//! prompt fitted to the context, the longest cached prefix, its plan and its media's towers),
//! becomes a `Row` that prefills chunk by chunk, and decodes in the scheduler's batched steps
//! (`step`). The scheduler (`scheduler`) interleaves rows. Prompts with media take their own
//! path to ids and embeddings (`runtime::media`: prompt, encode, prefill); decoding is
//! the same. Rows may decode speculatively, alone or in the batch (`speculative`).

mod admit;
mod denoise;
mod speculative;
mod step;

pub use admit::{admit, check, positions_reserved};
pub use speculative::draft_vocabulary_mismatch;
pub(crate) use speculative::vocabulary_mismatch;
pub use step::decode_step;
use step::masks_during;

use std::collections::VecDeque;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Instant;

use mlx_rs::{ops, transforms, Array};

use crate::cache::{EncoderCache, PrefixCache, PrefixKey};
use crate::constraint::{Guide, TokenMask};
use crate::error::{EngineError, Result};
use crate::media::MediaLimits;
use crate::runtime::media::encode::MediaOutputs;
use crate::runtime::media::prefill::forward_chunk;
use crate::runtime::media::prompt::MediaPrompt;
use crate::runtime::ready_model::ReadyModel;
use crate::runtime::request::{CanvasPiece, CanvasUpdate, Event, ModelId, Prompt, Request, StopReason, Timings, Usage};
use crate::runtime::tokenized_prompt::prepare;
use crate::sample::Sampler;
use crate::state::{Checkpoint, SequenceState};
use crate::text::{ChatOptions, StopMatcher, StreamDecoder};
use denoise::Denoising;
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
                decode_step(model, &|_| None, &mut [&mut row])?;
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
    /// The canvas loop, for a model that writes by denoising.
    denoising: Option<Denoising>,
    /// Send the canvas after each denoising step (`Request::canvas_steps`).
    canvas_steps: bool,
    /// When the first canvas started (the prompt read): a denoising reply's rate counts from here.
    canvases_from: Option<Instant>,
    /// What ended it, when something went wrong with this row alone (its grammar reached a
    /// dead end); `finish` reports it instead of `Done`.
    error: Option<EngineError>,
    /// Why it stopped, once it has.
    pub stopped: Option<StopReason>,
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

    /// Positions its state may hold once its next decode step has run: its prompt and reply
    /// so far, a token chosen on the device and not yet read, and what the step may write
    /// beyond them (proposals to verify, or a finished canvas), for the scheduler to reserve
    /// memory for before the step runs.
    pub fn positions_after_next_step(&self) -> usize {
        let ahead = match (&self.denoising, &self.speculation) {
            (Some(denoising), _) => denoising.canvas_length(),
            (None, Some(speculation)) => 1 + speculation.method.max_draft(),
            (None, None) => 1,
        };
        self.history.len() + ahead
    }

    /// The request's log span: lines about it carry its id.
    pub fn span(&self) -> &tracing::Span {
        &self.span
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
            None => match self.forward_prompt(model, range.clone())? {
                Some(logits) => logits,
                None => model.model.logits(&tokens_array(&self.ids[range.clone()]), &mut self.state)?,
            },
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
        if let Some(denoising) = self.denoising.as_mut() {
            // Computed now, so that the prompt's time is not counted as the first canvas's.
            transforms::eval(self.state.arrays())?;
            self.canvases_from = Some(Instant::now());
            return denoising.start_canvas();
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

    /// One denoising step of the row's canvas, sent as the step left it when the request asks;
    /// a finished canvas is streamed token by token (each through `accept`'s checks), then
    /// reported finished and, unless the reply ended in it, read into the state before the next
    /// canvas starts.
    pub(super) fn denoise_step(&mut self, model: &ReadyModel) -> Result<()> {
        let (Some(denoising), Some(denoiser)) = (self.denoising.as_mut(), model.model.denoiser()) else {
            return Err(EngineError::Internal("a denoising step for a row or model that does not denoise".into()));
        };
        let index = denoising.steps_per_canvas.len();
        let Some(canvas) = denoising.step(denoiser, &self.state)? else {
            if self.canvas_steps {
                let pieces = denoising
                    .shown
                    .iter()
                    .map(|&(token, accepted)| Ok(CanvasPiece { text: model.tokenizer.decode(&[token], true)?, accepted }))
                    .collect::<Result<_>>()?;
                let update = CanvasUpdate { index, steps: denoising.steps(), finished: false, pieces };
                if self.events.send(Event::Canvas(update)).is_err() {
                    self.stopped = Some(StopReason::Cancelled);
                }
            }
            return Ok(());
        };
        let steps = denoising.steps_per_canvas.last().copied().unwrap_or(0);
        let _in_span = self.span.clone().entered();
        tracing::debug!(steps, "canvas");
        for &token in &canvas {
            self.accept(model, token)?;
            if self.stopped.is_some() {
                return Ok(());
            }
        }
        let _ = self.events.send(Event::Canvas(CanvasUpdate { index, steps, finished: true, pieces: vec![] }));
        model.model.logits(&tokens_array(&canvas), &mut self.state)?;
        self.fed.extend_from_slice(&canvas);
        transforms::eval(self.state.arrays())?;
        self.denoising.as_mut().expect("checked above").start_canvas()
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
            draft_steps: self.speculation.as_ref().map_or(0, |s| s.steps),
            draft_from_grammar: self.speculation.as_ref().map_or(0, |s| s.from_grammar),
            stop_string: self.stops.stopped().filter(|_| reason == StopReason::StopString).map(|i| self.stops.stops()[i].clone()),
            steps_per_canvas: self.denoising.as_ref().map(|d| d.steps_per_canvas.clone()).unwrap_or_default(),
            canvases_from: self.canvases_from,
        };
        finish(&mut |e| drop(self.events.send(e)), done, self.started, self.first_token_at, decoded.then(Instant::now))
    }

    /// Reports an error that ended the row.
    pub fn fail(self, error: EngineError) {
        tracing::info!(parent: &self.span, "failed: {error}");
        let _ = self.events.send(Event::Error(error));
    }
}

/// Where a decode step's tokens came from, so the next step can feed them without a copy.
static NEXT_STEP: AtomicU64 = AtomicU64::new(1);

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
    draft_steps: usize,
    draft_from_grammar: usize,
    stop_string: Option<String>,
    steps_per_canvas: Vec<usize>,
    canvases_from: Option<Instant>,
}

fn finish(
    emit: &mut dyn FnMut(Event),
    done: Finished,
    started: Instant,
    first_token: Option<Instant>,
    ended: Option<Instant>,
) -> Result<()> {
    let Finished {
        reason,
        prompt,
        cached,
        generated,
        forced,
        passes_saved,
        state,
        draft_proposed,
        draft_accepted,
        draft_steps,
        draft_from_grammar,
        stop_string,
        steps_per_canvas,
        canvases_from,
    } = done;
    let secs = |a: Instant, b: Instant| b.duration_since(a).as_secs_f64();
    let ttft = first_token.map(|t| secs(started, t)).unwrap_or(0.0);
    // A denoising reply's first token comes with its first canvas: its prompt's rate ends, and
    // its tokens' rate starts, where the first canvas started.
    let (prefill_secs, decode) = match (canvases_from, ended) {
        (Some(c), Some(e)) if secs(c, e) > 0.0 => (secs(started, c), generated as f64 / secs(c, e)),
        (Some(c), _) => (secs(started, c), 0.0),
        (None, _) => match (first_token, ended) {
            (Some(f), Some(e)) if generated > 1 && secs(f, e) > 0.0 => (ttft, (generated - 1) as f64 / secs(f, e)),
            _ => (ttft, 0.0),
        },
    };
    let timings = Timings {
        time_to_first_token_ms: ttft * 1e3,
        prefill_tokens_per_s: if prefill_secs > 0.0 { (prompt - cached) as f64 / prefill_secs } else { 0.0 },
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
        draft_steps,
        draft_from_grammar,
        stop_string = stop_string.as_deref(),
        ttft_ms = timings.time_to_first_token_ms.round(),
        prefill_tok_s = timings.prefill_tokens_per_s.round(),
        decode_tok_s = (timings.decode_tokens_per_s * 10.0).round() / 10.0,
        "done"
    );
    emit(Event::Done {
        reason,
        usage: Usage {
            prompt,
            cached,
            generated,
            forced,
            passes_saved,
            state_bytes: state,
            draft_proposed,
            draft_accepted,
            draft_steps,
            draft_from_grammar,
            stop_string,
            steps_per_canvas,
        },
        timings,
    });
    Ok(())
}

fn millis(since: Instant) -> u64 {
    since.elapsed().as_millis() as u64
}
