//! The scheduler: every request the engine thread is serving, and what each iteration runs.
//!
//! Requests wait in arrival order until they fit (a row limit and a memory budget), then run
//! as rows. What a request needs is its state at its longest (prompt plus every token it may
//! generate, in its keys/values precision, windows capped, recurrent state measured) plus
//! one prefill chunk's activations (`model::memory`); the budget is `BatchOptions::memory_budget`.
//! A request without a token limit may reply up to the context's end, yet most replies are
//! short: it is reserved its prompt and one growth step of keys/values, and its reservation
//! grows a step at a time as its reply reaches it, while the budget beside the others' allows
//! (`Scheduler::grow`); a row that cannot grow waits, keeping its state, and when no row can
//! step at all the newest waiting one ends, so nothing deadlocks.
//! Only the oldest waiting request may start: a later one never overtakes it, so a large
//! request waits for running ones to finish, never for a stream of small ones behind it. A
//! request that could not fit even alone is refused at once with what to change. Each iteration runs one prefill chunk of the
//! oldest row still reading its prompt and one decode step for every row that is decoding
//! (one batched forward per model), so a long prompt slows the others' decoding down but
//! never stops it. Rows join and leave between iterations; cancellation, stop strings and
//! token limits are checked for every row at every step.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Instant;

use crate::error::{EngineError, MemoryShortfall};
use crate::runtime::budget::MemoryBudget;
use crate::runtime::generate::{self, Row, Shared};
use crate::runtime::ready_model::ReadyModel;
use crate::runtime::request::{Event, ModelId, QueueReason, Request, StopReason, Timings, Usage};
use crate::runtime::tokenized_prompt::TokenizedPrompt;
use crate::state::{KeysValues, StateKind};

/// How many requests run at once, and how much memory they may hold together.
#[derive(Debug, Clone, Default)]
pub struct BatchOptions {
    /// Rows decoded together at most (default 16); later requests wait.
    pub max_rows: Option<usize>,
    /// Memory the running requests may come to hold together: their state at its longest and
    /// the largest prefill chunk's activations (default `MemoryBudget::default()`, a share of
    /// the memory left after the weights). A request is admitted when its worst case fits
    /// beside the others'; one that could never fit is refused. A request without a token
    /// limit counts its prompt and a growth step at first, and grows as its reply does.
    pub memory_budget: Option<MemoryBudget>,
}

const DEFAULT_MAX_ROWS: usize = 16;

struct Waiting {
    model: ModelId,
    request: Request,
    prepared: TokenizedPrompt,
    cancel: Arc<AtomicBool>,
    events: Sender<Event>,
    needs: Needs,
    /// How its reservation grows, for a request without a token limit.
    growth: Option<Growth>,
    queued_at: Instant,
    /// Whether the log has said why it waits.
    wait_logged: bool,
    /// Whether the caller has been told it waits (`Event::Queued`).
    told: bool,
}

struct Running {
    model: ModelId,
    row: Row,
    /// What admission set aside for it, grown since for a request without a token limit.
    reserved: Needs,
    /// How its reservation grows; `None`: a request with a token limit, reserved its worst case.
    growth: Option<Growth>,
    /// It skips this iteration's decode step: its reply has reached its reservation, and the
    /// budget beside the others' reservations does not hold another step.
    waits_for_memory: bool,
}

/// A request without a token limit: the positions its reservation holds now, and what its
/// worst case at more positions is computed from.
#[derive(Debug, Clone, Copy)]
struct Growth {
    positions: usize,
    prompt: usize,
    chunk: usize,
}

/// A request's worst case, in bytes: its state, held until it ends, and its prefill
/// chunk's activations, held only while it reads its prompt.
#[derive(Debug, Clone, Copy)]
struct Needs {
    state: usize,
    activations: usize,
}

pub struct Scheduler {
    waiting: VecDeque<Waiting>,
    running: Vec<Running>,
    max_rows: usize,
    budget: MemoryBudget,
    physical: u64,
    /// MLX's buffer cache at most (`EngineOptions::mlx_cache_limit`), and the limit last set.
    cache_limit: usize,
    cache_limit_set: Option<usize>,
}

impl Scheduler {
    /// `cache_limit`: the most MLX may keep of freed buffers for reuse.
    pub fn new(options: &BatchOptions, cache_limit: usize) -> Self {
        Self {
            waiting: VecDeque::new(),
            running: vec![],
            max_rows: options.max_rows.unwrap_or(DEFAULT_MAX_ROWS).max(1),
            budget: options.memory_budget.unwrap_or_default(),
            physical: crate::device::physical_memory(),
            cache_limit,
            cache_limit_set: None,
        }
    }

    /// Freed buffers MLX keeps for reuse count against the budget too: its cache may hold what
    /// the running requests have not reserved. Without this, the buffers a growing state
    /// leaves behind (each growth step frees the smaller copy) pile up in the cache, and the
    /// process takes several times the budget (8,192 positions of SmolLM2: 3.5 GB resident
    /// against 0.5 GB in use).
    fn bound_cache(&mut self, budget: usize) {
        let limit = budget.saturating_sub(self.in_use_with(None)).min(self.cache_limit);
        if self.cache_limit_set != Some(limit) {
            let _ = mlx_rs::memory::set_cache_limit(limit);
            self.cache_limit_set = Some(limit);
        }
    }

    /// The budget in bytes beside the models loaded now.
    fn budget_bytes(&self, models: &HashMap<ModelId, ReadyModel>) -> usize {
        let weights = models.values().map(|m| m.weights_bytes as u64).sum();
        self.budget.bytes(self.physical, weights) as usize
    }

    /// Memory the running rows hold, with `next` beside them: every state, and the largest
    /// activations of a row still reading its prompt (one chunk runs at a time).
    fn in_use_with(&self, next: Option<Needs>) -> usize {
        let rows = self.running.iter().map(|r| (r.reserved, !r.row.prefilled())).chain(next.map(|n| (n, true)));
        let (mut state, mut activations) = (0, 0);
        for (needs, prefilling) in rows {
            state += needs.state;
            if prefilling {
                activations = activations.max(needs.activations);
            }
        }
        state + activations
    }

    /// Nothing running or waiting.
    pub fn is_idle(&self) -> bool {
        self.waiting.is_empty() && self.running.is_empty()
    }

    /// A new request: checked now (a bad one, or one that could never fit, fails at once),
    /// then queued.
    pub fn submit(
        &mut self,
        model: &ReadyModel,
        models: &HashMap<ModelId, ReadyModel>,
        shared: &Shared,
        mut request: Request,
        cancel: Arc<AtomicBool>,
        events: Sender<Event>,
    ) {
        let prepared = match generate::check(model, &mut request, shared.limits) {
            Ok(p) => p,
            Err(e) => return drop(events.send(Event::Error(e))),
        };
        let prompt = prepared.ids.len();
        // Without a token limit, the first reservation (prompt and a growth step) is what
        // must fit; the rest is reserved as the reply grows.
        let positions = generate::positions_reserved(model, &request, prompt);
        let needs = worst_case(model, positions, prompt, request.chunk_size);
        let growth = (request.sampling.max_tokens == 0).then_some(Growth { positions, prompt, chunk: request.chunk_size });
        let budget = self.budget_bytes(models);
        if needs.state + needs.activations > budget {
            let error = never_fits(model, positions, needs, budget, growth.is_none());
            tracing::warn!("refused a request: {error}");
            return drop(events.send(Event::Error(error)));
        }
        let queued_at = Instant::now();
        self.waiting.push_back(Waiting {
            model: request.model,
            request,
            prepared,
            cancel,
            events,
            needs,
            growth,
            queued_at,
            wait_logged: false,
            told: false,
        });
    }

    /// One iteration: grow the reservations of replies that reached them, admit what fits
    /// (nothing while a running row waits to grow: it came first), one prefill chunk, one
    /// decode step for every decoding row that has the memory to, then retire the rows that
    /// stopped.
    pub fn step(&mut self, models: &HashMap<ModelId, ReadyModel>, shared: &mut Shared) {
        let budget = self.budget_bytes(models);
        let rows_wait = self.grow(models, budget);
        self.admit(models, shared, rows_wait);
        self.bound_cache(budget);

        for running in &mut self.running {
            running.row.check_cancel();
        }
        // The oldest row still reading its prompt gets one chunk.
        if let Some(i) = self.running.iter().position(|r| !r.row.prefilled() && r.row.stopped.is_none()) {
            let running = &mut self.running[i];
            let result = match models.get(&running.model) {
                Some(model) => running.row.prefill_chunk(model),
                None => Err(unloaded()),
            };
            if let Err(e) = result {
                self.running.remove(i).row.fail(e);
            }
        }
        // Every decoding row, one batched step per model.
        let mut by_model: Vec<ModelId> = vec![];
        for r in &self.running {
            if r.decodes() && !by_model.contains(&r.model) {
                by_model.push(r.model);
            }
        }
        for id in by_model {
            let mut rows: Vec<&mut Row> = self.running.iter_mut().filter(|r| r.model == id && r.decodes()).map(|r| &mut r.row).collect();
            // Rows may speculate with a draft model of their own.
            let draft_of = |d: ModelId| models.get(&d);
            let result = match models.get(&id) {
                Some(model) => generate::decode_step(model, &draft_of, &mut rows),
                None => Err(unloaded()),
            };
            if let Err(e) = result {
                let (failed, kept) = std::mem::take(&mut self.running).into_iter().partition(|r| r.model == id && r.decodes());
                self.running = kept;
                for r in failed {
                    let e = EngineError::Mlx(format!("a batched decode step failed: {e}"));
                    r.row.fail(e);
                }
            }
        }
        for running in &mut self.running {
            running.row.check_cancel();
        }
        // Retire the rows that stopped, keeping their state in the prefix cache.
        let (stopped, kept): (Vec<Running>, Vec<Running>) =
            std::mem::take(&mut self.running).into_iter().partition(|r| r.row.stopped.is_some());
        self.running = kept;
        for r in stopped {
            r.row.finish(shared.prefix);
        }
    }

    /// Before a decode step: each row without a token limit whose next step would write past
    /// its reservation grows it by growth steps of keys/values (`KeysValues::GROWTH_STEP`, never
    /// past the context), oldest first, while the budget beside the others' reservations holds
    /// it; one that cannot grow waits this iteration, keeping its state, while rows that need
    /// no more go on. A younger row does not grow while an older one waits (as a later request
    /// never overtakes an earlier one). When no row can step at all (every live row waits),
    /// the newest waiting one ends (`StopReason::Context`: the context the budget holds is
    /// full), so that the others grow into what it held. Returns whether a row still waits.
    fn grow(&mut self, models: &HashMap<ModelId, ReadyModel>, budget: usize) -> bool {
        let mut older_waits = false;
        for i in 0..self.running.len() {
            self.running[i].waits_for_memory = false;
            let running = &self.running[i];
            let (Some(growth), Some(model)) = (running.growth, models.get(&running.model)) else { continue };
            if !running.row.prefilled() || running.row.stopped.is_some() {
                continue;
            }
            let context = model.config().max_position;
            let wanted = running.row.positions_after_next_step();
            if wanted <= growth.positions || growth.positions >= context {
                continue;
            }
            let steps = (wanted - growth.positions).div_ceil(KeysValues::GROWTH_STEP);
            let positions = (growth.positions + steps * KeysValues::GROWTH_STEP).min(context);
            let needs = worst_case(model, positions, growth.prompt, growth.chunk);
            // A decoding row holds no activations: only its state changes.
            let in_use = self.in_use_with(None) - running.reserved.state + needs.state;
            if older_waits || in_use > budget {
                self.running[i].waits_for_memory = true;
                older_waits = true;
                continue;
            }
            tracing::debug!(
                parent: running.row.span(),
                positions,
                state_bytes = needs.state,
                grown_bytes = needs.state - running.reserved.state,
                in_use_bytes = in_use,
                budget_bytes = budget,
                "memory reservation grew"
            );
            let running = &mut self.running[i];
            running.reserved = needs;
            running.growth = Some(Growth { positions, ..growth });
        }
        let waiting = self.running.iter().filter(|r| r.waits_for_memory).count();
        let stepping = self.running.iter().any(|r| r.row.stopped.is_none() && !r.waits_for_memory);
        if waiting > 0 && !stepping {
            let in_use = self.in_use_with(None);
            let newest = self.running.iter_mut().rev().find(|r| r.waits_for_memory).expect("a waiting row");
            let positions = newest.growth.map_or(0, |g| g.positions);
            tracing::warn!(
                parent: newest.row.span(),
                positions,
                reserved = %megabytes(newest.reserved.state),
                in_use = %megabytes(in_use),
                budget = %megabytes(budget),
                "a reply without a token limit ended at {positions} positions: the memory budget for running requests holds no \
                 more of it; give the request a token limit or raise the memory budget"
            );
            newest.row.stopped = Some(StopReason::Context);
            newest.waits_for_memory = false;
            return waiting > 1;
        }
        waiting > 0
    }

    /// Starts waiting requests in order while they fit; a request cancelled while it waited
    /// ends without running. `rows_wait`: a running row waits to grow its reservation, and
    /// nothing starts before it has (what it waits for goes to it first).
    fn admit(&mut self, models: &HashMap<ModelId, ReadyModel>, shared: &mut Shared, rows_wait: bool) {
        self.waiting.retain(|w| {
            let cancelled = w.cancel.load(Ordering::Relaxed);
            if cancelled {
                let _ = w.events.send(Event::Done { reason: StopReason::Cancelled, usage: Usage::default(), timings: Timings::default() });
            }
            !cancelled
        });
        let budget = self.budget_bytes(models);
        while let Some(next) = self.waiting.front() {
            let (full, in_use) = (self.running.len() >= self.max_rows, self.in_use_with(Some(next.needs)));
            if full || rows_wait || in_use > budget {
                let queued = self.waiting.len();
                let reason = if full { QueueReason::Row } else { QueueReason::Memory };
                for (ahead, waiting) in self.waiting.iter_mut().enumerate().filter(|(_, w)| !w.told) {
                    waiting.told = true;
                    let _ = waiting.events.send(Event::Queued { reason, ahead });
                }
                let next = self.waiting.front_mut().expect("a waiting request");
                if !std::mem::replace(&mut next.wait_logged, true) {
                    tracing::info!(
                        queued,
                        running = self.running.len(),
                        needs = %megabytes(next.needs.state + next.needs.activations),
                        in_use = %megabytes(self.in_use_with(None)),
                        budget = %megabytes(budget),
                        "a request waits for {}",
                        match (full, rows_wait) {
                            (true, _) => "a free row",
                            (false, true) => "memory, which a running reply grows into first",
                            (false, false) => "memory",
                        }
                    );
                }
                break;
            }
            let Waiting { model, request, prepared, cancel, events, needs, growth, queued_at, wait_logged, .. } =
                self.waiting.pop_front().expect("a waiting request");
            // In bytes, for bench/memory.py to set beside what it measures.
            tracing::info!(
                state_bytes = needs.state,
                activation_bytes = needs.activations,
                budget_bytes = budget,
                waited_ms = if wait_logged { queued_at.elapsed().as_millis() as u64 } else { 0 },
                grows = growth.is_some(),
                "memory reserved"
            );
            let Some(ready) = models.get(&model) else {
                let _ = events.send(Event::Error(unloaded()));
                continue;
            };
            if self.running.is_empty() {
                let _ = mlx_rs::memory::reset_peak_memory();
            }
            let draft = request.speculative.and_then(|s| s.draft_model()).and_then(|d| models.get(&d));
            match generate::admit(ready, draft, shared, prepared, request, cancel, events.clone()) {
                Ok(row) => self.running.push(Running { model, row, reserved: needs, growth, waits_for_memory: false }),
                Err(e) => drop(events.send(Event::Error(e))),
            }
        }
    }
}

impl Running {
    /// Whether it takes this iteration's decode step.
    fn decodes(&self) -> bool {
        self.row.prefilled() && self.row.stopped.is_none() && !self.waits_for_memory
    }
}

/// A request's worst case: its state at `positions` (`model::state_bytes`, full keys/values
/// counted in their growth steps, plus the model's fixed recurrent state), and the
/// activations of its largest prefill chunk, the last, which attends to the whole prompt.
fn worst_case(model: &ReadyModel, positions: usize, prompt: usize, chunk: usize) -> Needs {
    let config = model.config();
    let element = crate::model::memory::element_bytes(&model.info.dtype);
    let kinds = model.state_kinds().into_iter().map(|kind| match kind {
        StateKind::Window { size } => StateKind::Window { size: size.min(positions) },
        other => other,
    });
    let positional =
        crate::model::state_bytes(kinds, KeysValues::capacity_for(positions), config.num_kv_heads, config.head_dim, element) as usize;
    let chunk = chunk.max(1).min(prompt.max(1));
    let activations = crate::model::memory::prefill_activation_bytes(config, chunk, prompt, element) as usize;
    Needs { state: positional + model.fixed_state_bytes(), activations }
}

/// The refusal of a request that could not run even alone, saying what would let it.
/// `reply_limited`: the request set a token limit.
fn never_fits(model: &ReadyModel, positions: usize, needs: Needs, budget: usize, reply_limited: bool) -> EngineError {
    EngineError::NeverFits(MemoryShortfall {
        reply_limited,
        state_bytes: needs.state,
        activation_bytes: needs.activations,
        positions,
        budget_bytes: budget,
        kv_bits: model.kv.quantization.map(|q| q.bits),
    })
}

fn megabytes(bytes: usize) -> String {
    format!("{:.0} MB", bytes as f64 / 1e6)
}

fn unloaded() -> EngineError {
    EngineError::invalid("model", "that model was unloaded; load it again")
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::{channel, Receiver};

    use super::*;
    use crate::cache::{EncoderCache, EncoderOptions, PrefixCache, PrefixOptions};
    use crate::error::Remedy;
    use crate::media::MediaLimits;
    use crate::model::LoadOptions;
    use crate::runtime::request::{Prompt, Speculative};
    use crate::sample::SamplingParams;

    /// The tiny llama's keys/values per position: 2 layers × (keys + values) × 2 KV heads × 16
    /// × 4 bytes.
    const BYTES_PER_POSITION: usize = 2 * 2 * 2 * 16 * 4;
    const CONTEXT: usize = 65_536;
    const CHUNK: usize = 16;

    /// The tiny fixture `name` with a `context`-position context (RoPE needs no table), in a
    /// temporary folder, loaded with `options`.
    fn long_context(name: &str, context: usize, options: &LoadOptions) -> (tempfile::TempDir, ReadyModel) {
        let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny").join(name);
        let dir = tempfile::tempdir().unwrap();
        for file in std::fs::read_dir(&from).unwrap().flatten().filter(|f| f.path().is_file()) {
            std::fs::copy(file.path(), dir.path().join(file.file_name())).unwrap();
        }
        let path = dir.path().join("config.json");
        let mut config: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let text = if config.get("text_config").is_some() { &mut config["text_config"] } else { &mut config };
        text["max_position_embeddings"] = context.into();
        std::fs::write(&path, config.to_string()).unwrap();
        let model = ReadyModel::load(dir.path(), options, &mut |_| {}).unwrap();
        assert_eq!(model.config().max_position, context, "{name}");
        (dir, model)
    }

    /// The tiny llama with a 65,536-position context, as a long-context model whose whole
    /// context is 256 times a short reply's reservation.
    fn long_context_llama() -> (tempfile::TempDir, ReadyModel) {
        long_context("llama", CONTEXT, &LoadOptions::default())
    }

    /// A scheduler over one model, its caches off (every request computes its whole prompt).
    struct Bench {
        scheduler: Scheduler,
        models: HashMap<ModelId, ReadyModel>,
        prefix: PrefixCache,
        encoders: EncoderCache,
        limits: MediaLimits,
        /// Prompt tokens per prefill chunk.
        chunk: usize,
        /// Every request's cancel flag.
        cancels: Vec<Arc<AtomicBool>>,
    }

    const MODEL: ModelId = ModelId(1);
    const DRAFT: ModelId = ModelId(2);

    impl Bench {
        fn new(model: ReadyModel, budget: usize) -> Self {
            let options = BatchOptions { memory_budget: Some(MemoryBudget::Bytes(budget as u64)), ..Default::default() };
            Self {
                scheduler: Scheduler::new(&options, 1 << 30),
                models: HashMap::from([(MODEL, model)]),
                prefix: PrefixCache::new(PrefixOptions { enabled: false, ..Default::default() }),
                encoders: EncoderCache::new(EncoderOptions { enabled: false, ..Default::default() }),
                limits: MediaLimits::default(),
                chunk: CHUNK,
                cancels: vec![],
            }
        }

        fn model(&self) -> &ReadyModel {
            &self.models[&MODEL]
        }

        /// The draft model `speculative` names, loaded beside the model: another copy of it.
        fn load_draft(&mut self, speculative: Option<Speculative>, name: &str, options: &LoadOptions) -> Option<tempfile::TempDir> {
            let Some(Speculative::DraftModel { model: DRAFT, .. }) = speculative else { return None };
            let (dir, draft) = long_context(name, self.model().config().max_position, options);
            self.models.insert(DRAFT, draft);
            Some(dir)
        }

        /// A greedy request for `prompt`, through EOS; `max_tokens` 0: no token limit.
        /// `penalized` moves it off the device-side pipeline onto host sampling.
        fn submit(&mut self, prompt: Vec<u32>, max_tokens: u32, penalized: bool) -> Receiver<Event> {
            self.submit_speculating(prompt, max_tokens, penalized, None)
        }

        fn submit_speculating(
            &mut self,
            prompt: Vec<u32>,
            max_tokens: u32,
            penalized: bool,
            speculative: Option<Speculative>,
        ) -> Receiver<Event> {
            let mut sampling = SamplingParams::greedy();
            sampling.max_tokens = max_tokens;
            // A denoising model's canvases start from seeded noise.
            sampling.seed = Some(7);
            if penalized {
                sampling.repetition_penalty = 1.3;
            }
            let mut request = Request::new(MODEL, Prompt::Tokens(prompt), sampling);
            request.ignore_eos = true;
            request.chunk_size = self.chunk;
            request.speculative = speculative;
            let (events, received) = channel();
            let shared = Shared { prefix: &mut self.prefix, encoders: &mut self.encoders, limits: &self.limits };
            let cancel = Arc::new(AtomicBool::new(false));
            self.cancels.push(cancel.clone());
            self.scheduler.submit(&self.models[&MODEL], &self.models, &shared, request, cancel, events);
            received
        }

        fn step(&mut self) {
            let mut shared = Shared { prefix: &mut self.prefix, encoders: &mut self.encoders, limits: &self.limits };
            self.scheduler.step(&self.models, &mut shared);
        }

        /// Steps until nothing runs or waits (at most `steps` iterations: a hang fails).
        fn run(&mut self, steps: usize) {
            for _ in 0..steps {
                if self.scheduler.is_idle() {
                    return;
                }
                self.step();
            }
            panic!("still running after {steps} iterations");
        }

        /// What a request of `prompt` tokens reserves at `positions`.
        fn needs_at(&self, positions: usize, prompt: usize) -> Needs {
            worst_case(self.model(), positions, prompt, CHUNK)
        }
    }

    fn prompt(k: u32, n: u32) -> Vec<u32> {
        (0..n).map(|i| 3 + (i * 7 + k * 13) % 380).collect()
    }

    /// What a request's events say so far.
    #[derive(Default)]
    struct Outcome {
        tokens: Vec<u32>,
        /// Why it stopped, once it has.
        reason: Option<StopReason>,
        /// Whether it was told it waits.
        queued: bool,
        /// The speculative decoding its plan runs, and the tokens it proposed.
        speculative: Option<&'static str>,
        proposed: usize,
    }

    fn outcome(events: &Receiver<Event>) -> Outcome {
        let mut outcome = Outcome::default();
        for event in events.try_iter() {
            match event {
                Event::Token { id, .. } => outcome.tokens.push(id),
                Event::Done { reason, usage, .. } => (outcome.reason, outcome.proposed) = (Some(reason), usage.draft_proposed),
                Event::Queued { .. } => outcome.queued = true,
                Event::Plan(plan) => outcome.speculative = plan.speculative,
                Event::Error(e) => panic!("{e}"),
                _ => {}
            }
        }
        outcome
    }

    /// A limitless request reserves its prompt and a growth step, not the context: two run at
    /// once under a budget that holds one whole-context reservation (before, the second
    /// waited), and each grows its reservation as its reply reaches it.
    #[test]
    fn two_limitless_requests_run_at_once_where_one_whole_context_fits() {
        let (_dir, model) = long_context_llama();
        let whole = worst_case(&model, CONTEXT, 20, CHUNK);
        assert_eq!(whole.state, CONTEXT * BYTES_PER_POSITION);
        let budget = whole.state + whole.activations + 2 * KeysValues::GROWTH_STEP * BYTES_PER_POSITION;
        assert!(budget < 2 * whole.state, "the budget holds one whole-context reservation, not two");
        let mut bench = Bench::new(model, budget);
        let (a, b) = (bench.submit(prompt(0, 20), 0, false), bench.submit(prompt(1, 20), 0, true));
        bench.step();
        // Both admitted in the first iteration, on their prompt and a growth step.
        assert_eq!(bench.scheduler.running.len(), 2);
        let first = bench.needs_at(20 + KeysValues::GROWTH_STEP, 20);
        assert_eq!(first.state, 512 * BYTES_PER_POSITION, "276 positions, in the buffers' 256-position steps");
        for running in &bench.scheduler.running {
            assert_eq!(running.reserved.state, first.state);
            assert_eq!(running.growth.map(|g| g.positions), Some(20 + KeysValues::GROWTH_STEP));
        }
        // Before, each reserved the whole context: the second waited, and would wait now
        // beside the two short reservations.
        assert!(bench.scheduler.in_use_with(Some(whole)) > budget);
        // Past the first reservation, both have grown by a step, and still run together.
        for _ in 0..300 {
            bench.step();
        }
        assert_eq!(bench.scheduler.running.len(), 2);
        for running in &bench.scheduler.running {
            let growth = running.growth.expect("limitless");
            assert_eq!(growth.positions, 20 + 2 * KeysValues::GROWTH_STEP);
            assert_eq!(running.reserved.state, bench.needs_at(growth.positions, 20).state);
            assert!(!running.waits_for_memory);
        }
        let Outcome { tokens: a_tokens, reason: a_reason, queued: a_queued, .. } = outcome(&a);
        let Outcome { tokens: b_tokens, reason: b_reason, queued: b_queued, .. } = outcome(&b);
        assert!(!a_queued && !b_queued, "neither waited");
        assert_eq!((a_reason, b_reason), (None, None));
        assert!(a_tokens.len() >= 290 && b_tokens.len() >= 290, "{} {}", a_tokens.len(), b_tokens.len());
    }

    /// A request with a token limit keeps its worst case, reserved whole at admission.
    #[test]
    fn a_limited_requests_reservation_is_its_worst_case_unchanged() {
        let (_dir, model) = long_context_llama();
        let mut bench = Bench::new(model, 1 << 30);
        let events = bench.submit(prompt(0, 30), 600, false);
        bench.step();
        let whole = bench.needs_at(30 + 600, 30);
        assert_eq!(whole.state, 768 * BYTES_PER_POSITION);
        for _ in 0..300 {
            let running = &bench.scheduler.running[0];
            assert!(running.growth.is_none());
            assert_eq!((running.reserved.state, running.reserved.activations), (whole.state, whole.activations));
            bench.step();
        }
        bench.run(400);
        assert_eq!(outcome(&events).reason, Some(StopReason::MaxTokens));
    }

    /// Greedy tokens of `prompt`, `n` of them, on a scheduler with room to spare.
    fn alone(model: ReadyModel, prompt: Vec<u32>, n: usize, penalized: bool) -> Vec<u32> {
        let mut bench = Bench::new(model, 1 << 30);
        let events = bench.submit(prompt, n as u32, penalized);
        bench.run(n + 10);
        let Outcome { tokens, reason, .. } = outcome(&events);
        assert_eq!(reason, Some(StopReason::MaxTokens));
        tokens
    }

    /// Two limitless replies outgrow a budget of five growth steps: the older grows, the newer
    /// waits (skipping steps, its state kept); when neither can step, the newer ends
    /// (`Context`), the older grows into what it held, and ends the same way once it alone
    /// outgrows the budget. Nothing hangs, no state outgrows its reservation, and each reply
    /// is, token for token, the greedy reply a request with a token limit gives alone.
    #[test]
    fn limitless_replies_that_outgrow_the_budget_end_and_keep_their_greedy_tokens() {
        let (_dir, model) = long_context_llama();
        let step_bytes = KeysValues::GROWTH_STEP * BYTES_PER_POSITION;
        let activations = worst_case(&model, 20, 20, CHUNK).activations;
        let budget = 5 * step_bytes + activations;
        let mut bench = Bench::new(model, budget);
        let (a, b) = (bench.submit(prompt(0, 20), 0, false), bench.submit(prompt(1, 20), 0, true));
        let mut b_waited = false;
        let mut most_held = 0;
        for _ in 0..3000 {
            if bench.scheduler.is_idle() {
                break;
            }
            bench.step();
            let in_use = bench.scheduler.in_use_with(None);
            assert!(in_use <= budget, "{in_use} reserved against {budget}");
            b_waited |= bench.scheduler.running.iter().skip(1).any(|r| r.waits_for_memory);
            most_held = most_held.max(bench.scheduler.running.iter().map(|r| r.reserved.state).sum::<usize>());
        }
        assert!(bench.scheduler.is_idle(), "still running: a deadlock");
        assert!(b_waited, "the newer reply never waited to grow");
        assert!(most_held <= 5 * step_bytes);
        let Outcome { tokens: a_tokens, reason: a_reason, .. } = outcome(&a);
        let Outcome { tokens: b_tokens, reason: b_reason, .. } = outcome(&b);
        assert_eq!((a_reason, b_reason), (Some(StopReason::Context), Some(StopReason::Context)));
        // The newer ended at its first reservation (276 positions: 2 steps, while the older held
        // 3); the older at 5 steps (1,280 positions: it never asked for a sixth before 1,044).
        assert!((240..=256).contains(&b_tokens.len()), "{}", b_tokens.len());
        assert!((1000..=1024).contains(&a_tokens.len()), "{}", a_tokens.len());
        let (_dir, model) = long_context_llama();
        assert_eq!(a_tokens, alone(model, prompt(0, 20), a_tokens.len(), false));
        let (_dir, model) = long_context_llama();
        assert_eq!(b_tokens, alone(model, prompt(1, 20), b_tokens.len(), true));
    }

    /// Every kind of state through the growth path: windows (Gemma 3), recurrent state
    /// (Qwen 3.5, with its multi-token-prediction head proposing), convolutions (LFM2),
    /// quantized keys/values, prompt lookup (proposals verified beyond the reply), a draft
    /// model (whose own state follows the row's), and a denoising model (a canvas at a time). A limitless reply under a budget of its prompt and
    /// three growth steps grows twice, never holds more than its reservation, ends with
    /// `Context`, and is token for token the reply a request with a token limit gives alone.
    #[test]
    fn every_state_kind_grows_and_ends_as_the_limited_reply() {
        use crate::runtime::request::PromptLookup;
        use crate::state::KvQuantization;
        let quantized = LoadOptions { kv_quantization: Some(KvQuantization::new(8, 32).unwrap()), ..Default::default() };
        let lookup = Speculative::PromptLookup(PromptLookup { ngram: 2, max_draft: 6 });
        // The tiny llama drafts for itself (it shares its own vocabulary).
        let drafting = Speculative::DraftModel { model: DRAFT, max_draft: 4 };
        let cases: [(&str, u32, LoadOptions, Option<Speculative>); 7] = [
            ("gemma3", 320, LoadOptions::default(), None),
            ("qwen3_5_mtp", 448, LoadOptions::default(), Some(Speculative::Mtp { max_draft: 2 })),
            ("lfm2", 384, LoadOptions::default(), None),
            ("kv_quant", 384, quantized, None),
            ("llama", 384, LoadOptions::default(), Some(lookup)),
            ("llama", 384, LoadOptions::default(), Some(drafting)),
            ("diffusion_gemma", 400, LoadOptions::default(), None),
        ];
        for (name, vocab, options, speculative) in cases {
            let prompt: Vec<u32> = (0..20).map(|i| 3 + (i * 5) % (vocab - 3)).collect();
            let (_dir, model) = long_context(name, 4096, &options);
            let first = worst_case(&model, 20 + KeysValues::GROWTH_STEP, 20, CHUNK);
            let budget = worst_case(&model, 20 + 3 * KeysValues::GROWTH_STEP, 20, CHUNK);
            let budget = budget.state + first.activations;
            let mut bench = Bench::new(model, budget);
            let _draft_dir = bench.load_draft(speculative, name, &options);
            let events = bench.submit_speculating(prompt.clone(), 0, false, speculative);
            let mut grown = 0;
            for _ in 0..3000 {
                if bench.scheduler.is_idle() {
                    break;
                }
                let before = bench.scheduler.running.first().and_then(|r| r.growth).map(|g| g.positions);
                bench.step();
                let after = bench.scheduler.running.first().and_then(|r| r.growth).map(|g| g.positions);
                grown += (before.is_some() && after > before) as usize;
                assert!(bench.scheduler.in_use_with(None) <= budget, "{name}");
            }
            assert!(bench.scheduler.is_idle(), "{name}: still running");
            assert_eq!(grown, 2, "{name}");
            let Outcome { tokens, reason, speculative: speculated, proposed, .. } = outcome(&events);
            assert_eq!(reason, Some(StopReason::Context), "{name}");
            assert_eq!(speculated, speculative.map(|s| s.name()), "{name}: the plan declined speculative decoding");
            assert_eq!(proposed > 0, speculative.is_some(), "{name}: {proposed} proposed");
            assert!(tokens.len() > 2 * KeysValues::GROWTH_STEP, "{name}: {}", tokens.len());
            let (_dir, model) = long_context(name, 4096, &options);
            let mut bench = Bench::new(model, 1 << 30);
            let _draft_dir = bench.load_draft(speculative, name, &options);
            let limited = bench.submit_speculating(prompt, tokens.len() as u32, false, speculative);
            bench.run(3000);
            let Outcome { tokens: alone, reason, .. } = outcome(&limited);
            assert_eq!(reason, Some(StopReason::MaxTokens), "{name}");
            assert_eq!(tokens, alone, "{name}: the limitless reply differs from the limited one");
        }
    }

    /// The figure: how many limitless requests start at once under a fixed budget, and what
    /// they reserve, before (the whole context each: what a request limited to the rest of the
    /// context reserves, which this checks is the old reservation) and after (prompt and a
    /// growth step), on a long-context model: the tiny llama at 65,536 positions and the
    /// default model (SmolLM2-135M, 8,192). Then 32 tokens each, and the memory MLX holds for
    /// them beside what was reserved.
    ///
    ///   cargo test -p confab-engine --lib limitless_admission_figure -- --ignored --nocapture
    #[test]
    #[ignore = "a figure, not a check: prints the before and after"]
    fn limitless_admission_figure() {
        const REQUESTS: usize = 16;
        const PROMPT: u32 = 512;
        let smollm2 = confab_paths::DefaultModel::manifest().path(&confab_paths::AppPaths::from_env());
        let (_dir, llama) = long_context_llama();
        let models: [(&str, ReadyModel, usize); 2] = [
            ("tiny llama, 65,536 positions", llama, 64 << 20),
            ("SmolLM2-135M, 8,192 positions", ReadyModel::load(&smollm2, &LoadOptions::default(), &mut |_| {}).unwrap(), 1 << 30),
        ];
        let mb = |bytes: usize| format!("{:.1}", bytes as f64 / 1e6);
        println!(
            "| model | budget MB | rule | admitted at once (of {REQUESTS}; {DEFAULT_MAX_ROWS} rows at most) | the budget would hold | \
             reserved MB each | reserved MB in all | held after 32 tokens MB |"
        );
        println!("|---|---:|---|---:|---:|---:|---:|---:|");
        for (name, model, budget) in models {
            let context = model.config().max_position;
            let vocab = model.config().vocab_size as u32;
            let mut bench = Bench::new(model, budget);
            bench.chunk = PROMPT as usize;
            let mut admitted = [0usize; 2];
            for (k, rule) in ["before: the whole context", "after: prompt + a growth step"].into_iter().enumerate() {
                let limit = if k == 0 { context as u32 - PROMPT } else { 0 };
                let request = Request::new(MODEL, Prompt::Tokens(vec![]), SamplingParams { max_tokens: limit, ..SamplingParams::greedy() });
                let expected = if k == 0 { context } else { PROMPT as usize + KeysValues::GROWTH_STEP };
                assert_eq!(generate::positions_reserved(bench.model(), &request, PROMPT as usize), expected);
                let _ = mlx_rs::memory::clear_cache();
                let before = mlx_rs::memory::active_memory().unwrap_or(0);
                let events: Vec<Receiver<Event>> = (0..REQUESTS as u32)
                    .map(|r| bench.submit((0..PROMPT).map(|i| 3 + (i * 7 + r * 13) % (vocab - 3)).collect(), limit, false))
                    .collect();
                bench.step();
                admitted[k] = bench.scheduler.running.len();
                let each = bench.scheduler.running[0].reserved;
                let would_hold = (budget - each.activations) / each.state;
                let each = each.state;
                let all: usize = bench.scheduler.running.iter().map(|r| r.reserved.state).sum();
                // Every admitted row reads its prompt and writes 32 tokens.
                let mut tokens = [0; REQUESTS];
                while tokens[..admitted[k]].iter().any(|&n| n < 32) {
                    bench.step();
                    for (n, events) in tokens.iter_mut().zip(&events) {
                        *n += events.try_iter().filter(|e| matches!(e, Event::Token { .. })).count();
                    }
                }
                let held = mlx_rs::memory::active_memory().unwrap_or(0).saturating_sub(before);
                println!(
                    "| {name} | {} | {rule} | {} | {would_hold} | {} | {} | {} |",
                    mb(budget),
                    admitted[k],
                    mb(each),
                    mb(all),
                    mb(held)
                );
                for cancel in std::mem::take(&mut bench.cancels) {
                    cancel.store(true, Ordering::Relaxed);
                }
                bench.run(10);
            }
            println!("| {name} | | after / before | {:.1}× | | | | |", admitted[1] as f64 / admitted[0] as f64);
        }
    }

    /// A limitless request is refused at once only when its prompt and a growth step could
    /// not fit, not for the whole context.
    #[test]
    fn a_limitless_request_is_refused_only_when_its_first_reservation_cannot_fit() {
        let (_dir, model) = long_context_llama();
        let first = worst_case(&model, 20 + KeysValues::GROWTH_STEP, 20, CHUNK);
        let mut bench = Bench::new(model, first.state + first.activations);
        let fits = bench.submit(prompt(0, 20), 0, false);
        bench.step();
        assert_eq!(bench.scheduler.running.len(), 1);
        drop(fits);
        let long = bench.submit(prompt(1, 600), 0, false);
        let Ok(Event::Error(EngineError::NeverFits(shortfall))) = long.try_recv() else { panic!("refused as never fitting") };
        assert_eq!((shortfall.positions, shortfall.reply_limited), (856, false));
        // A lower token limit would not help a request without one: the prompt is what to shorten.
        assert!(!shortfall.remedies().contains(&Remedy::LowerMaxTokens));
        assert!(!shortfall.describe(&|r| r.to_string()).contains("token limit"), "{}", shortfall.describe(&|r| r.to_string()));
    }
}
