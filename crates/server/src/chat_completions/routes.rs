//! Chat Completions' endpoints, `POST /v1/chat/completions` (the turn, `shared/turn.rs`, shaped
//! as OpenAI's chat chunks) and the legacy `POST /v1/completions` (plain text in, text out).

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
use confab_engine::{Event, Prompt, Request};
use serde_json::Value;

use super::chat_messages::chat_messages;
use super::render::{Endpoint, Reply};
use super::request::{ChatRequest, CompletionRequest, PromptField, SamplingFields};
use crate::shared::body::{parse, OPENAI_REFERENCE};
use crate::shared::error::ApiError;
use crate::shared::running::{self, Running};
use crate::shared::structured::FormatField;
use crate::shared::turn::{ChatTurn, Turn, TurnEvent};
use crate::{ServedModel, ServerState};

/// OpenAI's default length for `/v1/completions` (chat's default is the context's end).
const COMPLETION_DEFAULT_MAX_TOKENS: u32 = 16;

pub async fn chat(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let answer = async {
        let request: ChatRequest = parse(body, state.body_limit, OPENAI_REFERENCE)?;
        let model = state.served(request.model.as_deref()).await?;
        let (turn, engine_request) = chat_request(&request, &model)?;
        let reply = Reply::new(Endpoint::Chat, state.next_serial.fetch_add(1, Ordering::Relaxed), model.name.clone());
        let running = running::start(state.source.engine(), &model, engine_request, state.active.clone()).await?;
        let turn = Turn::new(running, &model.info, &turn.tools);
        if request.sampling.stream {
            return Ok::<_, ApiError>(chat_stream(turn, reply, request.sampling.include_usage()).into_response());
        }
        let (whole, reason, usage) = turn.whole().await?;
        Ok(Json(reply.whole_turn(&whole, reason, &usage)).into_response())
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// The chat turn a request asks for and the engine request it makes on `model`: everything
/// before the engine runs (the fuzz target `chat_completions` runs it on any bytes).
pub(crate) fn chat_request(request: &ChatRequest, model: &ServedModel) -> Result<(ChatTurn, Request), ApiError> {
    let sampling = request.sampling.to_params(&model.info.default_sampling, 0)?;
    let messages = chat_messages(&request.messages, &model.info, &model.name)?;
    let mut turn = ChatTurn::new(Prompt::Chat(messages), sampling);
    turn.tools = request.tools()?;
    turn.thinking = request.thinking();
    turn.switches = request.switches()?;
    turn.constraint = crate::shared::structured::constraint(request.response_format.as_ref(), FormatField::ResponseFormat)?;
    let mut engine_request = turn.request(&model.info, model.id)?;
    engine_request.speculative = request.sampling.speculative(model.draft)?;
    Ok((turn, engine_request))
}

/// A chat reply as server-sent events: reasoning, text and calls as they come.
fn chat_stream(turn: Turn, reply: Reply, include_usage: bool) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, Infallible>>> {
    let mut pending = VecDeque::new();
    pending.extend(reply.opening().map(|chunk| data(&chunk)));
    let state = (turn, reply, pending, 0usize);
    Sse::new(futures_util::stream::unfold(state, move |(mut turn, reply, mut pending, mut calls)| async move {
        loop {
            if let Some(event) = pending.pop_front() {
                return Some((Ok(event), (turn, reply, pending, calls)));
            }
            match turn.next().await? {
                Ok(TurnEvent::Reasoning(text)) => pending.push_back(data(&reply.reasoning_chunk(&text))),
                Ok(TurnEvent::Text(text)) => pending.push_back(data(&reply.text_chunk(&text))),
                Ok(TurnEvent::ToolCall { id, name, arguments }) => {
                    pending.push_back(data(&reply.call_chunk(calls, &id, &name, &arguments)));
                    calls += 1;
                }
                Ok(TurnEvent::Done { reason, usage, .. }) => {
                    pending.push_back(data(&reply.final_chat_chunk(reason, calls > 0)));
                    if include_usage {
                        pending.push_back(data(&reply.usage_chunk(&usage)));
                    }
                    pending.push_back(SseEvent::default().data("[DONE]"));
                }
                Ok(_) => {}
                // Headers are sent: an error mid-stream is a last event in the error shape.
                Err(e) => pending.push_back(data(&e.body())),
            }
        }
    }))
}

pub async fn completions(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let answer = async {
        let request: CompletionRequest = parse(body, state.body_limit, OPENAI_REFERENCE)?;
        let model = state.served(request.model.as_deref()).await?;
        let engine_request = completion_request(&request, &model)?;
        answer(&state, Endpoint::Completion, model, engine_request, &request.sampling).await
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// The engine request a legacy completion asks for on `model` (the fuzz target `completions`
/// runs it on any bytes).
pub(crate) fn completion_request(request: &CompletionRequest, model: &ServedModel) -> Result<Request, ApiError> {
    let sampling = request.sampling.to_params(&model.info.default_sampling, COMPLETION_DEFAULT_MAX_TOKENS)?;
    let prompt = match &request.prompt {
        PromptField::One(text) => text.clone(),
        PromptField::Many(texts) if texts.len() == 1 => texts[0].clone(),
        PromptField::Many(texts) => {
            return Err(ApiError::invalid(Some("prompt"), format!("{} prompts given; send one prompt per request.", texts.len())))
        }
    };
    let mut engine_request = Request::new(model.id, Prompt::Text(prompt), sampling);
    engine_request.speculative = request.sampling.speculative(model.draft)?;
    Ok(engine_request)
}

/// Runs the request and answers whole, or as server-sent events when the client streams.
async fn answer(
    state: &ServerState,
    endpoint: Endpoint,
    model: ServedModel,
    request: Request,
    fields: &SamplingFields,
) -> Result<Response, ApiError> {
    let reply = Reply::new(endpoint, state.next_serial.fetch_add(1, Ordering::Relaxed), model.name.clone());
    let mut running = running::start(state.source.engine(), &model, request, state.active.clone()).await?;
    if fields.stream {
        return Ok(stream(running, reply, fields.include_usage()).into_response());
    }
    let mut text = String::new();
    while let Some(event) = running.next().await {
        match event {
            Event::Token { text: piece, .. } | Event::Text(piece) => text.push_str(&piece),
            Event::Done { reason, usage, .. } => return Ok(Json(reply.whole(&text, reason, &usage)).into_response()),
            Event::Error(e) => return Err(e.into()),
            Event::Plan(_) | Event::Canvas(_) | Event::Queued { .. } => {}
        }
    }
    Err(confab_engine::EngineError::EngineStopped.into())
}

/// What a stream still has to send, and the request it reads (dropped with the stream when
/// the client disconnects, which cancels the generation).
struct StreamState {
    running: Running,
    reply: Reply,
    include_usage: bool,
    pending: VecDeque<SseEvent>,
    /// A denoising reply's text, held until its canvas is finished (a chunk per canvas).
    held: Option<String>,
    ended: bool,
}

fn stream(running: Running, reply: Reply, include_usage: bool) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, Infallible>>> {
    let mut pending = VecDeque::new();
    pending.extend(reply.opening().map(|chunk| data(&chunk)));
    let held = running.plan().is_some_and(|plan| plan.method == "denoising").then(String::new);
    let state = StreamState { running, reply, include_usage, pending, held, ended: false };
    Sse::new(futures_util::stream::unfold(state, |mut s| async move {
        loop {
            if let Some(event) = s.pending.pop_front() {
                return Some((Ok(event), s));
            }
            if s.ended {
                return None;
            }
            match s.running.next().await {
                Some(Event::Token { text, .. } | Event::Text(text)) if !text.is_empty() => match s.held.as_mut() {
                    Some(held) => held.push_str(&text),
                    None => s.pending.push_back(data(&s.reply.text_chunk(&text))),
                },
                Some(Event::Canvas(canvas)) if canvas.finished => s.release(),
                Some(Event::Done { reason, usage, .. }) => {
                    s.release();
                    s.pending.push_back(data(&s.reply.final_chunk(reason)));
                    if s.include_usage {
                        s.pending.push_back(data(&s.reply.usage_chunk(&usage)));
                    }
                    s.pending.push_back(SseEvent::default().data("[DONE]"));
                    s.ended = true;
                }
                // Headers are sent: an error mid-stream is a last event in the error shape.
                Some(Event::Error(e)) => {
                    s.pending.push_back(data(&ApiError::from(e).body()));
                    s.ended = true;
                }
                None => s.ended = true,
                Some(_) => {}
            }
        }
    }))
}

impl StreamState {
    /// The held text of a finished canvas, as one chunk.
    fn release(&mut self) {
        if let Some(text) = self.held.as_mut().filter(|text| !text.is_empty()) {
            let chunk = data(&self.reply.text_chunk(text));
            text.clear();
            self.pending.push_back(chunk);
        }
    }
}

fn data(value: &Value) -> SseEvent {
    SseEvent::default().data(value.to_string())
}
