//! What Confab sends: the conversation as OpenAI chat messages (text, images as `data:` URLs,
//! audio as `input_audio`), and the sampling settings as the API's fields.

use base64::Engine as _;
use serde_json::{json, Map, Value};

/// One chat request: the model the provider listed, the turns, the settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<Message>,
    pub sampling: Sampling,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: String,
    pub parts: Vec<Part>,
}

impl Message {
    pub fn text(role: &str, text: impl Into<String>) -> Message {
        Message { role: role.into(), parts: vec![Part::Text(text.into())] }
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
        Value::Object(body)
    }
}

/// Text alone goes as a plain string (every server takes that); with media, as parts.
fn message_json(message: &Message) -> Value {
    let only_text = message.parts.iter().all(|p| matches!(p, Part::Text(_)));
    if only_text {
        let text: Vec<&str> = message.parts.iter().filter_map(|p| if let Part::Text(t) = p { Some(t.as_str()) } else { None }).collect();
        return json!({ "role": message.role, "content": text.join("\n\n") });
    }
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let parts: Vec<Value> = message
        .parts
        .iter()
        .map(|part| match part {
            Part::Text(text) => json!({ "type": "text", "text": text }),
            Part::Image { mime, bytes } => {
                json!({ "type": "image_url", "image_url": { "url": format!("data:{mime};base64,{}", b64(bytes)) } })
            }
            Part::Audio { format, bytes } => json!({ "type": "input_audio", "input_audio": { "data": b64(bytes), "format": format } }),
        })
        .collect();
    json!({ "role": message.role, "content": parts })
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
        };
        let body = request.body();
        assert_eq!(body["temperature"], json!(0.5));
        assert_eq!(body["max_tokens"], json!(64));
        assert_eq!(body["seed"], json!(7));
        assert_eq!(body["stop"], json!(["0", "1", "2", "3"]));
        assert_eq!(body["stream_options"]["include_usage"], json!(true));
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
        let message = Message {
            role: "user".into(),
            parts: vec![
                Part::Text("what is this?".into()),
                Part::Image { mime: "image/png".into(), bytes: vec![1, 2, 3] },
                Part::Audio { format: "wav".into(), bytes: vec![4, 5] },
            ],
        };
        let json = message_json(&message);
        assert_eq!(json["content"][0], json!({ "type": "text", "text": "what is this?" }));
        assert_eq!(json["content"][1]["image_url"]["url"], json!("data:image/png;base64,AQID"));
        assert_eq!(json["content"][2], json!({ "type": "input_audio", "input_audio": { "data": "BAU=", "format": "wav" } }));
        assert_eq!(message_json(&Message::text("assistant", "ok"))["content"], json!("ok"));
    }
}
