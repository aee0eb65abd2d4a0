//! A request on the engine, seen from async code: the engine's events on a tokio channel, the
//! count of requests running, and cancellation when the client goes away.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use confab_engine::{Engine, Event, Plan, Request};
use tokio::sync::mpsc;

use super::error::ApiError;
use crate::ServedModel;

/// Events buffered between the engine and a slow client.
const EVENT_BUFFER: usize = 256;

/// A request the engine has accepted (its prompt and settings passed the checks).
pub struct Running {
    /// How the engine means to run it (the prompt's length and what the cache serves), known
    /// before the first token: Messages reports input tokens when its stream opens.
    plan: Option<Plan>,
    first: Option<Event>,
    events: mpsc::Receiver<Event>,
    /// Dropped with the response (a client that disconnects drops it): stops the generation.
    _cancel: CancelOnDrop,
}

struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Counts a request from its start until the engine is done with it (a cancelled one counts
/// until the engine has stopped it).
struct ActiveGuard(Arc<AtomicUsize>);

impl ActiveGuard {
    fn new(active: Arc<AtomicUsize>) -> Self {
        active.fetch_add(1, Ordering::Relaxed);
        Self(active)
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Queues `request` on `model` and waits for the engine's first event, so that a request the
/// engine refuses (bad settings, an unreadable image, a prompt over the context) is an error
/// response rather than a stream that fails. The model is held until the engine is done with
/// the request, so that its pool does not unload it meanwhile.
pub async fn start(engine: &Engine, model: &ServedModel, request: Request, active: Arc<AtomicUsize>) -> Result<Running, ApiError> {
    let held = model.clone();
    let cancel = Arc::new(AtomicBool::new(false));
    let generation = engine.generate_cancellable(request, cancel.clone());
    let active = ActiveGuard::new(active);
    let (sender, mut events) = mpsc::channel(EVENT_BUFFER);
    let stop = cancel.clone();
    // The engine's channel blocks; a blocking thread forwards it. It drains the generation to
    // its end even after the client left, so the count stays true.
    tokio::task::spawn_blocking(move || {
        let (_active, _held) = (active, held);
        let mut listening = true;
        for event in generation {
            if listening && sender.blocking_send(event).is_err() {
                stop.store(true, Ordering::Relaxed);
                listening = false;
            }
        }
    });
    let cancel = CancelOnDrop(cancel);
    // A request that waits for memory or a free row says so first; its plan follows.
    let mut first = events.recv().await;
    while let Some(Event::Queued { .. }) = first {
        first = events.recv().await;
    }
    match first {
        Some(Event::Error(e)) => Err(ApiError::from(e)),
        // The plan comes first.
        Some(Event::Plan(plan)) => Ok(Running { plan: Some(plan), first: None, events, _cancel: cancel }),
        Some(other) => Ok(Running { plan: None, first: Some(other), events, _cancel: cancel }),
        None => Err(ApiError::from(confab_engine::EngineError::EngineStopped)),
    }
}

impl Running {
    pub fn plan(&self) -> Option<&Plan> {
        self.plan.as_ref()
    }

    /// The next event; `None` once the generation has ended.
    pub async fn next(&mut self) -> Option<Event> {
        match self.first.take() {
            Some(event) => Some(event),
            None => self.events.recv().await,
        }
    }
}
