//! The Messages API's endpoints, `POST /v1/messages` and `POST /v1/messages/count_tokens`: the
//! same turn as Chat Completions (`shared/turn.rs`), shaped as Anthropic's API, with every error in
//! Anthropic's shape.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use confab_engine::SamplingParams;
use serde_json::json;

use super::render::{AnthropicError, MessageReply, MessageStream, NamedEvent};
use super::request::MessagesRequest;
use crate::chat_completions::chat_messages::base64_image;
use crate::shared::body::parse;
use crate::shared::error::ApiError;
use crate::shared::running;
use crate::shared::turn::{ChatTurn, Tools, Turn};
use crate::{ServedModel, ServerState};

/// Whether a path is one of the Messages API's, whose errors take Anthropic's shape (the key
/// check and the routing errors answer before any handler runs).
pub fn is_messages_path(path: &str) -> bool {
    path == "/v1/messages" || path.starts_with("/v1/messages/")
}

/// An error in the shape of the API the path belongs to.
pub fn error_for(path: &str, error: ApiError) -> Response {
    if is_messages_path(path) {
        AnthropicError(error).into_response()
    } else if crate::ollama::routes::is_ollama_path(path) {
        crate::ollama::render::OllamaError(error).into_response()
    } else {
        error.into_response()
    }
}

pub async fn messages(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let answer = async {
        let request: MessagesRequest = parse(body, state.body_limit, "Anthropic's Messages API reference")?;
        let model = state.served(request.model.as_deref()).await?;
        log_ignored(&request);
        let (engine_request, callable) = message_request(&request, &model)?;
        let serial = state.next_serial.fetch_add(1, Ordering::Relaxed);
        let mut reply = MessageReply::new(serial, model.name.clone(), request.stop_sequences.clone().unwrap_or_default());
        reply.omit_thinking = request.omit_thinking();
        let running = running::start(state.source.engine(), &model, engine_request, state.active.clone()).await?;
        let turn = Turn::new(running, &model.info, &callable);
        if request.stream {
            return Ok(stream(turn, MessageStream::new(reply)).into_response());
        }
        let (whole, reason, usage) = turn.whole().await?;
        Ok(Json(reply.whole(&whole, reason, &usage)).into_response())
    };
    answer.await.unwrap_or_else(|e: ApiError| AnthropicError(e).into_response())
}

/// `{"input_tokens": n}`: the prompt as a generation would see it (system, messages, tools
/// and the switches, through the model's template), without running it.
pub async fn count_tokens(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let answer = async {
        let request: MessagesRequest = parse(body, state.body_limit, "Anthropic's Messages API reference")?;
        let model = state.served(request.model.as_deref()).await?;
        let turn = prepare(&request, &model, Default::default())?;
        let chat = turn.chat_options(&model.info);
        let count = state.prompt_tokens(model.id, turn.prompt, chat).await?;
        Ok(Json(json!({ "input_tokens": count })).into_response())
    };
    answer.await.unwrap_or_else(|e: ApiError| AnthropicError(e).into_response())
}

/// The engine request a message asks for on `model`, and the tools the reply may call:
/// everything before the engine runs (the fuzz target `messages` runs it on any bytes).
pub(crate) fn message_request(request: &MessagesRequest, model: &ServedModel) -> Result<(confab_engine::Request, Tools), ApiError> {
    let sampling = request.sampling(&model.info.default_sampling)?;
    let turn = prepare(request, model, sampling)?;
    let engine_request = turn.request(&model.info, model.id)?;
    // Deferred tools a tool search loaded are not in the prompt's tool list, but callable.
    let callable = request.callable_tools()?;
    Ok((engine_request, callable))
}

/// What the request asks for that is left out, once per request: Anthropic's own tools as a
/// warning (the model does not get them), ignored fields and deferred tools as a note.
fn log_ignored(request: &MessagesRequest) {
    let (notes, warnings) = request.ignored();
    if !warnings.is_empty() {
        tracing::warn!(left_out = warnings.join("; "), "messages: tools left out of the prompt");
    }
    if !notes.is_empty() {
        tracing::info!(ignored = notes.join("; "), "messages: request fields ignored");
    }
}

/// The turn: the conversation (its images as the bytes received), the tools, checked, and
/// thinking.
pub(crate) fn prepare(request: &MessagesRequest, model: &ServedModel, sampling: SamplingParams) -> Result<ChatTurn, ApiError> {
    let tools = request.tools()?;
    let thinking = request.thinking()?;
    let mut images = |media_type: &str, data: &str, param: &str| base64_image(media_type, data, &model.info, &model.name, param);
    let mut turn = ChatTurn::new(request.prompt(&mut images)?, sampling);
    turn.tools = tools;
    turn.thinking = thinking;
    Ok(turn)
}

/// The reply as Anthropic's event sequence; dropped with the connection, which cancels the
/// generation.
fn stream(turn: Turn, events: MessageStream) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, Infallible>>> {
    let (prompt, cached) = turn.plan().map_or((0, 0), |plan| (plan.prompt_tokens, plan.reused_tokens));
    let pending: VecDeque<SseEvent> = events.opening(prompt, cached).into_iter().map(sse).collect();
    Sse::new(futures_util::stream::unfold((turn, events, pending), |(mut turn, mut events, mut pending)| async move {
        loop {
            if let Some(event) = pending.pop_front() {
                return Some((Ok(event), (turn, events, pending)));
            }
            match turn.next().await? {
                Ok(event) => pending.extend(events.push(event).into_iter().map(sse)),
                // Headers are sent: an error mid-stream is a last `error` event.
                Err(e) => pending.push_back(sse(events.error(&e))),
            }
        }
    }))
}

fn sse((name, data): NamedEvent) -> SseEvent {
    SseEvent::default().event(name).data(data.to_string())
}
