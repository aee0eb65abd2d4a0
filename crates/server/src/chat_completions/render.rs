//! The answers' JSON, whole and as stream chunks, for chat and for plain completions.

use std::time::{SystemTime, UNIX_EPOCH};

use confab_engine::{StopReason, Usage};
use serde_json::{json, Value};

use confab_turn::WholeReply;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Chat,
    Completion,
}

/// One reply's identity: every chunk of a stream carries the same id, time and model.
#[derive(Debug, Clone)]
pub struct Reply {
    pub endpoint: Endpoint,
    pub id: String,
    pub created: u64,
    pub model: String,
}

impl Reply {
    pub fn new(endpoint: Endpoint, serial: u64, model: String) -> Self {
        let created = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let prefix = match endpoint {
            Endpoint::Chat => "chatcmpl",
            Endpoint::Completion => "cmpl",
        };
        Self { endpoint, id: format!("{prefix}-{created:x}{serial:06x}"), created, model }
    }

    fn object(&self, chunk: bool) -> &'static str {
        match (self.endpoint, chunk) {
            (Endpoint::Chat, false) => "chat.completion",
            (Endpoint::Chat, true) => "chat.completion.chunk",
            (Endpoint::Completion, _) => "text_completion",
        }
    }

    fn envelope(&self, chunk: bool, choices: Value) -> Value {
        json!({ "id": self.id, "object": self.object(chunk), "created": self.created, "model": self.model, "choices": choices })
    }

    /// The non-streamed answer.
    pub fn whole(&self, text: &str, reason: StopReason, usage: &Usage) -> Value {
        let choice = match self.endpoint {
            Endpoint::Chat => {
                json!({ "index": 0, "message": { "role": "assistant", "content": text }, "logprobs": null, "finish_reason": finish_reason(reason) })
            }
            Endpoint::Completion => json!({ "index": 0, "text": text, "logprobs": null, "finish_reason": finish_reason(reason) }),
        };
        let mut body = self.envelope(false, json!([choice]));
        body["usage"] = usage_json(usage);
        body
    }

    /// A whole chat answer: the text, the reasoning apart, and the calls.
    pub fn whole_turn(&self, turn: &WholeReply, reason: StopReason, usage: &Usage) -> Value {
        let called = !turn.calls.is_empty();
        let mut message = json!({ "role": "assistant", "content": if called && turn.text.is_empty() { Value::Null } else { Value::from(turn.text.as_str()) } });
        if !turn.reasoning.is_empty() {
            message["reasoning_content"] = Value::from(turn.reasoning.as_str());
        }
        if called {
            let calls: Vec<Value> = turn.calls.iter().map(|(id, name, arguments)| call_json(None, id, name, arguments)).collect();
            message["tool_calls"] = Value::Array(calls);
        }
        let choice = json!({ "index": 0, "message": message, "logprobs": null, "finish_reason": chat_finish_reason(reason, called) });
        let mut body = self.envelope(false, json!([choice]));
        body["usage"] = usage_json(usage);
        body
    }

    /// A stream chunk of reasoning.
    pub fn reasoning_chunk(&self, text: &str) -> Value {
        self.delta(json!({ "reasoning_content": text }))
    }

    /// A stream chunk with one whole call (the `index`-th of the reply).
    pub fn call_chunk(&self, index: usize, id: &str, name: &str, arguments: &Value) -> Value {
        self.delta(json!({ "tool_calls": [call_json(Some(index), id, name, arguments)] }))
    }

    /// The chat stream's last chunk; `called`: the reply called tools.
    pub fn final_chat_chunk(&self, reason: StopReason, called: bool) -> Value {
        self.envelope(true, json!([{ "index": 0, "delta": {}, "logprobs": null, "finish_reason": chat_finish_reason(reason, called) }]))
    }

    fn delta(&self, delta: Value) -> Value {
        self.envelope(true, json!([{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": null }]))
    }

    /// The chunk that opens a chat stream (the role, as OpenAI sends it); none for completions.
    pub fn opening(&self) -> Option<Value> {
        (self.endpoint == Endpoint::Chat).then(|| {
            self.envelope(
                true,
                json!([{ "index": 0, "delta": { "role": "assistant", "content": "" }, "logprobs": null, "finish_reason": null }]),
            )
        })
    }

    pub fn text_chunk(&self, text: &str) -> Value {
        self.envelope(true, json!([self.choice(text, None)]))
    }

    pub fn final_chunk(&self, reason: StopReason) -> Value {
        self.envelope(true, json!([self.choice("", Some(reason))]))
    }

    /// Sent last when the client asked for `stream_options.include_usage`: no choices.
    pub fn usage_chunk(&self, usage: &Usage) -> Value {
        let mut body = self.envelope(true, json!([]));
        body["usage"] = usage_json(usage);
        body
    }

    fn choice(&self, text: &str, reason: Option<StopReason>) -> Value {
        let finish = reason.map(finish_reason);
        match (self.endpoint, reason) {
            (Endpoint::Chat, None) => json!({ "index": 0, "delta": { "content": text }, "logprobs": null, "finish_reason": null }),
            (Endpoint::Chat, Some(_)) => json!({ "index": 0, "delta": {}, "logprobs": null, "finish_reason": finish }),
            (Endpoint::Completion, _) => json!({ "index": 0, "text": text, "logprobs": null, "finish_reason": finish }),
        }
    }
}

/// A call as Chat Completions writes it: the arguments as JSON text.
fn call_json(index: Option<usize>, id: &str, name: &str, arguments: &Value) -> Value {
    let mut call = json!({ "id": id, "type": "function", "function": { "name": name, "arguments": arguments.to_string() } });
    if let Some(index) = index {
        call["index"] = Value::from(index);
    }
    call
}

/// `tool_calls` when the reply called tools, even when a token limit cut what it wrote after
/// them (the calls are whole; an agent should run them), as the Messages API's `tool_use`.
fn chat_finish_reason(reason: StopReason, called: bool) -> &'static str {
    match reason {
        StopReason::Eos | StopReason::StopString | StopReason::MaxTokens | StopReason::Context if called => "tool_calls",
        _ => finish_reason(reason),
    }
}

/// OpenAI's names: `stop` for a natural end or a stop sequence, `length` for a token limit.
fn finish_reason(reason: StopReason) -> &'static str {
    match reason {
        StopReason::Eos | StopReason::StopString | StopReason::Cancelled => "stop",
        StopReason::MaxTokens | StopReason::Context => "length",
    }
}

/// `cached_tokens`: prompt tokens the prefix cache served instead of computing them. A reply
/// whose grammar forced tokens also has `completion_tokens_details.forced_tokens` (fed without
/// sampling) and `forward_passes_saved` (grammar jump's savings; Confab's own fields, which
/// `bench/structured.py` reads to tell the mask's cost from the jump's). A speculative reply
/// has `accepted_prediction_tokens` and `rejected_prediction_tokens` there, as OpenAI's
/// predicted outputs report them, and Confab's own `usage.speculative` (the counts, the
/// acceptance rate and tokens per verifying pass).
fn usage_json(usage: &Usage) -> Value {
    let mut body = json!({
        "prompt_tokens": usage.prompt,
        "completion_tokens": usage.generated,
        "total_tokens": usage.prompt + usage.generated,
        "prompt_tokens_details": { "cached_tokens": usage.cached },
    });
    if usage.forced > 0 {
        body["completion_tokens_details"] = json!({ "forced_tokens": usage.forced, "forward_passes_saved": usage.passes_saved });
    }
    if usage.draft_proposed > 0 {
        let details = body.as_object_mut().and_then(|b| b.entry("completion_tokens_details").or_insert_with(|| json!({})).as_object_mut());
        if let Some(details) = details {
            details.insert("accepted_prediction_tokens".into(), json!(usage.draft_accepted));
            details.insert("rejected_prediction_tokens".into(), json!(usage.draft_proposed - usage.draft_accepted));
        }
    }
    if let Some(stats) = usage.speculative() {
        body["speculative"] = json!(stats);
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_answers_carry_usage_with_cached_tokens() {
        let reply = Reply::new(Endpoint::Chat, 1, "m".into());
        let usage = Usage { prompt: 10, cached: 6, generated: 3, ..Usage::default() };
        let body = reply.whole("hi", StopReason::MaxTokens, &usage);
        assert_eq!(body["object"], "chat.completion");
        assert_eq!(body["choices"][0]["message"]["content"], "hi");
        assert_eq!(body["choices"][0]["finish_reason"], "length");
        assert_eq!(body["usage"]["total_tokens"], 13);
        assert_eq!(body["usage"]["prompt_tokens_details"]["cached_tokens"], 6);
        assert!(body["usage"].get("completion_tokens_details").is_none(), "free text has nothing forced to report");
    }

    #[test]
    fn constrained_usage_counts_forced_tokens_and_passes_saved() {
        let reply = Reply::new(Endpoint::Chat, 3, "m".into());
        let usage = Usage { prompt: 10, generated: 12, forced: 7, passes_saved: 5, ..Usage::default() };
        let details = &reply.usage_chunk(&usage)["usage"]["completion_tokens_details"];
        assert_eq!(details, &json!({"forced_tokens": 7, "forward_passes_saved": 5}));
    }

    #[test]
    fn speculative_usage_counts_accepted_and_rejected_proposals() {
        let reply = Reply::new(Endpoint::Chat, 4, "m".into());
        let usage = Usage { prompt: 10, generated: 30, draft_proposed: 40, draft_accepted: 25, draft_steps: 10, ..Usage::default() };
        let body = reply.usage_chunk(&usage);
        let details = &body["usage"]["completion_tokens_details"];
        assert_eq!(details, &json!({"accepted_prediction_tokens": 25, "rejected_prediction_tokens": 15}));
        let stats = json!({"proposed": 40, "accepted": 25, "from_grammar": 0, "verifying_passes": 10, "acceptance_rate": 0.625, "tokens_per_step": 3.5});
        assert_eq!(body["usage"]["speculative"], stats);
        assert!(Reply::new(Endpoint::Chat, 5, "m".into()).usage_chunk(&Usage::default())["usage"].get("speculative").is_none());
    }

    #[test]
    fn completion_chunks_carry_text() {
        let reply = Reply::new(Endpoint::Completion, 2, "m".into());
        assert!(reply.opening().is_none());
        assert_eq!(reply.text_chunk("a")["choices"][0]["text"], "a");
        assert_eq!(reply.final_chunk(StopReason::StopString)["choices"][0]["finish_reason"], "stop");
        assert_eq!(reply.usage_chunk(&Usage::default())["choices"], json!([]));
    }
}
