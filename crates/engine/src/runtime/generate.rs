//! One request, start to finish, on the engine thread: tokenize, plan, prefill in chunks,
//! decode, stream text, stop. Prompts with media take their own path to ids and embeddings
//! (`media_prompt`, `media_encode`, `media_prefill`); decoding is the same.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use mlx_rs::{ops, transforms, Array};

use crate::cache::{EncoderCache, PrefixCache, PrefixKey, Reuse, ReuseSource};
use crate::error::{EngineError, Result};
use crate::media::MediaLimits;
use crate::runtime::media_encode::MediaOutputs;
use crate::runtime::media_prefill::{chunk_ranges, forward_chunk, image_ranges, split_at};
use crate::runtime::media_prompt::{self, MediaPrompt};
use crate::runtime::model::ReadyModel;
use crate::runtime::request::{Event, Plan, Prompt, Request, StopReason, Timings, Usage};
use crate::sample::Sampler;
use crate::state::{Checkpoint, SequenceState};
use crate::text::{ChatMessage, StopMatcher, StreamDecoder};

/// What a request uses besides its model: the caches, and the limits media must keep to.
pub struct Shared<'a> {
    pub prefix: &'a mut PrefixCache,
    pub encoders: &'a mut EncoderCache,
    pub limits: &'a MediaLimits,
}

/// The prompt as token ids, through the chat template when it is a conversation.
pub fn prompt_ids(model: &ReadyModel, prompt: &Prompt, limits: &MediaLimits) -> Result<Vec<u32>> {
    Ok(prepare(model, prompt, limits)?.0)
}

/// Messages whose ends are checkpointed (the latest ones): an edit or a regenerate resumes at
/// one of them.
const CHECKPOINTED_MESSAGES: usize = 8;

/// Where the last few messages of a conversation end in `ids`, for models whose state must be
/// checkpointed to be reused. A message whose rendering is not a prefix of the whole (a
/// template that rewrites earlier turns) has no boundary.
fn message_boundaries(model: &ReadyModel, messages: &[ChatMessage], ids: &[u32]) -> Vec<usize> {
    let Some(template) = model.template.as_ref() else { return vec![] };
    let first = messages.len().saturating_sub(CHECKPOINTED_MESSAGES).max(1);
    (first..=messages.len())
        .filter_map(|k| {
            let text = template.render(&messages[..k], false, None).ok()?;
            let prefix = model.tokenizer.encode_prompt(&text).ok()?;
            (prefix.len() < ids.len() && ids.starts_with(&prefix)).then_some(prefix.len())
        })
        .collect()
}

/// The prompt's ids and, when it carries media, where each item is.
fn prepare(model: &ReadyModel, prompt: &Prompt, limits: &MediaLimits) -> Result<(Vec<u32>, Option<MediaPrompt>)> {
    let (ids, media) = match prompt {
        Prompt::Chat(messages) if prompt.has_media() => {
            let media = media_prompt::build(model, messages, limits)?;
            (media.ids.clone(), Some(media))
        }
        Prompt::Tokens(ids) => (ids.clone(), None),
        Prompt::Text(text) => (model.tokenizer.encode_prompt(text)?, None),
        Prompt::Chat(messages) => {
            let template = model.template.as_ref().ok_or_else(|| {
                EngineError::Template("this model has no chat template; send plain text instead".into())
            })?;
            (model.tokenizer.encode_prompt(&template.render(messages, true, None)?)?, None)
        }
    };
    if ids.is_empty() {
        return Err(EngineError::invalid("prompt", "the prompt is empty; type something first"));
    }
    let vocab = model.config().vocab_size as u32;
    if let Some(bad) = ids.iter().find(|&&id| id >= vocab) {
        return Err(EngineError::invalid("prompt", format!("token id {bad} is outside the vocabulary (size {vocab})")));
    }
    Ok((ids, media))
}

pub fn run(
    model: &ReadyModel,
    shared: &mut Shared,
    request: Request,
    cancel: &AtomicBool,
    emit: &mut dyn FnMut(Event),
) -> Result<()> {
    let started = Instant::now();
    let (ids, media) = prepare(model, &request.prompt, shared.limits)?;
    let context = model.config().max_position;
    if ids.len() >= context {
        return Err(EngineError::ContextOverflow { prompt: ids.len(), context });
    }
    let mut sampling = request.sampling.clone();
    if sampling.max_tokens == 0 {
        sampling.max_tokens = (context - ids.len()) as u32;
    }
    Sampler::new(sampling.clone(), model.config().vocab_size)?; // invalid settings fail before any work
    StopMatcher::new(sampling.stop.iter().cloned())?;
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
    let mut state = reuse.state.unwrap_or_else(|| model.model.new_state());
    let reused = reuse.reused;
    // State that cannot be cut back is checkpointed at chunk and message boundaries (and where
    // this request resumed), so a later request sharing part of this prompt can resume there.
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
        (Prompt::Chat(messages), None) => message_boundaries(model, messages, &ids),
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
    emit(Event::Plan(Plan {
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
    }));
    mlx_rs::memory::reset_peak_memory()?;
    if let (Some(m), Some(o), Some(e)) = (&media, outputs.as_mut(), encoder) {
        if cancel.load(Ordering::Relaxed) {
            return finish(emit, Finished::cancelled(ids.len(), reused), started, None, None);
        }
        o.run_towers(m, e, shared.encoders, shared.limits)?;
    }

    let mut forward = |range: Range<usize>, state: &mut SequenceState| match (&media, &outputs) {
        (Some(m), Some(o)) => forward_chunk(model, m, o, range, state),
        _ => model.model.forward(&tokens_array(&ids[range]), state),
    };
    // Exactly the tokens the state holds, to key it when the request ends.
    let mut fed: Vec<u32> = ids[..reused].to_vec();
    let mut sequence = Sequence { state: &mut state, fed: &mut fed, checkpoints: checkpointing.then_some(&mut checkpoints) };
    let result = decode(model, &request, &sampling, &ids, &ranges, &mut forward, &mut sequence, cancel, emit, started);
    shared.prefix.insert(PrefixKey { tokens: fed, ..key }, state, checkpoints);
    result
}

/// The sequence a request grows: its state, the tokens it holds, and (for state that cannot be
/// cut back) the checkpoints taken on the way.
struct Sequence<'a> {
    state: &'a mut SequenceState,
    fed: &'a mut Vec<u32>,
    checkpoints: Option<&'a mut Vec<Checkpoint>>,
}

/// Prefill `ranges` (the prompt past the reused prefix) with `forward`, checkpointing between
/// chunks where the state needs it, then decode.
#[allow(clippy::too_many_arguments)]
fn decode(
    model: &ReadyModel,
    request: &Request,
    sampling: &crate::sample::SamplingParams,
    ids: &[u32],
    ranges: &[Range<usize>],
    forward: &mut dyn FnMut(Range<usize>, &mut SequenceState) -> Result<Array>,
    sequence: &mut Sequence,
    cancel: &AtomicBool,
    emit: &mut dyn FnMut(Event),
    started: Instant,
) -> Result<()> {
    let reused = ranges.first().map_or(ids.len(), |r| r.start);
    let context = model.config().max_position;
    let mut sampler = Sampler::new(sampling.clone(), model.config().vocab_size)?;
    let mut stops = StopMatcher::new(sampling.stop.iter().cloned())?;
    let mut decoder = StreamDecoder::new(model.tokenizer.clone(), true);
    // Prefill: every chunk but the last only fills the cache.
    let mut logits = None;
    for (i, range) in ranges.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            return finish(emit, Finished::cancelled(ids.len(), reused), started, None, None);
        }
        let out = forward(range.clone(), sequence.state)?;
        sequence.fed.extend_from_slice(&ids[range.clone()]);
        let last = i + 1 == ranges.len();
        if !last {
            transforms::eval(sequence.state.arrays())?;
        }
        // Also at the prompt's end: the next turn shares the prompt, and often not the reply
        // as the template writes it back.
        if let Some(checkpoints) = sequence.checkpoints.as_mut() {
            checkpoints.extend(sequence.state.checkpoint());
        }
        if last {
            logits = Some(out);
        }
    }
    let mut logits = logits.expect("a non-empty prompt has a last chunk");
    if let Some(path) = &request.logits_path {
        logits.eval()?;
        crate::npy::write_f32(path, logits.as_slice::<f32>(), &[logits.size()])?;
    }

    // Decode. Greedy without penalties keeps the next step's graph queued on the device while
    // the host handles the current token (as mlx-lm does); other samplers need the host.
    let pipelined = sampler.is_greedy() && sampling.repetition_penalty == 1.0 && sampling.presence_penalty == 0.0 && sampling.logit_bias.is_empty();
    let mut history = ids.to_vec();
    let mut generated = 0usize;
    let mut first_token_at = None;
    let mut next = None;
    if pipelined {
        // Queued on its own, so the first token is ready when the prefill is, not after the
        // step that follows it.
        let first = argmax(&logits)?;
        transforms::async_eval([&first])?;
        next = Some(first);
        // The logits are not needed again; holding them would keep a vocabulary-sized buffer
        // alive through the whole decode.
        logits = Array::from_int(0);
    }
    let (state, fed) = (&mut *sequence.state, &mut *sequence.fed);
    let reason = loop {
        let token = match next.take() {
            Some(y) => {
                let following = model.model.forward(&y.reshape(&[1, 1])?, state)?;
                let after = argmax(&following)?;
                transforms::async_eval([&after])?;
                let token = y.try_item_cast::<u32>().map_err(|e| EngineError::Mlx(e.to_string()))?;
                fed.push(token);
                next = Some(after);
                token
            }
            None => sampler.sample(&logits, &history)?,
        };
        first_token_at.get_or_insert_with(Instant::now);
        if !request.ignore_eos && model.eos_ids.contains(&token) {
            break StopReason::Eos;
        }
        history.push(token);
        generated += 1;
        let step = stops.push(&decoder.push(token)?);
        emit(Event::Token { id: token, text: step.text });
        if step.stopped.is_some() {
            break StopReason::StopString;
        }
        if generated >= sampling.max_tokens as usize {
            break StopReason::MaxTokens;
        }
        if history.len() >= context {
            break StopReason::Context;
        }
        if cancel.load(Ordering::Relaxed) {
            break StopReason::Cancelled;
        }
        if !pipelined {
            logits = model.model.forward(&tokens_array(&[token]), state)?;
            fed.push(token);
        }
    };
    // The speculative next step may still be running on MLX's stream: let it finish before
    // its arrays are dropped (and before the cache it extended is stored).
    if let Some(pending) = next.take() {
        pending.eval()?;
    }
    if reason != StopReason::StopString {
        let tail = stops.push(&decoder.finish()?).text + &stops.finish();
        if !tail.is_empty() {
            emit(Event::Text(tail));
        }
    }
    let done = Finished { reason, prompt: ids.len(), cached: reused, generated, state: state.bytes() };
    finish(emit, done, started, first_token_at, Some(Instant::now()))
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
    state: crate::state::StateBytes,
}

impl Finished {
    fn cancelled(prompt: usize, cached: usize) -> Self {
        Self { reason: StopReason::Cancelled, prompt, cached, generated: 0, state: Default::default() }
    }
}

fn finish(emit: &mut dyn FnMut(Event), done: Finished, started: Instant, first_token: Option<Instant>, ended: Option<Instant>) -> Result<()> {
    let Finished { reason, prompt, cached, generated, state } = done;
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
    emit(Event::Done { reason, usage: Usage { prompt, cached, generated, state_bytes: state }, timings });
    Ok(())
}
