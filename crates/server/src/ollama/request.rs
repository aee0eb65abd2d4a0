//! Ollama's requests (`/api/chat`, `/api/generate`, `/api/embed`, `/api/pull`...) as Ollama's
//! API reference defines them, and how they become a [`ChatTurn`]: the same turn the other APIs
//! make, so every rule of it (tools, thinking, sampling, the reply read back) is the turn
//! layer's. This file only translates names and shapes.

use confab_engine::{ChatMessage, Constraint, MediaItem, ModelInfo, Prompt, SamplingChoices, SamplingParams, ToolCall};
use confab_turn::{reply_token_limit, sampling_params, Thinking};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::chat_completions::chat_messages::{base64_image, call_arguments, image_url_item};
use crate::shared::error::ApiError;
use crate::shared::function_tools::{self, ToolField};
use crate::shared::turn::{ChatTurn, ToolChoice, Tools};
use crate::KeepAlive;

pub(crate) const OLLAMA_REFERENCE: &str = "Ollama's API reference (docs/api.md in ollama/ollama)";

/// `POST /api/chat`.
#[derive(Debug, Deserialize)]
pub struct ChatRequest {
    pub model: Option<String>,
    #[serde(default)]
    pub messages: Vec<Message>,
    #[serde(default)]
    pub tools: Vec<ToolField>,
    /// Confab's own (Ollama has none): `"auto"`, `"none"`, `"required"`, a tool's name, or
    /// OpenAI's `{"type": "function", "function": {"name"}}`. A reply that must call a tool is
    /// held to the call's grammar by the turn layer.
    pub tool_choice: Option<Value>,
    #[serde(flatten)]
    pub common: Common,
}

/// `POST /api/generate`.
#[derive(Debug, Deserialize)]
pub struct GenerateRequest {
    pub model: Option<String>,
    #[serde(default)]
    pub prompt: String,
    pub system: Option<String>,
    /// The prompt as the model reads it, without the chat template.
    #[serde(default)]
    pub raw: bool,
    pub suffix: Option<String>,
    pub template: Option<String>,
    pub context: Option<Vec<i64>>,
    #[serde(default)]
    pub images: Vec<String>,
    #[serde(flatten)]
    pub common: Common,
}

/// What chat and generate share.
#[derive(Debug, Deserialize)]
pub struct Common {
    /// Ollama streams unless told not to.
    #[serde(default = "streams")]
    pub stream: bool,
    /// `"json"`, or a JSON Schema object.
    pub format: Option<Value>,
    /// `true`/`false`, or `"low"`, `"medium"`, `"high"`.
    pub think: Option<Value>,
    /// Ollama's sampling and runner settings, by its names (`options`).
    pub options: Option<Value>,
    /// A number of seconds, a duration (`"5m"`, `"1h30m"`), 0 (unload now) or negative (forever).
    pub keep_alive: Option<Value>,
}

fn streams() -> bool {
    true
}

#[derive(Debug, Deserialize)]
pub struct Message {
    pub role: String,
    /// Some clients send `null` on an assistant message that only calls tools.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub content: String,
    /// Base64 images (a data URL is taken too).
    #[serde(default)]
    pub images: Vec<String>,
    /// An assistant message's reasoning.
    pub thinking: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<ToolCallField>,
    /// A tool message: the tool that gave this result.
    pub tool_name: Option<String>,
    /// A tool message: the call it answers, where the client kept the call's id.
    pub tool_call_id: Option<String>,
}

/// Which of the calls not yet answered, as (id, name), a tool result answers: the one with its
/// id, else the oldest of its tool's, else the oldest (Ollama's results come in call order).
fn answered_call(open: &[(String, String)], id: Option<&str>, tool_name: Option<&str>) -> Option<usize> {
    let by_id = id.and_then(|id| open.iter().position(|(open_id, _)| open_id == id));
    let by_name = || tool_name.and_then(|name| open.iter().position(|(_, open_name)| open_name == name));
    by_id.or_else(by_name).or_else(|| (!open.is_empty() && tool_name.is_none()).then_some(0))
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(deserializer)?.unwrap_or_default())
}

/// `{"function": {"name", "arguments": {...}}}`, with an `id` where the reply gave one.
#[derive(Debug, Deserialize)]
pub struct ToolCallField {
    pub id: Option<String>,
    pub function: CalledFunction,
}

#[derive(Debug, Deserialize)]
pub struct CalledFunction {
    pub name: String,
    /// An object (Ollama's shape); JSON text of one is taken too.
    #[serde(default)]
    pub arguments: Value,
}

/// `{"type": "function", "function": {"name", "description", "parameters"}}`.
/// `POST /api/embed` (`input`) and the legacy `POST /api/embeddings` (`prompt`).
#[derive(Debug, Deserialize)]
pub struct EmbedRequest {
    pub model: Option<String>,
    #[serde(default)]
    pub input: Value,
    pub prompt: Option<String>,
    pub dimensions: Option<i64>,
    pub truncate: Option<bool>,
    pub options: Option<Value>,
    pub keep_alive: Option<Value>,
}

/// `POST /api/show` (`model`, or the older `name`).
#[derive(Debug, Deserialize)]
pub struct ShowRequest {
    pub model: Option<String>,
    pub name: Option<String>,
}

/// `POST /api/pull`: `model` (or the older `name`), `stream`.
#[derive(Debug, Deserialize)]
pub struct PullRequest {
    pub model: Option<String>,
    pub name: Option<String>,
    #[serde(default = "streams")]
    pub stream: bool,
}

impl EmbedRequest {
    /// `/api/embed`'s `input`: a string or a non-empty list of strings, none empty.
    pub fn texts(&self) -> Result<Vec<String>, ApiError> {
        let texts = match &self.input {
            Value::String(text) => vec![text.clone()],
            Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_string) => {
                items.iter().filter_map(Value::as_str).map(str::to_string).collect()
            }
            Value::Null => return Err(ApiError::invalid(Some("input"), "input is required: a string or a list of strings.")),
            _ => return Err(ApiError::invalid(Some("input"), "input must be a string or a non-empty list of strings.")),
        };
        if texts.iter().any(String::is_empty) {
            return Err(ApiError::invalid(Some("input"), "input has an empty string; every input must have some text."));
        }
        Ok(texts)
    }

    /// `keep_alive`, where given.
    pub fn keep_alive(&self) -> Result<Option<KeepAlive>, ApiError> {
        self.keep_alive.as_ref().filter(|v| !v.is_null()).map(parse_keep_alive).transpose()
    }
}

impl ShowRequest {
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref().or(self.name.as_deref())
    }
}

impl PullRequest {
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref().or(self.name.as_deref())
    }
}

impl ChatRequest {
    /// The conversation as the engine takes it.
    pub fn chat_messages(&self, model: &ModelInfo, model_name: &str) -> Result<Vec<ChatMessage>, ApiError> {
        let mut out = Vec::with_capacity(self.messages.len());
        // Calls not yet answered, as (id, name): a tool message answers one by its id, by its
        // tool's name, or else the oldest (Ollama's calls carry no ids; results come in order).
        let mut open: Vec<(String, String)> = Vec::new();
        for (i, message) in self.messages.iter().enumerate() {
            let role = match message.role.as_str() {
                role @ ("system" | "user" | "assistant" | "tool") => role,
                other => {
                    return Err(ApiError::invalid(
                        Some(&format!("messages[{i}].role")),
                        format!("messages[{i}].role `{other}` is not supported; use system, user, assistant or tool."),
                    ))
                }
            };
            let media = message
                .images
                .iter()
                .enumerate()
                .map(|(j, image)| image_item(image, model, model_name, &format!("messages[{i}].images[{j}]")))
                .collect::<Result<Vec<_>, _>>()?;
            let mut chat = ChatMessage::new(role, message.content.clone()).with_media(media);
            if role == "assistant" {
                for (j, call) in message.tool_calls.iter().enumerate() {
                    let param = format!("messages[{i}].tool_calls[{j}].function.arguments");
                    let arguments = match &call.function.arguments {
                        Value::Null => Value::Object(Map::new()),
                        other => call_arguments(other, &param)?,
                    };
                    let id = call.id.clone().unwrap_or_else(|| format!("call_{i}_{j}"));
                    open.push((id.clone(), call.function.name.clone()));
                    chat.tool_calls.push(ToolCall { id, name: call.function.name.clone(), arguments });
                }
                chat.reasoning_content = message.thinking.clone().filter(|t| !t.is_empty());
            }
            if role == "tool" {
                let answered = answered_call(&open, message.tool_call_id.as_deref(), message.tool_name.as_deref());
                // A result with no call before it (a client replaying only results) still goes
                // to the template, under its tool's name.
                match answered.map(|at| open.remove(at)) {
                    Some((id, name)) => {
                        chat.tool_call_id = Some(id);
                        chat.name = message.tool_name.clone().or(Some(name));
                    }
                    None => chat.name = message.tool_name.clone(),
                }
            }
            out.push(chat);
        }
        Ok(out)
    }

    /// The tools and the choice, checked by the turn layer.
    pub fn tools(&self) -> Result<Tools, ApiError> {
        let definitions = function_tools::definitions(&self.tools)?;
        let choice = match &self.tool_choice {
            None | Some(Value::Null) if definitions.is_empty() => ToolChoice::None,
            None | Some(Value::Null) => ToolChoice::Auto,
            Some(Value::String(mode)) => match mode.as_str() {
                "none" => ToolChoice::None,
                "auto" => ToolChoice::Auto,
                "required" => ToolChoice::Required,
                name => ToolChoice::Named(name.to_string()),
            },
            Some(other) => match other.pointer("/function/name").and_then(Value::as_str) {
                Some(name) => ToolChoice::Named(name.to_string()),
                None => {
                    return Err(ApiError::invalid(
                        Some("tool_choice"),
                        format!("tool_choice must be \"auto\", \"none\", \"required\", a tool's name, or {{\"type\": \"function\", \"function\": {{\"name\"}}}}; got {other}."),
                    ))
                }
            },
        };
        Ok(Tools::new(definitions, choice)?)
    }

    /// The turn for `model`: the messages, tools, thinking, format and sampling.
    pub fn turn(&self, model: &ModelInfo, model_name: &str) -> Result<ChatTurn, ApiError> {
        let sampling = self.common.sampling(&model.default_sampling)?;
        let mut turn = ChatTurn::new(Prompt::Chat(self.chat_messages(model, model_name)?), sampling);
        turn.tools = self.tools()?;
        turn.thinking = self.common.thinking()?;
        turn.constraint = self.common.constraint()?;
        Ok(turn)
    }
}

impl GenerateRequest {
    /// Fields this server cannot honour, refused with what to do instead.
    pub fn refused_fields(&self) -> Result<(), ApiError> {
        if self.suffix.as_deref().is_some_and(|s| !s.is_empty()) {
            return Err(ApiError::invalid(
                Some("suffix"),
                "suffix (fill-in-the-middle) is not supported by this server; send the text before the gap as the prompt, or leave suffix out.",
            ));
        }
        if self.template.as_deref().is_some_and(|t| !t.is_empty()) {
            return Err(ApiError::invalid(
                Some("template"),
                "template is not supported: this server renders prompts with the model's own chat template. Leave it out, or send the whole prompt with \"raw\": true.",
            ));
        }
        if self.context.as_ref().is_some_and(|c| !c.is_empty()) {
            return Err(ApiError::invalid(
                Some("context"),
                "context (token ids from an earlier reply) is not supported, and this server returns none; send the conversation as messages to /api/chat instead.",
            ));
        }
        if self.raw && !self.images.is_empty() {
            return Err(ApiError::invalid(
                Some("images"),
                "images cannot go with \"raw\": true (a raw prompt is text only); leave raw out to send images.",
            ));
        }
        Ok(())
    }

    /// The turn for `model`: the prompt as a user message (after `system`) through the chat
    /// template, or, with `raw`, as the model reads it.
    pub fn turn(&self, model: &ModelInfo, model_name: &str) -> Result<ChatTurn, ApiError> {
        self.refused_fields()?;
        let sampling = self.common.sampling(&model.default_sampling)?;
        let prompt = if self.raw {
            if self.system.as_deref().is_some_and(|s| !s.is_empty()) {
                tracing::info!("Ollama generate: system ignored with raw (the prompt is sent as it is, as Ollama does)");
            }
            Prompt::Text(self.prompt.clone())
        } else {
            let media = self
                .images
                .iter()
                .enumerate()
                .map(|(j, image)| image_item(image, model, model_name, &format!("images[{j}]")))
                .collect::<Result<Vec<_>, _>>()?;
            let mut messages = Vec::new();
            if let Some(system) = self.system.as_ref().filter(|s| !s.is_empty()) {
                messages.push(ChatMessage::new("system", system.clone()));
            }
            messages.push(ChatMessage::new("user", self.prompt.clone()).with_media(media));
            Prompt::Chat(messages)
        };
        let mut turn = ChatTurn::new(prompt, sampling);
        turn.thinking = self.common.thinking()?;
        turn.constraint = self.common.constraint()?;
        Ok(turn)
    }
}

impl Common {
    /// `think`: on or off, or an effort (which also turns thinking on).
    pub fn thinking(&self) -> Result<Thinking, ApiError> {
        match &self.think {
            None | Some(Value::Null) => Ok(Thinking::default()),
            Some(Value::Bool(on)) => Ok(Thinking::on(*on)),
            Some(Value::String(level)) if ["low", "medium", "high"].contains(&level.as_str()) => {
                Ok(Thinking { enabled: Some(true), effort: Some(level.clone()) })
            }
            Some(other) => {
                Err(ApiError::invalid(Some("think"), format!("think must be true, false, \"low\", \"medium\" or \"high\"; got {other}.")))
            }
        }
    }

    /// `format`: `"json"` (any JSON object) or a JSON Schema, through the constrained decoding
    /// every API uses (`shared/structured.rs`).
    pub fn constraint(&self) -> Result<Option<Constraint>, ApiError> {
        crate::shared::structured::ollama_format(self.format.as_ref())
    }

    /// `options` over the model's defaults, by Ollama's names.
    pub fn sampling(&self, defaults: &SamplingParams) -> Result<SamplingParams, ApiError> {
        let options = Options::parse(self.options.as_ref())?;
        options.log_ignored();
        Ok(sampling_params(defaults, &options.choices()?)?)
    }

    /// `keep_alive`, where the request sends it.
    pub fn keep_alive(&self) -> Result<Option<KeepAlive>, ApiError> {
        self.keep_alive.as_ref().filter(|v| !v.is_null()).map(parse_keep_alive).transpose()
    }
}

/// Ollama's `options`, each checked for its type.
#[derive(Debug, Default, PartialEq)]
pub struct Options {
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub top_k: Option<i64>,
    pub min_p: Option<f32>,
    pub seed: Option<i64>,
    pub num_predict: Option<i64>,
    pub stop: Vec<String>,
    pub repeat_penalty: Option<f32>,
    pub presence_penalty: Option<f32>,
    pub frequency_penalty: Option<f32>,
    /// Names accepted and left alone (the runner's settings, which this engine sets itself),
    /// with why.
    pub ignored: Vec<(String, &'static str)>,
}

/// Ollama's runner settings, which Confab's engine decides itself: accepted, logged, ignored.
const RUNNER_SETTINGS: [(&str, &str); 13] = [
    ("num_ctx", "the engine uses the model's own context length (num_predict bounds a reply)"),
    ("num_batch", "the engine sizes its prefill chunks itself"),
    ("num_gpu", "MLX places the whole model on the device"),
    ("main_gpu", "MLX places the whole model on the device"),
    ("num_thread", "MLX picks its own threads"),
    ("numa", "MLX picks its own threads"),
    ("low_vram", "the engine admits requests within its memory budget (--memory-budget)"),
    ("use_mmap", "the engine loads weights its own way"),
    ("use_mlock", "the engine loads weights its own way"),
    ("vocab_only", "the engine loads weights its own way"),
    ("num_keep", "the engine's context policy decides what a long conversation keeps"),
    ("repeat_last_n", "the engine's repetition window is fixed (64 tokens)"),
    ("penalize_newline", "no longer an option of Ollama's either"),
];

/// Sampling methods the engine does not have: accepted at their neutral value, refused otherwise.
const UNSUPPORTED_SAMPLERS: [(&str, f64); 5] =
    [("typical_p", 1.0), ("tfs_z", 1.0), ("mirostat", 0.0), ("mirostat_tau", 5.0), ("mirostat_eta", 0.1)];

impl Options {
    pub fn parse(options: Option<&Value>) -> Result<Self, ApiError> {
        let map = match options {
            None | Some(Value::Null) => return Ok(Self::default()),
            Some(Value::Object(map)) => map,
            Some(other) => {
                return Err(ApiError::invalid(
                    Some("options"),
                    format!("options must be an object of settings (such as {{\"temperature\": 0.7}}); got {other}."),
                ))
            }
        };
        let mut out = Self::default();
        for (name, value) in map {
            if value.is_null() {
                continue;
            }
            let param = format!("options.{name}");
            let number =
                || value.as_f64().ok_or_else(|| ApiError::invalid(Some(&param), format!("options.{name} must be a number; got {value}.")));
            let integer = || {
                value
                    .as_i64()
                    .or_else(|| value.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                    .ok_or_else(|| ApiError::invalid(Some(&param), format!("options.{name} must be a whole number; got {value}.")))
            };
            match name.as_str() {
                "temperature" => out.temperature = Some(number()? as f32),
                "top_p" => out.top_p = Some(number()? as f32),
                "top_k" => out.top_k = Some(integer()?),
                "min_p" => out.min_p = Some(number()? as f32),
                "seed" => out.seed = Some(integer()?),
                "num_predict" => out.num_predict = Some(integer()?),
                "repeat_penalty" => out.repeat_penalty = Some(number()? as f32),
                "presence_penalty" => out.presence_penalty = Some(number()? as f32),
                "frequency_penalty" => out.frequency_penalty = Some(number()? as f32),
                "stop" => {
                    out.stop = match value {
                        Value::String(one) => vec![one.clone()],
                        Value::Array(items) if items.iter().all(Value::is_string) => {
                            items.iter().filter_map(Value::as_str).map(str::to_string).collect()
                        }
                        _ => return Err(ApiError::invalid(Some(&param), format!("options.stop must be a list of strings; got {value}."))),
                    }
                }
                other => {
                    if let Some((_, why)) = RUNNER_SETTINGS.iter().find(|(n, _)| *n == other) {
                        out.ignored.push((other.to_string(), why));
                    } else if let Some((_, neutral)) = UNSUPPORTED_SAMPLERS.iter().find(|(n, _)| *n == other) {
                        if number()? != *neutral {
                            return Err(ApiError::invalid(
                                Some(&param),
                                format!("options.{other} is not supported by this engine; leave it out (or at {neutral}) and use temperature, top_k, top_p and min_p."),
                            ));
                        }
                    } else {
                        out.ignored.push((other.to_string(), "it is not one of Ollama's options"));
                    }
                }
            }
        }
        Ok(out)
    }

    fn log_ignored(&self) {
        for (name, why) in &self.ignored {
            tracing::info!(option = name.as_str(), "Ollama option ignored: {why}");
        }
    }

    /// The turn's sampling choices; `num_predict` -1 (no limit) and -2 (to the context's end)
    /// both run to the context's end, as a request without a limit does.
    pub fn choices(&self) -> Result<SamplingChoices, ApiError> {
        if self.frequency_penalty.is_some_and(|p| p != 0.0) {
            return Err(ApiError::invalid(
                Some("options.frequency_penalty"),
                "options.frequency_penalty is not supported by this engine; use presence_penalty or repeat_penalty, or leave it at 0.",
            ));
        }
        let max_tokens = match self.num_predict {
            None | Some(-1) | Some(-2) => 0,
            Some(limit) => reply_token_limit(limit).map_err(|e| ApiError::invalid(Some("options.num_predict"), e.to_string()))?,
        };
        let top_k = self
            .top_k
            .map(|k| i32::try_from(k).map_err(|_| ApiError::invalid(Some("options.top_k"), format!("options.top_k {k} is out of range."))))
            .transpose()?;
        Ok(SamplingChoices {
            temperature: self.temperature,
            top_k,
            top_p: self.top_p,
            min_p: self.min_p,
            repetition_penalty: self.repeat_penalty,
            presence_penalty: self.presence_penalty,
            // Ollama's seeds are signed; the bits are the seed.
            seed: self.seed.map(|s| s as u64),
            max_tokens: Some(max_tokens),
            stop: self.stop.clone(),
        })
    }
}

/// `keep_alive` as Ollama reads it: a number of seconds (0 unloads once idle, negative stays),
/// or a duration (`"5m"`, `"1h30m"`); the pool's own reading of those forms (`KeepAlive`'s
/// `FromStr`), so `--keep-alive` and requests agree.
pub fn parse_keep_alive(value: &Value) -> Result<KeepAlive, ApiError> {
    let text = match value {
        Value::Number(n) => n.to_string(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    text.parse::<KeepAlive>().map_err(|why| ApiError::invalid(Some("keep_alive"), format!("keep_alive: {why}.")))
}

/// An image as Ollama sends it: base64 of the file (its type told by its first bytes), or a
/// data URL.
fn image_item(image: &str, model: &ModelInfo, model_name: &str, param: &str) -> Result<MediaItem, ApiError> {
    if image.starts_with("data:") {
        return image_url_item(image, model, model_name, param);
    }
    base64_image(sniff_image_type(image), image, model, model_name, param)
}

/// The media type of base64 image data, from its first bytes; PNG where they say nothing (the
/// decoder reads the bytes whatever the name says).
fn sniff_image_type(data: &str) -> &'static str {
    use base64::Engine as _;
    let head: String = data.trim_start().chars().take(24).collect();
    let bytes = base64::engine::general_purpose::STANDARD.decode(head.as_bytes()).unwrap_or_default();
    match bytes.as_slice() {
        [0xFF, 0xD8, 0xFF, ..] => "image/jpeg",
        [b'G', b'I', b'F', b'8', ..] => "image/gif",
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => "image/webp",
        [b'B', b'M', ..] => "image/bmp",
        _ => "image/png",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chat(body: Value) -> ChatRequest {
        serde_json::from_value(body).unwrap()
    }

    #[test]
    fn streaming_is_the_default() {
        assert!(chat(json!({"model": "m", "messages": []})).common.stream);
        assert!(!chat(json!({"model": "m", "messages": [], "stream": false})).common.stream);
    }

    #[test]
    fn messages_parse_as_clients_send_them() {
        let request = chat(json!({"messages": [
            {"role": "user", "content": "Weather?", "images": ["AA=="]},
            {"role": "assistant", "content": null, "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
            {"role": "tool", "content": "Sunny", "tool_name": "get_weather"}
        ]}));
        let [user, assistant, tool] = &request.messages[..] else { panic!("three messages") };
        assert_eq!((user.images.len(), assistant.content.as_str()), (1, ""));
        assert_eq!(assistant.tool_calls[0].function.arguments, json!({"city": "Paris"}));
        assert_eq!(tool.tool_name.as_deref(), Some("get_weather"));
    }

    #[test]
    fn tool_results_answer_calls_by_id_then_name_then_order() {
        let open = [("call_0_0".to_string(), "get_weather".to_string()), ("call_0_1".to_string(), "get_time".to_string())];
        assert_eq!(answered_call(&open, Some("call_0_1"), None), Some(1));
        assert_eq!(answered_call(&open, None, Some("get_time")), Some(1));
        assert_eq!(answered_call(&open, Some("call_unknown"), Some("get_weather")), Some(0));
        assert_eq!(answered_call(&open, None, None), Some(0));
        // A result of a tool nothing called goes to the template unpaired, under its name.
        assert_eq!(answered_call(&open, None, Some("search")), None);
        assert_eq!(answered_call(&[], None, None), None);
    }

    #[test]
    fn options_take_ollamas_names() {
        let options = Options::parse(Some(&json!({
            "temperature": 0, "top_p": 0.5, "top_k": 20, "min_p": 0.1, "seed": 7, "num_predict": 12,
            "stop": ["END"], "repeat_penalty": 1.1, "presence_penalty": 0.5, "num_ctx": 4096, "num_thread": 8
        })))
        .unwrap();
        let choices = options.choices().unwrap();
        assert_eq!((choices.temperature, choices.top_p, choices.top_k, choices.min_p), (Some(0.0), Some(0.5), Some(20), Some(0.1)));
        assert_eq!((choices.seed, choices.max_tokens, choices.stop.as_slice()), (Some(7), Some(12), ["END".to_string()].as_slice()));
        assert_eq!((choices.repetition_penalty, choices.presence_penalty), (Some(1.1), Some(0.5)));
        let ignored: Vec<&str> = options.ignored.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(ignored, ["num_ctx", "num_thread"]);
        // No limit, and "fill the context", both run to the context's end.
        for unlimited in [-1, -2] {
            assert_eq!(Options::parse(Some(&json!({"num_predict": unlimited}))).unwrap().choices().unwrap().max_tokens, Some(0));
        }
    }

    #[test]
    fn bad_option_types_name_the_option() {
        for (options, param) in [
            (json!({"temperature": "hot"}), "options.temperature"),
            (json!({"top_k": 2.5}), "options.top_k"),
            (json!({"stop": [1, 2]}), "options.stop"),
            (json!({"mirostat": 2}), "options.mirostat"),
            (json!("fast"), "options"),
        ] {
            let error = Options::parse(Some(&options)).unwrap_err();
            assert_eq!(error.param.as_deref(), Some(param), "{options}");
            assert_eq!(error.status, 400);
        }
        let error = Options::parse(Some(&json!({"num_predict": 0}))).unwrap().choices().unwrap_err();
        assert_eq!(error.param.as_deref(), Some("options.num_predict"));
        let error = Options::parse(Some(&json!({"frequency_penalty": 0.5}))).unwrap().choices().unwrap_err();
        assert_eq!(error.param.as_deref(), Some("options.frequency_penalty"));
        // At their neutral values, samplers the engine lacks are no change.
        assert!(Options::parse(Some(&json!({"mirostat": 0, "typical_p": 1.0}))).is_ok());
    }

    #[test]
    fn keep_alive_reads_ollamas_forms() {
        use std::time::Duration;
        let parse = |v: Value| parse_keep_alive(&v).unwrap();
        assert_eq!(parse(json!(0)), KeepAlive::Idle(Duration::ZERO));
        assert_eq!(parse(json!("0")), KeepAlive::Idle(Duration::ZERO));
        assert_eq!(parse(json!(-1)), KeepAlive::Forever);
        assert_eq!(parse(json!("-1m")), KeepAlive::Forever);
        assert_eq!(parse(json!(300)), KeepAlive::Idle(Duration::from_secs(300)));
        assert_eq!(parse(json!(2.5)), KeepAlive::Idle(Duration::from_millis(2500)));
        assert_eq!(parse(json!("5m")), KeepAlive::Idle(Duration::from_secs(300)));
        assert_eq!(parse(json!("1h30m")), KeepAlive::Idle(Duration::from_secs(5400)));
        for bad in [json!("soon"), json!("5 minutes"), json!(true), json!(""), json!("m")] {
            assert_eq!(parse_keep_alive(&bad).unwrap_err().param.as_deref(), Some("keep_alive"), "{bad}");
        }
    }

    #[test]
    fn think_maps_onto_the_turns_thinking() {
        let think = |v: Value| chat(json!({"messages": [], "think": v})).common.thinking();
        assert_eq!(think(json!(true)).unwrap(), Thinking::on(true));
        assert_eq!(think(json!(false)).unwrap(), Thinking::on(false));
        assert_eq!(think(json!("high")).unwrap(), Thinking { enabled: Some(true), effort: Some("high".into()) });
        assert_eq!(think(json!(null)).unwrap(), Thinking::default());
        assert_eq!(think(json!("max")).unwrap_err().param.as_deref(), Some("think"));
    }

    #[test]
    fn tools_and_the_confab_tool_choice() {
        let weather = json!({"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}});
        let tools = chat(json!({"messages": [], "tools": [weather]})).tools().unwrap();
        assert_eq!(tools.choice, ToolChoice::Auto);
        assert_eq!(chat(json!({"messages": []})).tools().unwrap().choice, ToolChoice::None);
        let required = chat(json!({"messages": [], "tools": [weather], "tool_choice": "required"})).tools().unwrap();
        assert_eq!(required.choice, ToolChoice::Required);
        let named =
            chat(json!({"messages": [], "tools": [weather], "tool_choice": {"type": "function", "function": {"name": "get_weather"}}}));
        assert_eq!(named.tools().unwrap().choice, ToolChoice::Named("get_weather".into()));
        let unknown = chat(json!({"messages": [], "tools": [weather], "tool_choice": "get_time"})).tools().unwrap_err();
        assert_eq!(unknown.param.as_deref(), Some("tool_choice"));
        let bad = chat(json!({"messages": [], "tools": [{"type": "web_search"}]})).tools().unwrap_err();
        assert_eq!(bad.param.as_deref(), Some("tools[0]"));
    }

    #[test]
    fn generate_refuses_what_it_cannot_honour() {
        let generate = |body: Value| serde_json::from_value::<GenerateRequest>(body).unwrap().refused_fields();
        assert!(generate(json!({"prompt": "hi", "suffix": ""})).is_ok());
        assert_eq!(generate(json!({"prompt": "def f(", "suffix": "return 1"})).unwrap_err().param.as_deref(), Some("suffix"));
        assert_eq!(generate(json!({"prompt": "hi", "template": "{{ .Prompt }}"})).unwrap_err().param.as_deref(), Some("template"));
        assert_eq!(generate(json!({"prompt": "hi", "context": [1, 2]})).unwrap_err().param.as_deref(), Some("context"));
        assert_eq!(generate(json!({"prompt": "hi", "raw": true, "images": ["AA=="]})).unwrap_err().param.as_deref(), Some("images"));
    }

    #[test]
    fn image_types_come_from_their_bytes() {
        use base64::Engine as _;
        let encode = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        assert_eq!(sniff_image_type(&encode(b"\x89PNG\r\n\x1a\n0000")), "image/png");
        assert_eq!(sniff_image_type(&encode(b"\xFF\xD8\xFF\xE0000000")), "image/jpeg");
        assert_eq!(sniff_image_type(&encode(b"RIFF\0\0\0\0WEBPVP8 ")), "image/webp");
        assert_eq!(sniff_image_type("not base64"), "image/png");
    }
}
