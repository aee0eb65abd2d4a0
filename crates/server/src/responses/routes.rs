//! The Responses API's endpoints: `POST /v1/responses` (the same turn as Chat Completions,
//! `shared/turn.rs`, shaped as OpenAI's Responses), `POST /v1/responses/input_tokens`, and the kept
//! responses: `GET` and `DELETE /v1/responses/{id}`, `GET /v1/responses/{id}/input_items`.
//! Responses are kept in the history database (`confab-store`), never in memory only, so a
//! chain survives a restart.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use confab_engine::Prompt;
use confab_engine::SamplingParams;
use confab_store::{Store, StoreError, StoredResponse};
use serde_json::{json, Map, Value};

use super::render::{ResponseReply, ResponseStream};
use super::request::{conversation, Namespaces, RequestTools, ResponsesRequest, Sourced};
use crate::chat_completions::chat_messages::image_url_item;
use crate::shared::body::{parse, OPENAI_REFERENCE};
use crate::shared::error::ApiError;
use crate::shared::running;
use crate::shared::structured::{self, FormatField};
use crate::shared::turn::{ChatTurn, Turn};
use crate::{ServedModel, ServerState};

/// `input_items` pages: OpenAI's default and largest page.
const DEFAULT_PAGE: usize = 20;
const MAX_PAGE: usize = 100;

pub async fn create(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let answer = async {
        let request: ResponsesRequest = parse(body, state.body_limit, OPENAI_REFERENCE)?;
        request.check()?;
        let model = state.served(request.model.as_deref()).await?;
        let earlier = earlier_items(&state, request.previous_response_id.as_deref()).await?;
        let (prepared, engine_request) = response_request(&request, &model, &earlier)?;
        if !prepared.left_out.is_empty() {
            tracing::warn!(left_out = prepared.left_out.join("; "), "responses: tools left out of the prompt");
        }

        let keep = state.responses.clone().filter(|_| request.store != Some(false));
        let reply = ResponseReply::new(
            state.next_serial.fetch_add(1, Ordering::Relaxed),
            model.name.clone(),
            echoed_settings(&request, keep.is_some(), &prepared.left_out),
        );
        let kept = Kept { store: keep, previous_id: request.previous_response_id.clone(), input: with_ids(prepared.input, &reply) };
        let running = running::start(state.source.engine(), &model, engine_request, state.active.clone()).await.map_err(responses_param)?;
        let mut turn = Turn::new(running, &model.info, &prepared.turn.tools);
        let mut events = ResponseStream::new(reply).with_namespaces(prepared.namespaces);
        if request.stream {
            return Ok(stream(turn, events, kept).into_response());
        }
        while let Some(event) = turn.next().await {
            events.push(event.map_err(responses_param)?);
        }
        let response = events.finished().cloned().ok_or(confab_engine::EngineError::EngineStopped)?;
        kept.save(events.reply(), &response).await;
        Ok::<_, ApiError>(Json(response).into_response())
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// `{"object": "response.input_tokens", "input_tokens": n}`: the prompt a generation would
/// see (earlier responses, instructions, input, tools, switches), without running it.
pub async fn input_tokens(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let answer = async {
        let request: ResponsesRequest = parse(body, state.body_limit, OPENAI_REFERENCE)?;
        request.check()?;
        let model = state.served(request.model.as_deref()).await?;
        let earlier = earlier_items(&state, request.previous_response_id.as_deref()).await?;
        let prepared = prepare(&request, &model, Default::default(), &earlier)?;
        let chat = prepared.turn.chat_options(&model.info);
        let count = state.prompt_tokens(model.id, prepared.turn.prompt, chat).await?;
        Ok::<_, ApiError>(Json(json!({ "object": "response.input_tokens", "input_tokens": count })).into_response())
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// `GET /v1/responses/{id}`: a kept response, as it was answered.
pub async fn retrieve(State(state): State<Arc<ServerState>>, id: Result<Path<String>, PathRejection>) -> Response {
    let answer = async { Ok::<_, ApiError>(Json(kept(&state, &response_id(id)?, None).await?.response).into_response()) };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// `DELETE /v1/responses/{id}`.
pub async fn delete(State(state): State<Arc<ServerState>>, id: Result<Path<String>, PathRejection>) -> Response {
    let answer = async {
        let id = response_id(id)?;
        let store = state.responses.as_ref().ok_or_else(|| ApiError::response_not_found(&id, None))?;
        if !store.delete_response(&id).await.map_err(store_error)? {
            return Err(ApiError::response_not_found(&id, None));
        }
        Ok(Json(json!({ "id": id, "object": "response", "deleted": true })).into_response())
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// `GET /v1/responses/{id}/input_items?order=desc&limit=20&after=<item id>`: the response's own
/// input items (those of the request that made it), a page at a time.
pub async fn input_items(State(state): State<Arc<ServerState>>, id: Result<Path<String>, PathRejection>, uri: Uri) -> Response {
    let answer = async {
        let id = response_id(id)?;
        let (mut order_asc, mut limit, mut after) = (false, DEFAULT_PAGE, None);
        for (key, value) in uri.query().unwrap_or_default().split('&').filter_map(|pair| pair.split_once('=')) {
            match key {
                "order" if value == "asc" || value == "desc" => order_asc = value == "asc",
                "order" => return Err(ApiError::invalid(Some("order"), "order must be asc or desc.")),
                "limit" => {
                    limit =
                        value.parse().ok().filter(|n| (1..=MAX_PAGE).contains(n)).ok_or_else(|| {
                            ApiError::invalid(Some("limit"), format!("limit is {value}; it must be from 1 to {MAX_PAGE}."))
                        })?
                }
                "after" => after = Some(value.to_string()),
                _ => {}
            }
        }
        let kept = kept(&state, &id, None).await?;
        let mut items = kept.input.as_array().cloned().unwrap_or_default();
        if !order_asc {
            items.reverse();
        }
        if let Some(after) = &after {
            let Some(at) = items.iter().position(|item| item["id"].as_str() == Some(after)) else {
                return Err(ApiError::invalid(Some("after"), format!("no input item of {id} has the id `{after}`.")));
            };
            items.drain(..=at);
        }
        let has_more = items.len() > limit;
        items.truncate(limit);
        let first_id = items.first().map(|item| item["id"].clone());
        let last_id = items.last().map(|item| item["id"].clone());
        Ok(Json(json!({ "object": "list", "data": items, "first_id": first_id, "last_id": last_id, "has_more": has_more })).into_response())
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// A kept response's id from the path; one that is not text (`%FF`) is answered in OpenAI's
/// shape rather than as axum's plain-text rejection.
fn response_id(id: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    id.map(|Path(id)| id)
        .map_err(|rejection| ApiError::invalid(Some("id"), format!("The response id in the path is not valid: {}.", rejection.body_text())))
}

/// An engine error named in this API's fields: the engine's errors name Chat Completions'.
fn responses_param(error: ApiError) -> ApiError {
    error.with_param_renamed(FormatField::ResponseFormat.param(), FormatField::TextFormat.param()).with_param_renamed("messages", "input")
}

/// The kept response `id`; `param` names the request field that asked for it.
async fn kept(state: &ServerState, id: &str, param: Option<&str>) -> Result<StoredResponse, ApiError> {
    let store = state.responses.as_ref().ok_or_else(|| ApiError::response_not_found(id, param))?;
    store.response(id).await.map_err(|e| match e {
        StoreError::NotFound { .. } => ApiError::response_not_found(id, param),
        other => store_error(other),
    })
}

fn store_error(error: StoreError) -> ApiError {
    ApiError::invalid(None, format!("the server's response store failed: {error}")).with_status(StatusCode::INTERNAL_SERVER_ERROR)
}

/// What a request runs on: the conversation (earlier responses, then its input; images as the
/// bytes received), the tools, and its own input items as they are kept.
pub(crate) struct Prepared {
    pub(crate) turn: ChatTurn,
    pub(crate) namespaces: Namespaces,
    pub(crate) left_out: Vec<String>,
    pub(crate) input: Vec<Value>,
}

/// The engine request a (checked) request asks for on `model`, after the `earlier` items of
/// the responses it continues: everything before the engine runs (the fuzz target `responses`
/// runs it on any bytes).
pub(crate) fn response_request(
    request: &ResponsesRequest,
    model: &ServedModel,
    earlier: &[Value],
) -> Result<(Prepared, confab_engine::Request), ApiError> {
    let sampling = request.sampling(&model.info.default_sampling)?;
    let mut prepared = prepare(request, model, sampling, earlier)?;
    prepared.turn.constraint = structured::constraint(request.format(), FormatField::TextFormat)?;
    let engine_request = prepared.turn.request(&model.info, model.id)?;
    Ok((prepared, engine_request))
}

/// `earlier`: the items of the responses the request continues (`earlier_items`).
pub(crate) fn prepare(
    request: &ResponsesRequest,
    model: &ServedModel,
    sampling: SamplingParams,
    earlier: &[Value],
) -> Result<Prepared, ApiError> {
    let RequestTools { tools, namespaces, left_out } = request.tools()?;
    let input = request.input_items()?;
    let mut sourced: Vec<Sourced> = earlier.iter().map(|item| Sourced { item, param: "previous_response_id".into() }).collect();
    sourced.extend(input.iter().enumerate().map(|(i, item)| Sourced { item, param: format!("input[{i}]") }));
    let mut images = |url: &str, param: &str| image_url_item(url, &model.info, &model.name, param);
    let messages = conversation(request.instructions.as_deref(), &sourced, &namespaces, &mut images)?;
    let mut turn = ChatTurn::new(Prompt::Chat(messages), sampling);
    turn.tools = tools;
    turn.thinking = request.thinking();
    turn.switches = request.switches()?;
    Ok(Prepared { turn, namespaces, left_out, input })
}

/// The items of the conversation a request continues: each earlier response's input and
/// output, oldest first.
async fn earlier_items(state: &ServerState, previous: Option<&str>) -> Result<Vec<Value>, ApiError> {
    let Some(previous) = previous else { return Ok(vec![]) };
    const PARAM: Option<&str> = Some("previous_response_id");
    let store = state.responses.as_ref().ok_or_else(|| ApiError::response_not_found(previous, PARAM))?;
    let chain = store.response_chain(previous).await.map_err(|e| match e {
        StoreError::NotFound { .. } => ApiError::response_not_found(previous, PARAM),
        other => store_error(other),
    })?;
    if let Some(lost) = chain.first().and_then(|r| r.previous_id.as_deref()) {
        return Err(ApiError::response_not_found(lost, PARAM).with_message(format!(
            "The conversation of {previous} continues from response {lost}, which was deleted; start again from a response whose chain is whole."
        )));
    }
    let mut items = Vec::new();
    for response in chain {
        items.extend(response.input.as_array().cloned().unwrap_or_default());
        items.extend(response.response["output"].as_array().cloned().unwrap_or_default());
    }
    Ok(items)
}

/// The request's fields every response object repeats.
fn echoed_settings(request: &ResponsesRequest, kept: bool, left_out: &[String]) -> Map<String, Value> {
    let format = request.format().cloned().unwrap_or_else(|| json!({ "type": "text" }));
    let effort = request.reasoning.as_ref().and_then(|r| r.effort.clone());
    let tool_choice = request.tool_choice.clone().filter(|c| !c.is_null()).unwrap_or_else(|| json!("auto"));
    let echoed = json!({
        "instructions": request.instructions,
        "max_output_tokens": request.max_output_tokens,
        "metadata": metadata(request, left_out),
        "parallel_tool_calls": request.parallel_tool_calls.unwrap_or(true),
        "previous_response_id": request.previous_response_id,
        "reasoning": { "effort": effort, "summary": null },
        "store": kept,
        "temperature": request.temperature,
        "text": { "format": format },
        "tool_choice": tool_choice,
        "tools": request.tools.clone().unwrap_or_default(),
        "top_p": request.top_p,
        "truncation": "disabled",
        "background": false,
    });
    match echoed {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The request's metadata, and where tools were left out of the prompt, a note of them
/// (`confab_tools_left_out`; metadata values are strings).
fn metadata(request: &ResponsesRequest, left_out: &[String]) -> Value {
    let mut metadata = request.metadata.clone().filter(Value::is_object).unwrap_or_else(|| json!({}));
    if !left_out.is_empty() {
        metadata["confab_tools_left_out"] = json!(left_out.join("; "));
    }
    metadata
}

/// The request's input items, each with an id (as `input_items` lists them).
fn with_ids(items: Vec<Value>, reply: &ResponseReply) -> Vec<Value> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, mut item)| {
            if item.get("id").and_then(Value::as_str).is_none() {
                let prefix = match item["type"].as_str() {
                    Some("function_call") => "fc",
                    Some("function_call_output") => "fco",
                    Some("reasoning") => "rs",
                    _ => "msg",
                };
                item["id"] = json!(reply.input_item_id(prefix, i));
            }
            item
        })
        .collect()
}

/// Where a finished response is kept, if it is.
struct Kept {
    store: Option<Store>,
    previous_id: Option<String>,
    input: Vec<Value>,
}

impl Kept {
    /// Keeps the response. A failure is logged, not answered: the reply itself is good, and
    /// a later `previous_response_id` to it is told it does not exist.
    async fn save(&self, reply: &ResponseReply, response: &Value) {
        let Some(store) = &self.store else { return };
        let stored = StoredResponse {
            id: reply.id.clone(),
            previous_id: self.previous_id.clone(),
            created_at: 0,
            input: Value::Array(self.input.clone()),
            response: response.clone(),
        };
        if let Err(e) = store.save_response(&stored).await {
            tracing::warn!(id = reply.id, "could not keep the response: {e}");
        }
    }
}

/// The response as OpenAI's event sequence; dropped with the connection, which cancels the
/// generation. The response is kept before `response.completed` is sent, so a client may
/// continue from it at once.
fn stream(turn: Turn, mut events: ResponseStream, kept: Kept) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, Infallible>>> {
    let pending: VecDeque<Value> = events.opening().into();
    let state = (turn, events, kept, pending, false);
    Sse::new(futures_util::stream::unfold(state, |(mut turn, mut events, kept, mut pending, mut saved)| async move {
        loop {
            if let Some(event) = pending.pop_front() {
                return Some((Ok(sse(&event)), (turn, events, kept, pending, saved)));
            }
            match turn.next().await? {
                Ok(event) => pending.extend(events.push(event)),
                // Headers are sent: an error mid-stream is an `error` event and `response.failed`.
                Err(e) => pending.extend(events.error(&responses_param(e))),
            }
            if let (Some(response), false) = (events.finished(), saved) {
                kept.save(events.reply(), response).await;
                saved = true;
            }
        }
    }))
}

fn sse(event: &Value) -> SseEvent {
    SseEvent::default().event(event["type"].as_str().unwrap_or("message")).data(event.to_string())
}
