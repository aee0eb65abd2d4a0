//! The scheduler: every request the engine thread is serving, and what each iteration runs.
//!
//! Requests wait in arrival order until they fit (a row limit and a budget for the state
//! they may come to hold), then run as rows. Each iteration runs one prefill chunk of the
//! oldest row still reading its prompt and one decode step for every row that is decoding
//! (one batched forward per model), so a long prompt slows the others' decoding down but
//! never stops it. Rows join and leave between iterations; cancellation, stop strings and
//! token limits are checked for every row at every step.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;

use crate::error::EngineError;
use crate::runtime::generate::{self, Row, Shared};
use crate::runtime::prepared::Prepared;
use crate::runtime::ready_model::ReadyModel;
use crate::runtime::request::{Event, ModelId, Request, StopReason, Timings, Usage};
use crate::state::{KeysValues, StateKind};

/// How many requests run at once, and how much state they may hold together.
#[derive(Debug, Clone, Default)]
pub struct BatchOptions {
    /// Rows decoded together at most (default 16); later requests wait.
    pub max_rows: Option<usize>,
    /// Bytes of per-sequence state (keys and values) the running requests may come to hold
    /// together (default: a quarter of memory). A request is admitted when its worst case
    /// (prompt plus every token it may generate) fits beside the others'; one that could
    /// never fit is refused.
    pub state_budget: Option<usize>,
}

const DEFAULT_MAX_ROWS: usize = 16;

struct Waiting {
    model: ModelId,
    request: Request,
    prepared: Prepared,
    cancel: Arc<AtomicBool>,
    events: Sender<Event>,
    /// Its worst-case state, in bytes.
    needs: usize,
}

struct Running {
    model: ModelId,
    row: Row,
    /// What admission set aside for it.
    reserved: usize,
}

pub struct Scheduler {
    waiting: VecDeque<Waiting>,
    running: Vec<Running>,
    max_rows: usize,
    budget: usize,
}

impl Scheduler {
    pub fn new(options: &BatchOptions) -> Self {
        let budget = options.state_budget.unwrap_or((crate::device::physical_memory() / 4) as usize);
        Self { waiting: VecDeque::new(), running: vec![], max_rows: options.max_rows.unwrap_or(DEFAULT_MAX_ROWS).max(1), budget }
    }

    /// Nothing running or waiting.
    pub fn is_idle(&self) -> bool {
        self.waiting.is_empty() && self.running.is_empty()
    }

    /// A new request: checked now (a bad one fails at once), then queued.
    pub fn submit(&mut self, model: &ReadyModel, shared: &Shared, mut request: Request, cancel: Arc<AtomicBool>, events: Sender<Event>) {
        let prepared = match generate::check(model, &mut request, shared.limits) {
            Ok(p) => p,
            Err(e) => return drop(events.send(Event::Error(e))),
        };
        let positions = generate::positions_needed(model, &request, prepared.ids.len());
        let needs = state_bytes(model, positions);
        if needs > self.budget {
            let error = EngineError::invalid(
                "max_tokens",
                format!(
                    "this request may need {} of memory for {positions} positions, more than the {} the engine allows for running requests; lower max_tokens or shorten the prompt",
                    megabytes(needs),
                    megabytes(self.budget)
                ),
            );
            tracing::warn!("refused a request: {error}");
            return drop(events.send(Event::Error(error)));
        }
        self.waiting.push_back(Waiting { model: request.model, request, prepared, cancel, events, needs });
    }

    /// One iteration: admit what fits, one prefill chunk, one decode step for every decoding
    /// row, then retire the rows that stopped.
    pub fn step(&mut self, models: &HashMap<ModelId, ReadyModel>, shared: &mut Shared) {
        self.admit(models, shared);

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
            // A row stepping alone may speculate with a draft model.
            let draft = match &rows[..] {
                [row] => row.draft_model().and_then(|d| models.get(&d)),
                _ => None,
            };
            let result = match models.get(&id) {
                Some(model) => generate::decode_step(model, draft, &mut rows),
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
        while let Some(next) = self.waiting.front() {
            let reserved: usize = self.running.iter().map(|r| r.reserved).sum();
            if self.running.len() >= self.max_rows || reserved + next.needs > self.budget {
                break;
            }
            let Waiting { model, request, prepared, cancel, events, needs } = self.waiting.pop_front().expect("a waiting request");
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

/// The most state a sequence of `positions` holds (`model::state_bytes`), its full-attention
/// layers' keys and values counted in their growth steps.
fn state_bytes(model: &ReadyModel, positions: usize) -> usize {
    let config = model.config();
    let element = match model.info.dtype.as_str() {
        "bfloat16" | "float16" => 2,
        _ => 4,
    };
    let kinds = model.state_kinds().into_iter().map(|kind| match kind {
        StateKind::Window { size } => StateKind::Window { size: size.min(positions) },
        other => other,
    });
    crate::model::state_bytes(kinds, KeysValues::capacity_for(positions), config.num_kv_heads, config.head_dim, element) as usize
}

fn megabytes(bytes: usize) -> String {
    format!("{:.0} MB", bytes as f64 / 1e6)
}

fn unloaded() -> EngineError {
    EngineError::invalid("model", "that model was unloaded; load it again")
}
