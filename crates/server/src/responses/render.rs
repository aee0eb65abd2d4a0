//! Responses API answers: the response object, and the streamed events OpenAI documents
//! (`response.created`, `response.in_progress`, then per output item `output_item.added`, its
//! deltas and `.done` events and `output_item.done`, then `response.completed` or
//! `response.incomplete`), each with its `sequence_number`. A whole answer is the same event
//! sequence read to its end, so the two cannot disagree.

use std::time::{SystemTime, UNIX_EPOCH};

use confab_engine::{StopReason, Usage};
use serde_json::{json, Map, Value};

use super::request::Namespaces;
use crate::shared::error::ApiError;
use crate::shared::turn::TurnEvent;

/// One response's identity, and the request's settings every response object repeats.
#[derive(Debug, Clone)]
pub struct ResponseReply {
    pub id: String,
    created_at: u64,
    model: String,
    settings: Map<String, Value>,
}

impl ResponseReply {
    /// `settings`: the request's fields the object echoes (instructions, tools, text, …).
    pub fn new(serial: u64, model: String, settings: Map<String, Value>) -> Self {
        let created_at = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        Self { id: format!("resp_{created_at:x}{serial:06x}"), created_at, model, settings }
    }

    /// An item's id: its kind's prefix, this response's id, its place.
    pub fn item_id(&self, prefix: &str, index: usize) -> String {
        format!("{prefix}_{}{index:02x}", self.id.trim_start_matches("resp_"))
    }

    /// An input item's id (kept with the request's items, listed by `input_items`).
    pub fn input_item_id(&self, prefix: &str, index: usize) -> String {
        format!("{prefix}_{}i{index:02x}", self.id.trim_start_matches("resp_"))
    }

    /// The response object in a given state.
    fn object(&self, status: &str, output: &[Value], usage: Option<&Usage>, end: End) -> Value {
        let mut object = json!({
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "error": end.error,
            "incomplete_details": end.incomplete.map(|reason| json!({ "reason": reason })),
            "model": self.model,
            "output": output,
            "usage": usage.map(usage_json),
        });
        if status != "in_progress" {
            object["completed_at"] = json!(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()));
        }
        for (key, value) in &self.settings {
            object[key] = value.clone();
        }
        object
    }
}

/// How a response ended, beyond its status.
#[derive(Default)]
struct End {
    error: Option<Value>,
    incomplete: Option<&'static str>,
}

/// Cached tokens are part of the input tokens (OpenAI counts them so); the prefix cache keeps
/// every prompt without extra cost, so nothing is reported as a cache write.
fn usage_json(usage: &Usage) -> Value {
    let mut body = json!({
        "input_tokens": usage.prompt,
        "input_tokens_details": { "cached_tokens": usage.cached, "cache_write_tokens": 0 },
        "output_tokens": usage.generated,
        // The engine counts tokens, not which channel each fell in.
        "output_tokens_details": { "reasoning_tokens": 0 },
        "total_tokens": usage.prompt + usage.generated,
    });
    // Confab's own fields, as on Chat Completions: what the grammar forced and what grammar
    // jump saved.
    if usage.forced > 0 {
        body["output_tokens_details"]["forced_tokens"] = json!(usage.forced);
        body["output_tokens_details"]["forward_passes_saved"] = json!(usage.passes_saved);
    }
    body
}

/// The output item being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Reasoning,
    Message,
}

/// A response's events, made from the turn's events in order; it keeps the output so far.
pub struct ResponseStream {
    reply: ResponseReply,
    /// Finished items, then the open one (its text in `open_text`).
    output: Vec<Value>,
    open: Option<Open>,
    open_text: String,
    sequence: u64,
    /// The response object once the turn ended.
    finished: Option<Value>,
    namespaces: Namespaces,
}

impl ResponseStream {
    pub fn new(reply: ResponseReply) -> Self {
        Self {
            reply,
            output: Vec::new(),
            open: None,
            open_text: String::new(),
            sequence: 0,
            finished: None,
            namespaces: Namespaces::default(),
        }
    }

    /// How the request's grouped functions are named: calls are answered with their group.
    pub fn with_namespaces(mut self, namespaces: Namespaces) -> Self {
        self.namespaces = namespaces;
        self
    }

    /// `response.created` and `response.in_progress`, with no output yet.
    pub fn opening(&mut self) -> Vec<Value> {
        let object = self.reply.object("in_progress", &[], None, End::default());
        vec![
            self.event("response.created", json!({ "response": object })),
            self.event("response.in_progress", json!({ "response": object })),
        ]
    }

    /// The events for one turn event: an item opens when the kind of content changes, and a
    /// call is a whole item (its arguments in one delta).
    pub fn push(&mut self, event: TurnEvent) -> Vec<Value> {
        let mut out = Vec::new();
        match event {
            TurnEvent::Reasoning(text) if !text.is_empty() => {
                let (index, id) = self.item(Open::Reasoning, &mut out);
                self.open_text.push_str(&text);
                out.push(self.event(
                    "response.reasoning_text.delta",
                    json!({ "item_id": id, "output_index": index, "content_index": 0, "delta": text }),
                ));
            }
            TurnEvent::Text(text) if !text.is_empty() => {
                let (index, id) = self.item(Open::Message, &mut out);
                self.open_text.push_str(&text);
                out.push(self.event(
                    "response.output_text.delta",
                    json!({ "item_id": id, "output_index": index, "content_index": 0, "delta": text, "logprobs": [] }),
                ));
            }
            TurnEvent::Reasoning(_) | TurnEvent::Text(_) => {}
            TurnEvent::ToolCall { id: call_id, name, arguments } => {
                self.close("completed", &mut out);
                let index = self.output.len();
                let id = self.reply.item_id("fc", index);
                let arguments = arguments.to_string();
                let (namespace, name) = self.namespaces.client_name(&name);
                let item = |status: &str, arguments: &str| {
                    let mut item = json!({ "id": id, "type": "function_call", "status": status, "call_id": call_id, "name": name, "arguments": arguments });
                    if let Some(namespace) = &namespace {
                        item["namespace"] = json!(namespace);
                    }
                    item
                };
                out.push(self.event("response.output_item.added", json!({ "output_index": index, "item": item("in_progress", "") })));
                out.push(
                    self.event(
                        "response.function_call_arguments.delta",
                        json!({ "item_id": id, "output_index": index, "delta": arguments }),
                    ),
                );
                out.push(self.event(
                    "response.function_call_arguments.done",
                    json!({ "item_id": id, "output_index": index, "name": name, "arguments": arguments }),
                ));
                let done = item("completed", &arguments);
                out.push(self.event("response.output_item.done", json!({ "output_index": index, "item": done })));
                self.output.push(done);
            }
            TurnEvent::Done { reason, usage, .. } => {
                let called = self.output.iter().any(|item| item["type"] == "function_call");
                // A reply that called a tool is complete (the client runs the calls), even where
                // the model wrote on until the limit; otherwise a limit cuts it short.
                let cut = matches!(reason, StopReason::MaxTokens | StopReason::Context) && !called;
                self.close(if cut { "incomplete" } else { "completed" }, &mut out);
                let (status, end) = if cut {
                    ("incomplete", End { incomplete: Some("max_output_tokens"), ..End::default() })
                } else {
                    ("completed", End::default())
                };
                let object = self.reply.object(status, &self.output, Some(&usage), end);
                self.finished = Some(object.clone());
                out.push(self.event(&format!("response.{status}"), json!({ "response": object })));
            }
            // The engine's other events and failures are the route's (`shared::turn::Turn`).
            _ => {}
        }
        out
    }

    /// An error after the stream began (the status is sent): an `error` event, then
    /// `response.failed`.
    pub fn error(&mut self, error: &ApiError) -> Vec<Value> {
        let mut out = Vec::new();
        self.close("incomplete", &mut out);
        let code = error.code.unwrap_or(error.kind);
        out.push(self.event("error", json!({ "code": code, "message": error.message, "param": error.param })));
        let end = End { error: Some(json!({ "code": code, "message": error.message })), ..End::default() };
        let object = self.reply.object("failed", &self.output, None, end);
        out.push(self.event("response.failed", json!({ "response": object })));
        out
    }

    /// The response object, once the turn ended.
    pub fn finished(&self) -> Option<&Value> {
        self.finished.as_ref()
    }

    pub fn reply(&self) -> &ResponseReply {
        &self.reply
    }

    /// The open item of this kind, or a new one (closing the one open): its index and id.
    fn item(&mut self, kind: Open, out: &mut Vec<Value>) -> (usize, String) {
        if self.open != Some(kind) {
            self.close("completed", out);
            let index = self.output.len();
            let (item, part) = match kind {
                Open::Reasoning => (self.reasoning_item(index, "in_progress", ""), None),
                Open::Message => (self.message_item(index, "in_progress", None), Some(output_text(""))),
            };
            out.push(self.event("response.output_item.added", json!({ "output_index": index, "item": item })));
            if let Some(part) = part {
                let id = self.reply.item_id("msg", index);
                out.push(self.event(
                    "response.content_part.added",
                    json!({ "item_id": id, "output_index": index, "content_index": 0, "part": part }),
                ));
            }
            self.output.push(item);
            self.open = Some(kind);
            self.open_text.clear();
        }
        let index = self.output.len() - 1;
        (index, self.output[index]["id"].as_str().unwrap_or_default().to_string())
    }

    /// Ends the open item: its `.done` events, and the item whole in the output.
    fn close(&mut self, status: &str, out: &mut Vec<Value>) {
        let Some(kind) = self.open.take() else { return };
        let index = self.output.len() - 1;
        let text = std::mem::take(&mut self.open_text);
        let item = match kind {
            Open::Reasoning => {
                let id = self.reply.item_id("rs", index);
                out.push(self.event(
                    "response.reasoning_text.done",
                    json!({ "item_id": id, "output_index": index, "content_index": 0, "text": text }),
                ));
                self.reasoning_item(index, status, &text)
            }
            Open::Message => {
                let id = self.reply.item_id("msg", index);
                let ids = json!({ "item_id": id, "output_index": index, "content_index": 0 });
                let mut done = ids.clone();
                done["text"] = json!(text);
                done["logprobs"] = json!([]);
                out.push(self.event("response.output_text.done", done));
                let mut part = ids;
                part["part"] = output_text(&text);
                out.push(self.event("response.content_part.done", part));
                self.message_item(index, status, Some(&text))
            }
        };
        out.push(self.event("response.output_item.done", json!({ "output_index": index, "item": item })));
        self.output[index] = item;
    }

    fn reasoning_item(&self, index: usize, status: &str, text: &str) -> Value {
        let content = if text.is_empty() { json!([]) } else { json!([{ "type": "reasoning_text", "text": text }]) };
        json!({ "id": self.reply.item_id("rs", index), "type": "reasoning", "status": status, "summary": [], "content": content })
    }

    fn message_item(&self, index: usize, status: &str, text: Option<&str>) -> Value {
        let content: Vec<Value> = text.map(output_text).into_iter().collect();
        json!({ "id": self.reply.item_id("msg", index), "type": "message", "status": status, "role": "assistant", "content": content })
    }

    /// An event: its type, its fields, and the next sequence number.
    fn event(&mut self, kind: &str, mut fields: Value) -> Value {
        fields["type"] = json!(kind);
        fields["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        fields
    }
}

fn output_text(text: &str) -> Value {
    json!({ "type": "output_text", "text": text, "annotations": [], "logprobs": [] })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage() -> Usage {
        Usage { prompt: 10, cached: 6, generated: 3, ..Usage::default() }
    }

    fn stream() -> ResponseStream {
        let mut settings = Map::new();
        settings.insert("store".into(), json!(true));
        ResponseStream::new(ResponseReply::new(1, "m".into(), settings))
    }

    fn types(events: &[Value]) -> Vec<&str> {
        events.iter().map(|e| e["type"].as_str().unwrap()).collect()
    }

    #[test]
    fn reasoning_text_and_a_call_are_items_in_order() {
        let mut s = stream();
        let mut events = s.opening();
        for event in [
            TurnEvent::Reasoning("Let me ".into()),
            TurnEvent::Reasoning("see.".into()),
            TurnEvent::Text("Checking.".into()),
            TurnEvent::ToolCall { id: "call_1".into(), name: "get_time".into(), arguments: json!({}) },
            TurnEvent::Done { reason: StopReason::Eos, usage: usage(), timings: Default::default() },
        ] {
            events.extend(s.push(event));
        }
        assert_eq!(
            types(&events),
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.reasoning_text.delta",
                "response.reasoning_text.delta",
                "response.reasoning_text.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
        let numbers: Vec<u64> = events.iter().map(|e| e["sequence_number"].as_u64().unwrap()).collect();
        assert_eq!(numbers, (0..events.len() as u64).collect::<Vec<_>>());
        let response = s.finished().unwrap();
        assert_eq!(response["status"], "completed");
        assert_eq!(response["store"], true);
        let output = response["output"].as_array().unwrap();
        assert_eq!(output[0]["content"][0]["text"], "Let me see.");
        assert_eq!(output[1]["content"][0]["text"], "Checking.");
        assert_eq!((output[2]["call_id"].as_str(), output[2]["arguments"].as_str()), (Some("call_1"), Some("{}")));
        assert_eq!(response["usage"]["input_tokens_details"]["cached_tokens"], 6);
        assert_eq!(response["usage"]["total_tokens"], 13);
        // Each item's added and done events carry the same id.
        assert_eq!(events[2]["item"]["id"], events[6]["item"]["id"]);
        assert_eq!(events[9]["item_id"], output[1]["id"]);
    }

    #[test]
    fn a_call_of_a_grouped_function_names_its_group() {
        let request: crate::responses::request::ResponsesRequest = serde_json::from_value(json!({"tools": [
            {"type": "namespace", "name": "multi_agent_v1", "tools": [{"type": "function", "name": "spawn_agent"}]},
        ]}))
        .unwrap();
        let mut s = stream().with_namespaces(request.tools().unwrap().namespaces);
        let mut events = s.push(TurnEvent::ToolCall { id: "call_1".into(), name: "spawn_agent".into(), arguments: json!({}) });
        events.extend(s.push(TurnEvent::Done { reason: StopReason::Eos, usage: usage(), timings: Default::default() }));
        let item = &s.finished().unwrap()["output"][0];
        assert_eq!((item["name"].as_str(), item["namespace"].as_str()), (Some("spawn_agent"), Some("multi_agent_v1")));
        assert_eq!(events[0]["item"]["namespace"], "multi_agent_v1");
    }

    #[test]
    fn a_reply_cut_by_the_limit_is_incomplete() {
        let mut s = stream();
        s.push(TurnEvent::Text("Once upon".into()));
        let events = s.push(TurnEvent::Done { reason: StopReason::MaxTokens, usage: usage(), timings: Default::default() });
        assert_eq!(events.last().unwrap()["type"], "response.incomplete");
        let response = s.finished().unwrap();
        assert_eq!(response["incomplete_details"]["reason"], "max_output_tokens");
        assert_eq!(response["output"][0]["status"], "incomplete");
    }

    #[test]
    fn an_error_mid_stream_fails_the_response() {
        let mut s = stream();
        s.push(TurnEvent::Text("Hi".into()));
        let events = s.error(&ApiError::invalid(None, "boom"));
        assert_eq!(types(&events)[types(&events).len() - 2..], ["error", "response.failed"]);
        assert_eq!(events.last().unwrap()["response"]["error"]["message"], "boom");
    }
}
