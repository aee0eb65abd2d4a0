//! The endpoints, the key check, and the body and routing errors in OpenAI's shape (in
//! Anthropic's on the Messages API's paths, see `anthropic_routes`; the Responses API's
//! handlers are in `responses_routes`).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Request as HttpRequest, State};
use axum::http::Uri;
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use confab_engine::runtime::{Event, Prompt, Request};
use serde_json::{json, Value};

use crate::access;
use crate::anthropic_routes::{self, error_for};
use crate::body::{parse, OPENAI_REFERENCE};
use crate::error::{ApiError, Refusal};
use crate::media_files::RequestFiles;
use crate::messages::chat_messages;
use crate::openai::{ChatRequest, CompletionRequest, PromptField, SamplingFields};
use crate::reply::{Endpoint, Reply};
use crate::responses_routes;
use crate::running::{self, Running};
use crate::structured::FormatField;
use crate::turn::{Turn, TurnEvent};
use crate::{ServedModel, ServerState};

/// OpenAI's default length for `/v1/completions` (chat's default is the context's end).
const COMPLETION_DEFAULT_MAX_TOKENS: u32 = 16;

pub fn router(state: Arc<ServerState>) -> Router {
    let api = Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/v1/completions", post(completions))
        .route("/v1/embeddings", post(crate::embeddings::create))
        .route("/v1/responses", post(responses_routes::create))
        .route("/v1/responses/input_tokens", post(responses_routes::input_tokens))
        .route("/v1/responses/{id}", get(responses_routes::retrieve).delete(responses_routes::delete))
        .route("/v1/responses/{id}/input_items", get(responses_routes::input_items))
        .route("/v1/messages", post(anthropic_routes::messages))
        .route("/v1/messages/count_tokens", post(anthropic_routes::count_tokens))
        .route("/v1/models", get(models))
        .route_layer(middleware::from_fn_with_state(state.clone(), access::admit));
    Router::new()
        .route("/health", get(health))
        .merge(api)
        .fallback(|uri: Uri| async move { error_for(uri.path(), ApiError::not_found(uri.path())) })
        .method_not_allowed_fallback(|uri: Uri| async move { error_for(uri.path(), ApiError::method_not_allowed()) })
        .layer(DefaultBodyLimit::max(state.body_limit))
        .layer(middleware::from_fn_with_state(state.clone(), access::check_caller))
        .layer(middleware::from_fn(log_request))
        .with_state(state)
}

/// A log line per HTTP request; a streamed reply's time is until its headers (the engine's
/// own `done` line, in the request's span, has the rest). A refused request's line says why,
/// as a warning, so that it shows at any log level a user runs with.
async fn log_request(request: HttpRequest, next: Next) -> Response {
    let (method, path) = (request.method().clone(), request.uri().path().to_string());
    let began = std::time::Instant::now();
    let response = next.run(request).await;
    let (status, ms) = (response.status().as_u16(), began.elapsed().as_millis() as u64);
    match response.extensions().get::<Refusal>() {
        Some(Refusal(reason)) if response.status().is_client_error() => tracing::warn!(%method, path, status, ms, reason, "http refused"),
        _ => tracing::info!(%method, path, status, ms, "http"),
    }
    response
}

async fn health(State(state): State<Arc<ServerState>>) -> Json<Value> {
    let model = state.source.current().map(|m| m.name);
    Json(json!({ "status": "ok", "model": model, "active_requests": state.active.load(Ordering::Relaxed) }))
}

async fn models(State(state): State<Arc<ServerState>>) -> Json<Value> {
    let data: Vec<Value> = state
        .source
        .current()
        .into_iter()
        .chain(state.source.embedding())
        .map(|m| json!({ "id": m.name, "object": "model", "created": state.started, "owned_by": "confab" }))
        .collect();
    Json(json!({ "object": "list", "data": data }))
}

async fn chat(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let answer = async {
        let request: ChatRequest = parse(body, state.body_limit, OPENAI_REFERENCE)?;
        let model = state.served(request.model.as_deref())?;
        let sampling = request.sampling.to_params(&model.info.default_sampling, 0)?;
        let tools = request.tools()?;
        let switches = request.switches()?;
        let (messages, files) = chat_messages(&request.messages, &state.media, &model.info, &model.name)?;
        let mut engine_request = Request::new(model.id, Prompt::Chat(messages), sampling);
        engine_request.constraint = crate::structured::constraint(request.response_format.as_ref(), FormatField::ResponseFormat)?;
        engine_request.speculative = request.sampling.speculative(model.draft)?;
        tools.apply(&model.info, switches, &mut engine_request)?;
        let reply = Reply::new(Endpoint::Chat, state.next_serial.fetch_add(1, Ordering::Relaxed), model.name.clone());
        let running = running::start(state.source.engine(), engine_request, files, state.active.clone()).await?;
        let turn = Turn::new(running, &model.info, &tools);
        if request.sampling.stream {
            return Ok::<_, ApiError>(chat_stream(turn, reply, request.sampling.include_usage()).into_response());
        }
        let (whole, reason, usage) = turn.whole().await?;
        Ok(Json(reply.whole_turn(&whole, reason, &usage)).into_response())
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
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
                Ok(TurnEvent::Done { reason, usage }) => {
                    pending.push_back(data(&reply.final_chat_chunk(reason, calls > 0)));
                    if include_usage {
                        pending.push_back(data(&reply.usage_chunk(&usage)));
                    }
                    pending.push_back(SseEvent::default().data("[DONE]"));
                }
                // Headers are sent: an error mid-stream is a last event in the error shape.
                Err(e) => pending.push_back(data(&e.body())),
            }
        }
    }))
}

async fn completions(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let answer = async {
        let request: CompletionRequest = parse(body, state.body_limit, OPENAI_REFERENCE)?;
        let model = state.served(request.model.as_deref())?;
        let sampling = request.sampling.to_params(&model.info.default_sampling, COMPLETION_DEFAULT_MAX_TOKENS)?;
        let prompt = match request.prompt {
            PromptField::One(text) => text,
            PromptField::Many(mut texts) if texts.len() == 1 => texts.remove(0),
            PromptField::Many(texts) => {
                return Err(ApiError::invalid(Some("prompt"), format!("{} prompts given; send one prompt per request.", texts.len())))
            }
        };
        let mut engine_request = Request::new(model.id, Prompt::Text(prompt), sampling);
        engine_request.speculative = request.sampling.speculative(model.draft)?;
        answer(&state, Endpoint::Completion, model, engine_request, RequestFiles::default(), &request.sampling).await
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// Runs the request and answers whole, or as server-sent events when the client streams.
async fn answer(
    state: &ServerState,
    endpoint: Endpoint,
    model: ServedModel,
    request: Request,
    files: RequestFiles,
    fields: &SamplingFields,
) -> Result<Response, ApiError> {
    let reply = Reply::new(endpoint, state.next_serial.fetch_add(1, Ordering::Relaxed), model.name.clone());
    let mut running = running::start(state.source.engine(), request, files, state.active.clone()).await?;
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
