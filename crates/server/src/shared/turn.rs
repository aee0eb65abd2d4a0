//! A turn on the server: the chat-turn layer's `ReplyReader` over a running request, read from
//! async code, and the layer's errors in the API error shape. What a turn is (tools and tool
//! choice, thinking and effort, sampling, the reply read back) is `confab_turn`'s; each API
//! only translates its wire shape to a `ChatTurn` and renders the `TurnEvent`s.

use std::collections::VecDeque;

use confab_engine::{Plan, StopReason, Usage};
pub use confab_turn::{ChatTurn, ToolChoice, ToolDefinition, Tools, TurnEvent};
use confab_turn::{ReplyReader, TurnError, WholeReply};

use crate::shared::error::ApiError;
use crate::shared::running::Running;

/// A running reply, read through the model's reply parser: only the events the APIs render
/// (reasoning, text, calls, the end) come out.
pub struct Turn {
    running: Running,
    reader: ReplyReader,
    ready: VecDeque<TurnEvent>,
}

impl Turn {
    pub fn new(running: Running, model: &confab_engine::ModelInfo, tools: &Tools) -> Self {
        let mut reader = ReplyReader::new(model, tools).chunk_per_canvas();
        // The plan came before the reply (`running::start`): it decides how canvases are read.
        if let Some(plan) = running.plan() {
            reader.read(confab_engine::Event::Plan(plan.clone()));
        }
        Self { running, reader, ready: VecDeque::new() }
    }

    /// The next event; `None` after `Done` (or an error).
    pub async fn next(&mut self) -> Option<Result<TurnEvent, ApiError>> {
        loop {
            match self.ready.pop_front() {
                Some(TurnEvent::Failed(error)) => return Some(Err(error.into())),
                Some(TurnEvent::Queued { .. } | TurnEvent::Plan(_) | TurnEvent::Canvas(_)) => continue,
                Some(event) => return Some(Ok(event)),
                None if self.reader.ended() => return None,
                None => {}
            }
            let events = match self.running.next().await {
                Some(event) => self.reader.read(event),
                None => self.reader.stopped(),
            };
            self.ready.extend(events);
        }
    }

    /// The engine's plan for the request (prompt tokens, and those the cache serves).
    pub fn plan(&self) -> Option<&Plan> {
        self.running.plan()
    }

    /// Reads the turn to its end.
    pub async fn whole(mut self) -> Result<(WholeReply, StopReason, Usage), ApiError> {
        let mut whole = WholeReply::default();
        while let Some(event) = self.next().await {
            let event = event?;
            if let TurnEvent::Done { reason, usage, .. } = event {
                return Ok((whole, reason, usage));
            }
            whole.add(&event);
        }
        Err(confab_engine::EngineError::EngineStopped.into())
    }
}

/// The layer's refusals in the API error shape, naming the field at fault as Chat Completions,
/// Responses and Messages all call it (`tools`, `tool_choice`; an API whose field has another
/// name maps that error itself).
impl From<TurnError> for ApiError {
    fn from(error: TurnError) -> Self {
        let message = error.to_string();
        match error {
            TurnError::Engine(error) => error.into(),
            TurnError::TooManyTools { .. } => ApiError::invalid(Some("tools"), message),
            TurnError::ToolName { index, .. } | TurnError::DuplicateTool { index, .. } | TurnError::ToolParameters { index } => {
                ApiError::invalid(Some(&format!("tools[{index}]")), message)
            }
            TurnError::UnknownChoice { .. } | TurnError::ChoiceWithoutTools | TurnError::CallAndFormat => {
                ApiError::invalid(Some("tool_choice"), message)
            }
            TurnError::Switch { .. } => ApiError::invalid(Some("chat_template_kwargs"), message),
            TurnError::ReplyTokens { .. } => ApiError::invalid(Some("max_tokens"), message),
        }
    }
}
