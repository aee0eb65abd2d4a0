//! Messages API answers: the whole message, the streamed event sequence Anthropic documents
//! (`message_start`, `ping`, then per content block `content_block_start`, deltas and
//! `content_block_stop`, then `message_delta` and `message_stop`), and errors in Anthropic's
//! shape, `{"type": "error", "error": {"type", "message"}}`.

use std::time::{SystemTime, UNIX_EPOCH};

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use confab_engine::{StopReason, Usage};
use serde_json::{json, Value};

use crate::shared::error::ApiError;
use confab_turn::WholeReply;

use crate::shared::turn::TurnEvent;

/// One reply's identity and what its stop reason depends on.
#[derive(Debug, Clone)]
pub struct MessageReply {
    pub id: String,
    pub model: String,
    /// The request's `stop_sequences`: the one that ended the reply is reported (the server's
    /// own stop strings, such as a call's closing marker, are not).
    stop_sequences: Vec<String>,
    /// `thinking.display: "omitted"`: thinking blocks come without their text (as Anthropic
    /// returns them then), so a client that does not show thinking is not sent it. The text
    /// rides in the block's signature instead (`hidden_thinking`), as Anthropic's signature
    /// carries its thinking, so the client's next request gives the model its reasoning back.
    pub omit_thinking: bool,
}

/// What starts the signature of a thinking block whose text Confab left out.
const HIDDEN_THINKING: &str = "confab-thinking:";

/// The signature of an omitted thinking block: its text, which `thinking_of_signature` reads.
fn hidden_thinking(text: &str) -> String {
    format!("{HIDDEN_THINKING}{}", base64::engine::general_purpose::STANDARD.encode(text))
}

/// The text an omitted thinking block's signature carries, where Confab wrote it (another
/// server's signature is opaque here).
pub fn thinking_of_signature(signature: &str) -> Option<String> {
    let encoded = signature.strip_prefix(HIDDEN_THINKING)?;
    String::from_utf8(base64::engine::general_purpose::STANDARD.decode(encoded).ok()?).ok()
}

/// A server-sent event: its name and its data.
pub type NamedEvent = (&'static str, Value);

impl MessageReply {
    pub fn new(serial: u64, model: String, stop_sequences: Vec<String>) -> Self {
        let created = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        Self { id: format!("msg_{created:x}{serial:06x}"), model, stop_sequences, omit_thinking: false }
    }

    /// The non-streamed answer: thinking, text, then the calls, as Anthropic orders them.
    pub fn whole(&self, turn: &WholeReply, reason: StopReason, usage: &Usage) -> Value {
        let mut content = Vec::new();
        if !turn.reasoning.is_empty() {
            let block = if self.omit_thinking {
                json!({ "type": "thinking", "thinking": "", "signature": hidden_thinking(&turn.reasoning) })
            } else {
                json!({ "type": "thinking", "thinking": turn.reasoning, "signature": "" })
            };
            content.push(block);
        }
        if !turn.text.is_empty() {
            content.push(json!({ "type": "text", "text": turn.text }));
        }
        for (id, name, arguments) in &turn.calls {
            content.push(json!({ "type": "tool_use", "id": tool_use_id(id), "name": name, "input": arguments }));
        }
        let (stop_reason, stop_sequence) = self.stop(reason, usage, !turn.calls.is_empty());
        json!({
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": stop_sequence,
            "usage": usage_json(usage.prompt, usage.cached, usage.generated),
        })
    }

    /// Anthropic's reason, and the stop sequence that ended the reply where one did.
    fn stop(&self, reason: StopReason, usage: &Usage, called: bool) -> (&'static str, Option<String>) {
        let sequence = usage.stop_string.as_ref().filter(|matched| self.stop_sequences.contains(matched));
        match reason {
            // Calls are given only once whole: a reply that holds one asks the client to run
            // it, even where the model wrote on after it until the token limit (small models
            // do); `max_tokens` would tell an agent the calls were cut off.
            StopReason::Eos | StopReason::StopString | StopReason::MaxTokens | StopReason::Context if called => ("tool_use", None),
            StopReason::StopString if sequence.is_some() => ("stop_sequence", sequence.cloned()),
            StopReason::Eos | StopReason::StopString | StopReason::Cancelled => ("end_turn", None),
            // A full context cuts the reply short as a token limit does; `max_tokens` is the
            // reason every client version knows.
            StopReason::MaxTokens | StopReason::Context => ("max_tokens", None),
        }
    }
}

/// A tool call's id as Anthropic writes them (`toolu_…`); clients send it back as is.
fn tool_use_id(id: &str) -> String {
    format!("toolu_{}", id.strip_prefix("call_").unwrap_or(id))
}

/// `input_tokens` are those computed for this request: Anthropic counts the prompt as
/// `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`. The prefix cache
/// stores every prompt without extra cost, so nothing is reported as a cache write.
fn usage_json(prompt: usize, cached: usize, generated: usize) -> Value {
    json!({
        "input_tokens": prompt.saturating_sub(cached),
        "output_tokens": generated,
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": 0,
    })
}

/// What kind of content block is open in a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Thinking,
    Text,
}

/// A streamed reply's events, made from the turn's events in order.
pub struct MessageStream {
    reply: MessageReply,
    /// The block being written and its index.
    open: Option<(Open, usize)>,
    /// Blocks started so far: the next block's index.
    blocks: usize,
    called: bool,
    /// The open thinking block's text, where it is omitted: its signature at the block's end.
    hidden: String,
}

impl MessageStream {
    pub fn new(reply: MessageReply) -> Self {
        Self { reply, open: None, blocks: 0, called: false, hidden: String::new() }
    }

    /// `message_start` (the message with no content yet and the prompt's usage, from the
    /// engine's plan), and a `ping`, as Anthropic opens a stream.
    pub fn opening(&self, prompt: usize, cached: usize) -> Vec<NamedEvent> {
        let message = json!({
            "id": self.reply.id,
            "type": "message",
            "role": "assistant",
            "model": self.reply.model,
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            "usage": usage_json(prompt, cached, 0),
        });
        vec![("message_start", json!({ "type": "message_start", "message": message })), ("ping", json!({ "type": "ping" }))]
    }

    /// The events for one turn event: a block opens when the kind of content changes, and a
    /// call is a whole block (its input in one `input_json_delta`).
    pub fn push(&mut self, event: TurnEvent) -> Vec<NamedEvent> {
        let mut out = Vec::new();
        match event {
            TurnEvent::Reasoning(text) if !text.is_empty() => {
                let index = self.block(Open::Thinking, &mut out);
                if self.reply.omit_thinking {
                    self.hidden.push_str(&text);
                } else {
                    out.push(delta(index, json!({ "type": "thinking_delta", "thinking": text })));
                }
            }
            TurnEvent::Text(text) if !text.is_empty() => {
                let index = self.block(Open::Text, &mut out);
                out.push(delta(index, json!({ "type": "text_delta", "text": text })));
            }
            TurnEvent::Reasoning(_) | TurnEvent::Text(_) => {}
            TurnEvent::ToolCall { id, name, arguments } => {
                self.close(&mut out);
                self.called = true;
                let index = self.blocks;
                self.blocks += 1;
                let block = json!({ "type": "tool_use", "id": tool_use_id(&id), "name": name, "input": {} });
                out.push(("content_block_start", json!({ "type": "content_block_start", "index": index, "content_block": block })));
                out.push(delta(index, json!({ "type": "input_json_delta", "partial_json": arguments.to_string() })));
                out.push(stop(index));
            }
            TurnEvent::Done { reason, usage, .. } => {
                self.close(&mut out);
                let (stop_reason, stop_sequence) = self.reply.stop(reason, &usage, self.called);
                out.push((
                    "message_delta",
                    json!({
                        "type": "message_delta",
                        "delta": { "stop_reason": stop_reason, "stop_sequence": stop_sequence },
                        "usage": usage_json(usage.prompt, usage.cached, usage.generated),
                    }),
                ));
                out.push(("message_stop", json!({ "type": "message_stop" })));
            }
            // The engine's other events and failures are the route's (`shared::turn::Turn`).
            _ => {}
        }
        out
    }

    /// An error after the stream began (the status is sent): a last `error` event.
    pub fn error(&self, error: &ApiError) -> NamedEvent {
        ("error", error_body(error))
    }

    /// The open block of this kind, or a new one (closing the one open).
    fn block(&mut self, kind: Open, out: &mut Vec<NamedEvent>) -> usize {
        if let Some((open, index)) = self.open {
            if open == kind {
                return index;
            }
        }
        self.close(out);
        let index = self.blocks;
        self.blocks += 1;
        self.open = Some((kind, index));
        let block = match kind {
            Open::Thinking => json!({ "type": "thinking", "thinking": "", "signature": "" }),
            Open::Text => json!({ "type": "text", "text": "" }),
        };
        out.push(("content_block_start", json!({ "type": "content_block_start", "index": index, "content_block": block })));
        index
    }

    fn close(&mut self, out: &mut Vec<NamedEvent>) {
        if let Some((open, index)) = self.open.take() {
            // A thinking block's signature comes last, as Anthropic sends it.
            if open == Open::Thinking && !self.hidden.is_empty() {
                let signature = hidden_thinking(&std::mem::take(&mut self.hidden));
                out.push(delta(index, json!({ "type": "signature_delta", "signature": signature })));
            }
            out.push(stop(index));
        }
    }
}

fn delta(index: usize, delta: Value) -> NamedEvent {
    ("content_block_delta", json!({ "type": "content_block_delta", "index": index, "delta": delta }))
}

fn stop(index: usize) -> NamedEvent {
    ("content_block_stop", json!({ "type": "content_block_stop", "index": index }))
}

/// An error answered on the Messages endpoints, in Anthropic's shape.
pub struct AnthropicError(pub ApiError);

impl From<ApiError> for AnthropicError {
    fn from(error: ApiError) -> Self {
        Self(error)
    }
}

impl IntoResponse for AnthropicError {
    fn into_response(self) -> Response {
        self.0.answer(error_body(&self.0))
    }
}

/// Anthropic's error types by HTTP status. Anthropic has no field for the parameter at
/// fault, so the message starts with it.
pub fn error_body(error: &ApiError) -> Value {
    let kind = match error.status {
        StatusCode::BAD_REQUEST | StatusCode::METHOD_NOT_ALLOWED | StatusCode::UNPROCESSABLE_ENTITY => "invalid_request_error",
        StatusCode::UNAUTHORIZED => "authentication_error",
        StatusCode::FORBIDDEN => "permission_error",
        StatusCode::NOT_FOUND => "not_found_error",
        StatusCode::PAYLOAD_TOO_LARGE => "request_too_large",
        StatusCode::TOO_MANY_REQUESTS => "rate_limit_error",
        // No model loaded, or the engine stopped: the request may work later.
        StatusCode::SERVICE_UNAVAILABLE => "overloaded_error",
        _ => "api_error",
    };
    let message = match &error.param {
        Some(param) => format!("{param}: {}", error.message),
        None => error.message.clone(),
    };
    json!({ "type": "error", "error": { "type": kind, "message": message } })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage() -> Usage {
        Usage { prompt: 10, cached: 6, generated: 3, ..Usage::default() }
    }

    #[test]
    fn omitted_thinking_comes_as_blocks_without_text() {
        let mut reply = MessageReply::new(5, "m".into(), vec![]);
        reply.omit_thinking = true;
        let usage = Usage { prompt: 3, generated: 2, ..Usage::default() };
        let turn = WholeReply { reasoning: "secret".into(), text: "Hi".into(), calls: vec![] };
        let body = reply.whole(&turn, StopReason::Eos, &usage);
        assert_eq!(body["content"][0]["thinking"], "");
        // The signature carries the text back (`request::assistant_message` reads it).
        assert_eq!(thinking_of_signature(body["content"][0]["signature"].as_str().unwrap()).as_deref(), Some("secret"));
        let mut stream = MessageStream::new(reply);
        let mut events = stream.push(TurnEvent::Reasoning("sec".into()));
        events.extend(stream.push(TurnEvent::Reasoning("ret".into())));
        events.extend(stream.push(TurnEvent::Text("Hi".into())));
        assert_eq!(events[0].1["content_block"]["type"], "thinking");
        assert!(events.iter().all(|(_, data)| data["delta"]["type"] != "thinking_delta"), "{events:?}");
        let kinds: Vec<&str> = events.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            kinds,
            ["content_block_start", "content_block_delta", "content_block_stop", "content_block_start", "content_block_delta"]
        );
        assert_eq!(events[1].1["delta"]["type"], "signature_delta");
        assert_eq!(thinking_of_signature(events[1].1["delta"]["signature"].as_str().unwrap()).as_deref(), Some("secret"));
        assert_eq!(thinking_of_signature("EqQBCkgIARABGAIiQL"), None, "Anthropic's signatures are opaque here");
    }

    #[test]
    fn a_whole_message_has_anthropics_shape() {
        let reply = MessageReply::new(1, "m".into(), vec![]);
        let turn = WholeReply {
            reasoning: "Hmm.".into(),
            text: "Let me look.".into(),
            calls: vec![("call_abc".into(), "weather".into(), json!({"city": "Paris"}))],
        };
        let body = reply.whole(&turn, StopReason::Eos, &usage());
        assert!(body["id"].as_str().unwrap().starts_with("msg_"));
        assert_eq!((body["type"].as_str(), body["role"].as_str(), body["model"].as_str()), (Some("message"), Some("assistant"), Some("m")));
        assert_eq!(
            body["content"],
            json!([
                {"type": "thinking", "thinking": "Hmm.", "signature": ""},
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_abc", "name": "weather", "input": {"city": "Paris"}},
            ])
        );
        assert_eq!((body["stop_reason"].as_str(), &body["stop_sequence"]), (Some("tool_use"), &Value::Null));
        assert_eq!(
            body["usage"],
            json!({"input_tokens": 4, "output_tokens": 3, "cache_read_input_tokens": 6, "cache_creation_input_tokens": 0})
        );
    }

    #[test]
    fn stop_reasons_map_to_anthropics() {
        let text = WholeReply { text: "a".into(), ..WholeReply::default() };
        let reason = |stops: Vec<&str>, reason, matched: Option<&str>| {
            let usage = Usage { stop_string: matched.map(String::from), ..usage() };
            let body = MessageReply::new(1, "m".into(), stops.into_iter().map(String::from).collect()).whole(&text, reason, &usage);
            (body["stop_reason"].as_str().unwrap().to_string(), body["stop_sequence"].as_str().map(String::from))
        };
        assert_eq!(reason(vec![], StopReason::Eos, None), ("end_turn".into(), None));
        assert_eq!(reason(vec![], StopReason::MaxTokens, None), ("max_tokens".into(), None));
        let called = WholeReply { calls: vec![("call_1".into(), "f".into(), json!({}))], ..WholeReply::default() };
        let body = MessageReply::new(1, "m".into(), vec![]).whole(&called, StopReason::MaxTokens, &usage());
        assert_eq!(body["stop_reason"], "tool_use", "whole calls are to be run, whatever followed them");
        assert_eq!(reason(vec!["END"], StopReason::StopString, Some("END")), ("stop_sequence".into(), Some("END".into())));
        assert_eq!(reason(vec!["A", "B", "C"], StopReason::StopString, Some("B")), ("stop_sequence".into(), Some("B".into())));
        // The server's own stop strings (a call's closing marker) are not the client's stop sequences.
        assert_eq!(reason(vec!["A"], StopReason::StopString, Some("</tool_call>")), ("end_turn".into(), None));
        assert_eq!(reason(vec![], StopReason::StopString, Some("</tool_call>")), ("end_turn".into(), None));
    }

    #[test]
    fn a_stream_names_the_stop_sequence_that_ended_it() {
        let mut stream = MessageStream::new(MessageReply::new(4, "m".into(), vec!["\n\n".into(), "END".into()]));
        let usage = Usage { stop_string: Some("END".into()), ..usage() };
        let events = stream.push(TurnEvent::Done { reason: StopReason::StopString, usage, timings: Default::default() });
        assert_eq!(events[0].1["delta"], json!({"stop_reason": "stop_sequence", "stop_sequence": "END"}));
    }

    #[test]
    fn a_stream_is_the_documented_event_sequence() {
        let mut stream = MessageStream::new(MessageReply::new(2, "m".into(), vec![]));
        let mut events = stream.opening(10, 6);
        assert_eq!(events[0].1["message"]["usage"]["input_tokens"], 4);
        assert_eq!(events[0].1["message"]["content"], json!([]));
        assert_eq!(events[0].1["message"]["stop_reason"], Value::Null);
        for event in [
            TurnEvent::Reasoning("Hm".into()),
            TurnEvent::Reasoning("m.".into()),
            TurnEvent::Text(String::new()),
            TurnEvent::Text("Hi".into()),
            TurnEvent::Text("!".into()),
            TurnEvent::ToolCall { id: "call_1".into(), name: "f".into(), arguments: json!({"x": 1}) },
            TurnEvent::Done { reason: StopReason::Eos, usage: usage(), timings: Default::default() },
        ] {
            events.extend(stream.push(event));
        }
        let names: Vec<&str> = events.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "ping",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop",
            ]
        );
        for (name, data) in &events {
            assert_eq!(data["type"], *name, "each event's data names its type");
        }
        let indices: Vec<u64> = events.iter().filter_map(|(_, d)| d["index"].as_u64()).collect();
        assert_eq!(indices, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2]);
        assert_eq!(events[2].1["content_block"], json!({"type": "thinking", "thinking": "", "signature": ""}));
        assert_eq!(events[3].1["delta"], json!({"type": "thinking_delta", "thinking": "Hm"}));
        assert_eq!(events[6].1["content_block"], json!({"type": "text", "text": ""}));
        assert_eq!(events[8].1["delta"], json!({"type": "text_delta", "text": "!"}));
        assert_eq!(events[10].1["content_block"], json!({"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}));
        assert_eq!(events[11].1["delta"], json!({"type": "input_json_delta", "partial_json": "{\"x\":1}"}));
        assert_eq!(events[13].1["delta"], json!({"stop_reason": "tool_use", "stop_sequence": null}));
        assert_eq!(events[13].1["usage"]["output_tokens"], 3);
    }

    #[test]
    fn an_empty_reply_still_ends_the_message() {
        let mut stream = MessageStream::new(MessageReply::new(3, "m".into(), vec![]));
        let names: Vec<&str> = stream
            .push(TurnEvent::Done { reason: StopReason::MaxTokens, usage: usage(), timings: Default::default() })
            .iter()
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(names, ["message_delta", "message_stop"]);
    }

    #[test]
    fn errors_have_anthropics_shape_and_types() {
        let body = error_body(&ApiError::invalid(Some("max_tokens"), "max_tokens is required."));
        assert_eq!(
            body,
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: max_tokens is required."}})
        );
        assert_eq!(error_body(&ApiError::unauthorized())["error"]["type"], "authentication_error");
        let unknown = crate::PoolError::Unknown { asked: "x".into(), available: vec!["y".into()] };
        assert_eq!(error_body(&ApiError::from(unknown))["error"]["type"], "not_found_error");
        assert_eq!(error_body(&ApiError::body_too_large(1 << 20))["error"]["type"], "request_too_large");
        let no_room = crate::PoolError::NoRoom { name: "x".into(), needs: 2, in_use: 2, limit: 3, waited: Default::default() };
        assert_eq!(error_body(&ApiError::from(no_room))["error"]["type"], "overloaded_error");
        let internal = ApiError::invalid(None, "boom").with_status(StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(error_body(&internal)["error"]["type"], "api_error");
    }
}
