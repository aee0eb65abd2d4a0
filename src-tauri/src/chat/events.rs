//! What a reply sends to the window and how it ends: shared by local replies (local_model.rs) and
//! replies through a remote provider (remote_model.rs).

use confab_engine::{CanvasUpdate, Plan, QueueReason};
use confab_store::{Message, MessageId, ReplyEnd, ReplySource, ReplyStats, ToolCall};

use super::views::MessageView;
use crate::tools::call::ModelCall;

#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
/// Events of one reply, in order: `started`, `sources` (when documents were searched), `plan`, then a thinking model's `reasoning`* and
/// `thought`, `token`*, then `done` or `error`. A denoising model's reply sends `canvas`
/// events as each canvas forms, and one when it is finished (after its tokens). A reply that calls tools has rounds: after a
/// round's text, a `tool` event each time one of its calls is saved or changes (awaiting the
/// user's decision, running, done), then the next round's `plan`, `reasoning`, `token`s.
pub enum ReplyEvent {
    /// The user's message (new, or the edited copy) and the empty reply now streaming.
    /// Boxed: the largest event, sent once per reply.
    Started {
        user: Box<MessageView>,
        reply: Box<Message>,
    },
    /// The document passages the reply's prompt was given (after `started`, when documents
    /// too large for the context were searched): its citations, as stored with it.
    Sources {
        reply: MessageId,
        sources: Vec<ReplySource>,
    },
    Plan {
        plan: Plan,
    },
    /// Instead of `plan` when a provider writes the reply.
    Remote {
        plan: RemotePlan,
    },
    /// More of a thinking model's reasoning, apart from its answer; saved before it is sent, as
    /// `token`s are, so the window never shows what a kill would lose.
    Reasoning {
        text: String,
    },
    /// The model stopped thinking (its answer begins, or the reply ends) after this long.
    Thought {
        reasoning_ms: u64,
    },
    /// More of the answer, saved before it is sent.
    Token {
        text: String,
    },
    /// A denoising model's canvas as a step left it (its pieces: model text, shown as plain
    /// text), or finished: its text came as `token`s just before.
    Canvas {
        canvas: CanvasUpdate,
    },
    /// The reply waits to start, before its plan: for memory (the running replies hold what
    /// Settings › Storage › Memory for replies allows) or for a free row; `ahead` wait before it.
    Queued {
        reason: QueueReason,
        ahead: usize,
    },
    /// A tool call of the reply, as saved now (the window replaces the one at its position).
    /// Boxed: its arguments and result may be long.
    Tool {
        call: Box<ToolCall>,
    },
    /// The reply as stored: complete or stopped, with its stats.
    Done {
        reply: Message,
    },
    /// The reply (kept, with its text so far) when it exists, and why it failed.
    Error {
        message: String,
        reply: Option<Message>,
    },
}

impl ReplyEvent {
    pub fn started(user: MessageView, reply: Message) -> Self {
        ReplyEvent::Started { user: Box::new(user), reply: Box::new(reply) }
    }
}

/// How a reply (or one round of it) ended, its stats when it got that far, and the tools the
/// model called at its end.
pub struct Outcome {
    pub end: ReplyEnd,
    pub stats: Option<ReplyStats>,
    pub calls: Vec<ModelCall>,
}

impl Outcome {
    pub fn ended(end: ReplyEnd) -> Outcome {
        Outcome { end, stats: None, calls: Vec::new() }
    }
}

/// Where a provider's model is writing the reply, for "Details".
#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct RemotePlan {
    pub provider: String,
    /// `scheme://host:port`.
    pub server: String,
    pub model: String,
    /// Media sent as content parts.
    pub images: usize,
    pub clips: usize,
}
