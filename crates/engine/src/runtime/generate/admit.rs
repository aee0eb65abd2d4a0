//! Admission: a request's settings and prompt checked before it waits for a place, the
//! positions it may come to hold, and its start as a row (the longest cached prefix, the plan,
//! its media's towers).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Instant;

use super::denoise::{self, Denoising};
use super::speculative::{self, Speculation};
use super::{Row, Shared};
use crate::cache::{PrefixKey, Reuse, ReuseSource};
use crate::constraint::Constraint;
use crate::error::{EngineError, Result};
use crate::media::MediaLimits;
use crate::runtime::context;
use crate::runtime::media::encode::MediaOutputs;
use crate::runtime::media::prefill::{chunk_ranges, image_ranges, split_at};
use crate::runtime::ready_model::ReadyModel;
use crate::runtime::request::{DenoisingNoise, Event, Plan, Prompt, Request};
use crate::runtime::tokenized_prompt::TokenizedPrompt;
use crate::sample::{Sampler, SamplingParams};
use crate::state::KeysValues;
use crate::text::{ChatMessage, ChatOptions, StopMatcher, StreamDecoder};

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
pub fn check(model: &ReadyModel, request: &mut Request, limits: &MediaLimits) -> Result<TokenizedPrompt> {
    // Invalid settings fail before any work. `max_tokens` 0 asks for a reply up to the
    // context's end, which `admit` resolves once the prompt's length is known.
    let sampling = SamplingParams { max_tokens: request.sampling.max_tokens.max(1), ..request.sampling.clone() };
    Sampler::new(sampling, model.config().vocab_size)?;
    StopMatcher::new(request.sampling.stop.iter().cloned())?;
    // A model that writes whole canvases at once cannot be steered token by token.
    if request.constraint.is_some() && model.model.denoiser().is_some() {
        return Err(EngineError::invalid(
            "constraint",
            format!(
                "{} writes its reply by denoising whole canvases, which a JSON schema, regex or grammar cannot steer token by token; send the request without one, or pick a model that writes token by token",
                model.info.name
            ),
        ));
    }
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

/// Positions admission reserves memory for: a request with a token limit, its prompt and
/// every token it may generate; one without (`max_tokens` 0, a reply up to the context's end),
/// its prompt and one growth step of the keys/values buffers, which the scheduler grows as the
/// reply does (`Scheduler::grow`): reserving the whole context would keep a long-context
/// request from running beside another though most replies are short.
pub fn positions_reserved(model: &ReadyModel, request: &Request, prompt: usize) -> usize {
    let context = model.config().max_position;
    match request.sampling.max_tokens as usize {
        0 => (prompt + KeysValues::GROWTH_STEP).min(context),
        n => (prompt + n).min(context),
    }
}

/// Starts a checked request: reuses the longest cached prefix, sends the plan, runs the
/// towers its media needs. The row then prefills and decodes in the scheduler's steps.
/// `draft`: the draft model the request names, when it is loaded.
pub fn admit(
    model: &ReadyModel,
    draft: Option<&ReadyModel>,
    shared: &mut Shared,
    prepared: TokenizedPrompt,
    request: Request,
    cancel: Arc<AtomicBool>,
    events: Sender<Event>,
) -> Result<Row> {
    let started = Instant::now();
    let span = tracing::info_span!("request", id = NEXT_REQUEST.fetch_add(1, Ordering::Relaxed));
    let _in_span = span.clone().entered();
    let TokenizedPrompt { ids, media, dropped_messages, reply_opening, guide } = prepared;
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
    let state = reuse.state.unwrap_or_else(|| model.new_state());
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
            tracing::info!(
                prompt_tokens = ids.len(),
                reused,
                source = reuse.source.as_str(),
                chunks = ranges.len(),
                copied_bytes = reuse.copied_bytes,
                "prefix cache hit"
            )
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
    let denoising = model.model.denoiser().map(|d| {
        let noise = request.noise.clone().unwrap_or_else(|| DenoisingNoise::Seeded(sampling.seed.unwrap_or_else(fresh_seed)));
        Denoising::new(d.params().clone(), model.config().vocab_size, noise.source())
    });
    let speculative_declined = match (&denoising, &request.speculative) {
        (Some(_), Some(_)) => Some(denoise::NO_SPECULATION),
        _ => speculative::declined(model, request.speculative.as_ref(), draft, media.is_some()),
    };
    let speculation = match request.speculative.filter(|_| speculative_declined.is_none()) {
        Some(method) => Some(Speculation::new(method, model, draft, &sampling, sampler.is_greedy())?),
        None => None,
    };
    let _ = events.send(Event::Plan(Plan {
        method: if denoising.is_some() { "denoising" } else { "autoregressive" },
        batching_declined: denoising.as_ref().map(|_| denoise::NOT_BATCHED.to_owned()),
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
        kv_bits: model.kv.quantization.map(|q| q.bits),
        kv_group_size: model.kv.quantization.map(|q| q.group_size),
        kv_quantization_declined: model.kv.declined.clone(),
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
    let pipelined = denoising.is_none()
        && sampler.is_greedy()
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
        denoising,
        canvas_steps: request.canvas_steps,
        canvases_from: None,
        error: None,
        stopped: None,
    })
}

/// A seed for a request that gave none: the clock's nanoseconds, mixed with the request count.
fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    nanos ^ NEXT_REQUEST.load(Ordering::Relaxed).rotate_left(32)
}

/// Request ids, for the log.
static NEXT_REQUEST: AtomicU64 = AtomicU64::new(1);
