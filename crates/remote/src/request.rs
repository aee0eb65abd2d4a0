//! What Confab sends: the conversation as OpenAI chat messages (text, images as `data:` URLs,
//! audio as `input_audio`, assistant tool calls and tool results), the tools the model may call,
//! and the sampling settings as the API's fields.

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::tool_calls::RemoteToolCall;

/// One chat request: the model the provider listed, the turns, the settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<Message>,
    pub sampling: Sampling,
    /// OpenAI function tools the model may call (`{"type": "function", "function": {"name",
    /// "description", "parameters"}}`); sent only when there are some.
    pub tools: Vec<Value>,
    /// `"auto"`, `"none"`, `"required"` or `{"type": "function", "function": {"name": …}}`;
    /// sent only with tools (the provider's default is `"auto"`).
    pub tool_choice: Option<Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// A `tool` message's parts are sent as text only (OpenAI's chat API takes no media
    /// there): images a tool returned go in a `user` message after the tool messages.
    pub parts: Vec<Part>,
    /// An assistant turn's calls (its text may then be empty).
    pub tool_calls: Vec<RemoteToolCall>,
    /// A `tool` message: the id of the call it answers.
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn text(role: &str, text: impl Into<String>) -> Message {
        Message::new(role, vec![Part::Text(text.into())])
    }

    /// A message of text and media, without tool calls.
    pub fn new(role: &str, parts: Vec<Part>) -> Message {
        Message { role: role.into(), parts, tool_calls: Vec::new(), tool_call_id: None }
    }

    /// An assistant turn that asked for `calls` after writing `text` (empty when it wrote none).
    pub fn assistant_calls(text: impl Into<String>, calls: Vec<RemoteToolCall>) -> Message {
        let text = text.into();
        let parts = if text.is_empty() { Vec::new() } else { vec![Part::Text(text)] };
        Message { tool_calls: calls, ..Message::new("assistant", parts) }
    }

    /// The answer to call `call_id`: the tool's text (or the error the app reports to the model).
    pub fn tool_result(call_id: impl Into<String>, text: impl Into<String>) -> Message {
        Message { tool_call_id: Some(call_id.into()), ..Message::text("tool", text) }
    }
}

#[derive(Clone, PartialEq)]
pub enum Part {
    Text(String),
    /// An image's file bytes and MIME type (`image/png`, ...), sent inline: a provider is never
    /// asked to fetch a URL.
    Image {
        mime: String,
        bytes: Vec<u8>,
    },
    /// A clip's file bytes; `format` is its extension as OpenAI names it (`wav`, `mp3`, ...).
    Audio {
        format: String,
        bytes: Vec<u8>,
    },
}

impl std::fmt::Debug for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Part::Text(text) => f.debug_tuple("Text").field(text).finish(),
            Part::Image { mime, bytes } => write!(f, "Image({mime}, {} bytes)", bytes.len()),
            Part::Audio { format, bytes } => write!(f, "Audio({format}, {} bytes)", bytes.len()),
        }
    }
}

/// The sampling settings. OpenAI's own fields (temperature, top_p, max_tokens, seed, stop,
/// presence_penalty) are always sent when set; `top_k`, `min_p` and `repetition_penalty` are
/// extensions that vLLM, SGLang, llama.cpp's server and Ollama accept but hosted OpenAI
/// refuses, so they are sent only when they change something (not 0, 0 and 1).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sampling {
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub top_k: Option<u32>,
    pub min_p: Option<f32>,
    pub repetition_penalty: Option<f32>,
    pub presence_penalty: Option<f32>,
    pub max_tokens: Option<u32>,
    pub seed: Option<u64>,
    pub stop: Vec<String>,
}

/// OpenAI accepts at most four stop sequences.
pub const MAX_STOPS: usize = 4;

impl Sampling {
    fn write(&self, body: &mut Map<String, Value>) {
        let mut put = |name: &str, value: Value| {
            body.insert(name.into(), value);
        };
        if let Some(t) = self.temperature {
            put("temperature", json!(t));
        }
        if let Some(p) = self.top_p {
            put("top_p", json!(p));
        }
        if let Some(n) = self.max_tokens.filter(|&n| n > 0) {
            put("max_tokens", json!(n));
        }
        if let Some(seed) = self.seed {
            put("seed", json!(seed));
        }
        if !self.stop.is_empty() {
            if self.stop.len() > MAX_STOPS {
                tracing::warn!(stops = self.stop.len(), "only the first {MAX_STOPS} stop sequences are sent");
            }
            put("stop", json!(self.stop.iter().take(MAX_STOPS).collect::<Vec<_>>()));
        }
        if let Some(p) = self.presence_penalty.filter(|&p| p != 0.0) {
            put("presence_penalty", json!(p));
        }
        if let Some(k) = self.top_k.filter(|&k| k > 0) {
            put("top_k", json!(k));
        }
        if let Some(p) = self.min_p.filter(|&p| p > 0.0) {
            put("min_p", json!(p));
        }
        if let Some(p) = self.repetition_penalty.filter(|&p| p != 1.0) {
            put("repetition_penalty", json!(p));
        }
    }
}

impl ChatRequest {
    /// The streamed request's JSON body.
    pub fn body(&self) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("messages".into(), Value::Array(self.messages.iter().map(message_json).collect()));
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({ "include_usage": true }));
        self.sampling.write(&mut body);
        if !self.tools.is_empty() {
            body.insert("tools".into(), Value::Array(self.tools.clone()));
            if let Some(choice) = &self.tool_choice {
                body.insert("tool_choice".into(), choice.clone());
            }
        }
        Value::Object(body)
    }
}

/// Text alone goes as a plain string (every server takes that); with media, as parts. An
/// assistant turn's calls go as `tool_calls` (with `null` content when it wrote no text), a
/// tool result as text with its call's id.
fn message_json(message: &Message) -> Value {
    let texts = || message.parts.iter().filter_map(|p| if let Part::Text(t) = p { Some(t.as_str()) } else { None }).collect::<Vec<_>>();
    let only_text = message.parts.iter().all(|p| matches!(p, Part::Text(_)));
    let mut json = if let Some(call_id) = &message.tool_call_id {
        if !only_text {
            tracing::warn!(call_id = %call_id, "a tool message carries media, which OpenAI's chat API does not take there; only its text is sent");
        }
        json!({ "role": message.role, "tool_call_id": call_id, "content": texts().join("\n\n") })
    } else if only_text {
        let text = texts().join("\n\n");
        let content = if text.is_empty() && !message.tool_calls.is_empty() { Value::Null } else { json!(text) };
        json!({ "role": message.role, "content": content })
    } else {
        json!({ "role": message.role, "content": message.parts.iter().map(part_json).collect::<Vec<_>>() })
    };
    if !message.tool_calls.is_empty() {
        let calls: Vec<Value> = message
            .tool_calls
            .iter()
            .map(|call| json!({ "id": call.id, "type": "function", "function": { "name": call.name, "arguments": call.arguments } }))
            .collect();
        json["tool_calls"] = Value::Array(calls);
    }
    json
}

fn part_json(part: &Part) -> Value {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    match part {
        Part::Text(text) => json!({ "type": "text", "text": text }),
        Part::Image { mime, bytes } => json!({ "type": "image_url", "image_url": { "url": format!("data:{mime};base64,{}", b64(bytes)) } }),
        Part::Audio { format, bytes } => json!({ "type": "input_audio", "input_audio": { "data": b64(bytes), "format": format } }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_become_api_fields_and_extensions_only_when_they_matter() {
        let request = ChatRequest {
            model: "m".into(),
            messages: vec![Message::text("user", "hi")],
            sampling: Sampling {
                temperature: Some(0.5),
                top_p: Some(0.9),
                top_k: Some(0),
                min_p: Some(0.0),
                repetition_penalty: Some(1.0),
                presence_penalty: Some(0.0),
                max_tokens: Some(64),
                seed: Some(7),
                stop: (0..6).map(|i| i.to_string()).collect(),
            },
            tools: Vec::new(),
            tool_choice: Some(json!("required")),
        };
        let body = request.body();
        assert_eq!(body["temperature"], json!(0.5));
        assert_eq!(body["max_tokens"], json!(64));
        assert_eq!(body["seed"], json!(7));
        assert_eq!(body["stop"], json!(["0", "1", "2", "3"]));
        assert_eq!(body["stream_options"]["include_usage"], json!(true));
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none(), "no tools, no tool fields");
        for neutral in ["top_k", "min_p", "repetition_penalty", "presence_penalty"] {
            assert!(body.get(neutral).is_none(), "{neutral} at its neutral value is not sent");
        }
        let mut sampling = request.sampling.clone();
        (sampling.top_k, sampling.min_p, sampling.repetition_penalty) = (Some(40), Some(0.05), Some(1.1));
        let body = ChatRequest { sampling, ..request }.body();
        assert_eq!((body["top_k"].clone(), body["repetition_penalty"].as_f64().map(|p| (p * 10.0).round())), (json!(40), Some(11.0)));
    }

    #[test]
    fn media_become_content_parts() {
        let message = Message::new(
            "user",
            vec![
                Part::Text("what is this?".into()),
                Part::Image { mime: "image/png".into(), bytes: vec![1, 2, 3] },
                Part::Audio { format: "wav".into(), bytes: vec![4, 5] },
            ],
        );
        let json = message_json(&message);
        assert_eq!(json["content"][0], json!({ "type": "text", "text": "what is this?" }));
        assert_eq!(json["content"][1]["image_url"]["url"], json!("data:image/png;base64,AQID"));
        assert_eq!(json["content"][2], json!({ "type": "input_audio", "input_audio": { "data": "BAU=", "format": "wav" } }));
        assert_eq!(message_json(&Message::text("assistant", "ok"))["content"], json!("ok"));
    }

    #[test]
    fn tools_calls_and_results_take_the_api_shapes() {
        let forecast = json!({ "type": "function", "function": { "name": "forecast", "parameters": { "type": "object" } } });
        let call = RemoteToolCall { id: "call_1".into(), name: "forecast".into(), arguments: "{\"city\":\"Bern\"}".into() };
        let request = ChatRequest {
            model: "m".into(),
            messages: vec![
                Message::text("user", "Weather in Bern?"),
                Message::assistant_calls("", vec![call.clone()]),
                Message::tool_result("call_1", "12 °C"),
                // The image the tool returned, in a user message after the results.
                Message::new(
                    "user",
                    vec![
                        Part::Text("The forecast tool returned this image.".into()),
                        Part::Image { mime: "image/png".into(), bytes: vec![1] },
                    ],
                ),
                Message::assistant_calls("Checking again.", vec![call]),
            ],
            sampling: Sampling::default(),
            tools: vec![forecast.clone()],
            tool_choice: Some(json!("required")),
        };
        let body = request.body();
        assert_eq!((body["tools"].clone(), body["tool_choice"].clone()), (json!([forecast]), json!("required")));
        let messages = &body["messages"];
        let expected_call =
            json!([{ "id": "call_1", "type": "function", "function": { "name": "forecast", "arguments": "{\"city\":\"Bern\"}" } }]);
        assert_eq!(messages[1], json!({ "role": "assistant", "content": null, "tool_calls": expected_call }));
        assert_eq!(messages[2], json!({ "role": "tool", "tool_call_id": "call_1", "content": "12 °C" }));
        assert_eq!(messages[3]["content"][1]["type"], "image_url");
        assert_eq!((messages[4]["content"].clone(), messages[4]["tool_calls"].clone()), (json!("Checking again."), expected_call));
        assert!(messages[0].get("tool_calls").is_none() && messages[0].get("tool_call_id").is_none());
    }
}
