//! The scheduler: every request the engine thread is serving, and what each iteration runs.
//!
//! Requests wait in arrival order until they fit (a row limit and a memory budget), then run
//! as rows. What a request needs is its state at its longest (prompt plus every token it may
//! generate, in its keys/values precision, windows capped, recurrent state measured) plus
//! one prefill chunk's activations (`model::memory`); the budget is `BatchOptions::memory_budget`.
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
    /// beside the others'; one that could never fit is refused.
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
    queued_at: Instant,
    /// Whether the log has said why it waits.
    wait_logged: bool,
    /// Whether the caller has been told it waits (`Event::Queued`).
    told: bool,
}

struct Running {
    model: ModelId,
    row: Row,
    /// What admission set aside for it.
    reserved: Needs,
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
        let positions = generate::positions_needed(model, &request, prepared.ids.len());
        let needs = worst_case(model, positions, prepared.ids.len(), request.chunk_size);
        let budget = self.budget_bytes(models);
        if needs.state + needs.activations > budget {
            let error = never_fits(model, positions, needs, budget);
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
            queued_at,
            wait_logged: false,
            told: false,
        });
    }

    /// One iteration: admit what fits, one prefill chunk, one decode step for every decoding
    /// row, then retire the rows that stopped.
    pub fn step(&mut self, models: &HashMap<ModelId, ReadyModel>, shared: &mut Shared) {
        self.admit(models, shared);
        self.bound_cache(self.budget_bytes(models));

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
            if r.row.prefilled() && r.row.stopped.is_none() && !by_model.contains(&r.model) {
                by_model.push(r.model);
            }
        }
        for id in by_model {
            let mut rows: Vec<&mut Row> = self
                .running
                .iter_mut()
                .filter(|r| r.model == id && r.row.prefilled() && r.row.stopped.is_none())
                .map(|r| &mut r.row)
                .collect();
            // Rows may speculate with a draft model of their own.
            let draft_of = |d: ModelId| models.get(&d);
            let result = match models.get(&id) {
                Some(model) => generate::decode_step(model, &draft_of, &mut rows),
                None => Err(unloaded()),
            };
            if let Err(e) = result {
                let (failed, kept) = std::mem::take(&mut self.running)
                    .into_iter()
                    .partition(|r| r.model == id && r.row.prefilled() && r.row.stopped.is_none());
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

    /// Starts waiting requests in order while they fit; a request cancelled while it waited
    /// ends without running.
    fn admit(&mut self, models: &HashMap<ModelId, ReadyModel>, shared: &mut Shared) {
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
            if full || in_use > budget {
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
                        if full { "a free row" } else { "memory" }
                    );
                }
                break;
            }
            let Waiting { model, request, prepared, cancel, events, needs, queued_at, wait_logged, .. } =
                self.waiting.pop_front().expect("a waiting request");
            // In bytes, for bench/memory.py to set beside what it measures.
            tracing::info!(
                state_bytes = needs.state,
                activation_bytes = needs.activations,
                budget_bytes = budget,
                waited_ms = if wait_logged { queued_at.elapsed().as_millis() as u64 } else { 0 },
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
                Ok(row) => self.running.push(Running { model, row, reserved: needs }),
                Err(e) => drop(events.send(Event::Error(e))),
            }
        }
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
fn never_fits(model: &ReadyModel, positions: usize, needs: Needs, budget: usize) -> EngineError {
    EngineError::NeverFits(MemoryShortfall {
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
