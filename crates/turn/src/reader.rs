//! A reply read back: the engine's events through the model's own reply parser, as reasoning,
//! text and tool calls (each with an id), with the engine's plan, queueing, canvases and end
//! passed along. The app, the server's APIs and the CLI read every reply here.

use std::sync::atomic::{AtomicU64, Ordering};

use confab_engine::EngineError;
use confab_engine::{CanvasUpdate, Event, ModelInfo, Plan, QueueReason, StopReason, Timings, Usage};
use confab_engine::{ReplyFormat, ReplyParser, ReplyPart};
use serde_json::Value;

use crate::tools::Tools;

/// What a reply gives, in order.
#[derive(Debug)]
pub enum TurnEvent {
    /// The request waits for memory or a free row, before its plan.
    Queued {
        reason: QueueReason,
        ahead: usize,
    },
    /// How the engine means to run the turn (the prompt, what the cache serves).
    Plan(Plan),
    Reasoning(String),
    Text(String),
    ToolCall {
        id: String,
        name: String,
        arguments: Value,
    },
    /// A denoising model's canvas, as a step left it.
    Canvas(CanvasUpdate),
    Done {
        reason: StopReason,
        usage: Usage,
        timings: Timings,
    },
    /// The reply failed; what it gave before stays given.
    Failed(EngineError),
}

/// Reads one reply's events.
pub struct ReplyReader {
    parser: ReplyParser,
    /// Whether a denoising reply's parts are held until their canvas is finished (a client
    /// then gets a chunk per canvas rather than a canvas's tokens one by one).
    chunk_per_canvas: bool,
    held: Option<Vec<TurnEvent>>,
    ended: bool,
}

impl ReplyReader {
    /// A reader for a reply of `model` to a turn with `tools`: without tools offered, call
    /// markup stays text.
    pub fn new(model: &ModelInfo, tools: &Tools) -> Self {
        Self::for_format(model.reply_format, tools)
    }

    /// A reader for replies in `format` (how a model marks reasoning and calls).
    pub fn for_format(format: ReplyFormat, tools: &Tools) -> Self {
        let definitions = tools.offered().then(|| tools.definitions.clone());
        Self { parser: ReplyParser::new(format, false, definitions), chunk_per_canvas: false, held: None, ended: false }
    }

    /// Holds a denoising reply's text until each canvas is finished.
    pub fn chunk_per_canvas(mut self) -> Self {
        self.chunk_per_canvas = true;
        self
    }

    /// Whether the reply has ended (done or failed).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// What `event` completes.
    pub fn read(&mut self, event: Event) -> Vec<TurnEvent> {
        let mut out = Vec::new();
        match event {
            Event::Queued { reason, ahead } => out.push(TurnEvent::Queued { reason, ahead }),
            Event::Plan(plan) => {
                if self.chunk_per_canvas && plan.method == "denoising" {
                    self.held = Some(Vec::new());
                }
                out.push(TurnEvent::Plan(plan));
            }
            Event::Token { text, .. } | Event::Text(text) => {
                let parts = self.parser.push(&text);
                self.take(parts, &mut out);
            }
            Event::Canvas(canvas) => {
                let finished = canvas.finished;
                if self.held.is_none() {
                    out.push(TurnEvent::Canvas(canvas));
                }
                if finished {
                    self.release(&mut out);
                }
            }
            Event::Done { reason, usage, timings } => {
                self.flush(&mut out);
                out.push(TurnEvent::Done { reason, usage, timings });
                self.ended = true;
            }
            Event::Error(error) => {
                self.flush(&mut out);
                out.push(TurnEvent::Failed(error));
                self.ended = true;
            }
        }
        out
    }

    /// The engine's events ended without an end: it stopped.
    pub fn stopped(&mut self) -> Vec<TurnEvent> {
        if self.ended {
            return vec![];
        }
        self.read(Event::Error(EngineError::EngineStopped))
    }

    fn flush(&mut self, out: &mut Vec<TurnEvent>) {
        let parts = self.parser.finish();
        self.take(parts, out);
        self.release(out);
    }

    fn take(&mut self, parts: Vec<ReplyPart>, out: &mut Vec<TurnEvent>) {
        for part in parts {
            let event = match part {
                ReplyPart::Reasoning(text) => TurnEvent::Reasoning(text),
                ReplyPart::Content(text) => TurnEvent::Text(text),
                ReplyPart::ToolCall(call) => TurnEvent::ToolCall { id: call_id(), name: call.name, arguments: call.arguments },
            };
            match self.held.as_mut() {
                Some(held) => held.push(event),
                None => out.push(event),
            }
        }
    }

    /// A finished canvas's held parts, as one text and one reasoning event where they follow
    /// each other.
    fn release(&mut self, out: &mut Vec<TurnEvent>) {
        let Some(held) = self.held.as_mut() else { return };
        let mut released: Vec<TurnEvent> = Vec::new();
        for event in held.drain(..) {
            match (released.last_mut(), event) {
                (Some(TurnEvent::Text(text)), TurnEvent::Text(more)) => text.push_str(&more),
                (Some(TurnEvent::Reasoning(text)), TurnEvent::Reasoning(more)) => text.push_str(&more),
                (_, event) => released.push(event),
            }
        }
        out.extend(released);
    }
}

/// A call id no other call of this process had: clients match results to calls by it.
pub fn call_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let started = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    format!("call_{started:x}{:06x}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A reply's whole content, read to its end.
#[derive(Debug, Default)]
pub struct WholeReply {
    pub reasoning: String,
    pub text: String,
    /// (id, name, arguments), in order.
    pub calls: Vec<(String, String, Value)>,
}

impl WholeReply {
    /// Adds what an event gives; the end and the engine's other events are the caller's.
    pub fn add(&mut self, event: &TurnEvent) {
        match event {
            TurnEvent::Reasoning(text) => self.reasoning.push_str(text),
            TurnEvent::Text(text) => self.text.push_str(text),
            TurnEvent::ToolCall { id, name, arguments } => self.calls.push((id.clone(), name.clone(), arguments.clone())),
            _ => {}
        }
    }
}
