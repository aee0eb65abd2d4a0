//! The requests the server reads, as OpenAI's API defines them (the fields Confab honours;
//! others are ignored, as OpenAI-compatible servers do), and how they become engine settings.

use confab_engine::EngineError;
use confab_engine::{ModelId, Speculative};
use confab_engine::{SamplingChoices, SamplingParams};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::shared::error::ApiError;
use confab_turn::{checked_switches, reply_token_limit, sampling_params, Thinking};

use crate::shared::function_tools::{self, ToolField};
use crate::shared::turn::{ToolChoice, Tools};

/// OpenAI accepts at most this many stop sequences.
const MAX_STOPS: usize = 4;

/// `POST /v1/chat/completions`.
#[derive(Debug, Deserialize)]
pub struct ChatRequest {
    pub model: Option<String>,
    pub messages: Vec<Message>,
    #[serde(default)]
    pub tools: Option<Vec<ToolField>>,
    pub tool_choice: Option<ToolChoiceField>,
    /// `none` turns a reasoning model's thinking off; others pass to the template.
    pub reasoning_effort: Option<String>,
    /// vLLM's and SGLang's way to set template switches (`{"enable_thinking": false}`).
    pub chat_template_kwargs: Option<Map<String, Value>>,
    /// Structured output (`shared/structured.rs`): kept as JSON, so a shape Confab does not know gets
    /// an error that names it rather than a parse failure.
    #[serde(default)]
    pub response_format: Option<serde_json::Value>,
    #[serde(flatten)]
    pub sampling: SamplingFields,
}

/// `"none"`, `"auto"`, `"required"` or `{"type": "function", "function": {"name"}}`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum ToolChoiceField {
    Mode(String),
    Named { function: NamedFunction },
}

#[derive(Debug, Deserialize)]
pub struct NamedFunction {
    pub name: String,
}

impl ChatRequest {
    /// The tools and the choice, checked.
    pub fn tools(&self) -> Result<Tools, ApiError> {
        let definitions = function_tools::definitions(self.tools.as_deref().unwrap_or_default())?;
        let choice = match &self.tool_choice {
            None if definitions.is_empty() => ToolChoice::None,
            None => ToolChoice::Auto,
            Some(ToolChoiceField::Mode(mode)) => match mode.as_str() {
                "none" => ToolChoice::None,
                "auto" => ToolChoice::Auto,
                "required" => ToolChoice::Required,
                other => {
                    return Err(ApiError::invalid(
                        Some("tool_choice"),
                        format!("tool_choice `{other}` is not one of none, auto, required or a named function."),
                    ))
                }
            },
            Some(ToolChoiceField::Named { function }) => ToolChoice::Named(function.name.clone()),
        };
        Ok(Tools::new(definitions, choice)?)
    }

    /// The template switches the request sets itself (`chat_template_kwargs`).
    pub fn switches(&self) -> Result<std::collections::BTreeMap<String, Value>, ApiError> {
        Ok(checked_switches(self.chat_template_kwargs.as_ref().unwrap_or(&Map::new()))?)
    }

    /// `reasoning_effort`: `none` turns a reasoning model's thinking off.
    pub fn thinking(&self) -> Thinking {
        Thinking { enabled: None, effort: self.reasoning_effort.clone() }
    }
}

/// `POST /v1/completions`.
#[derive(Debug, Deserialize)]
pub struct CompletionRequest {
    pub model: Option<String>,
    pub prompt: PromptField,
    #[serde(flatten)]
    pub sampling: SamplingFields,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum PromptField {
    One(String),
    Many(Vec<String>),
}

/// What chat and completions share: sampling, length, stops, streaming.
#[derive(Debug, Default, Deserialize)]
pub struct SamplingFields {
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    /// Signed, so that a negative value gets a clear error rather than a parse failure.
    pub max_tokens: Option<i64>,
    /// The newer name of `max_tokens` on chat; it wins when both are given.
    pub max_completion_tokens: Option<i64>,
    pub stop: Option<StopField>,
    pub seed: Option<i64>,
    pub presence_penalty: Option<f32>,
    pub frequency_penalty: Option<f32>,
    pub n: Option<i64>,
    #[serde(default)]
    pub stream: bool,
    pub stream_options: Option<StreamOptions>,
    /// Confab's own: `"prompt_lookup"`, `"mtp"` (the model's multi-token-prediction head) or
    /// `"draft_model"` (where the server has one loaded)
    /// decodes speculatively.
    pub speculative: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum StopField {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Default, Deserialize)]
pub struct StreamOptions {
    #[serde(default)]
    pub include_usage: bool,
}

#[derive(Debug, Deserialize)]
pub struct Message {
    pub role: String,
    /// A string, or a list of parts; absent on some assistant messages.
    #[serde(default)]
    pub content: Option<Content>,
    /// An assistant message's calls.
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCallField>>,
    /// A tool message: the call it answers.
    pub tool_call_id: Option<String>,
    pub name: Option<String>,
    /// An assistant message's reasoning, as this server (and vLLM) return it.
    pub reasoning_content: Option<String>,
}

/// `{"id", "type": "function", "function": {"name", "arguments": "<JSON text>"}}`.
#[derive(Debug, Deserialize)]
pub struct ToolCallField {
    pub id: String,
    pub function: CalledFunction,
}

#[derive(Debug, Deserialize)]
pub struct CalledFunction {
    pub name: String,
    /// JSON text of an object (OpenAI's shape); an object is taken too.
    pub arguments: Value,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    Text {
        text: String,
    },
    ImageUrl {
        image_url: ImageUrl,
    },
    InputAudio {
        input_audio: InputAudio,
    },
    /// vLLM's extension for videos: `{"type": "video_url", "video_url": {"url": "data:video/mp4;base64,..."}}`.
    VideoUrl {
        video_url: ImageUrl,
    },
    /// A document: `{"type": "file", "file": {"filename", "file_data": "data:application/pdf;base64,..."}}`.
    File {
        file: FileData,
    },
}

#[derive(Debug, Deserialize)]
pub struct FileData {
    pub filename: Option<String>,
    /// A data URL; `file_id`s need OpenAI's Files API, which this server does not have.
    pub file_data: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct ImageUrl {
    pub url: String,
}

#[derive(Debug, Deserialize)]
pub struct InputAudio {
    /// Base64 of the clip's bytes.
    pub data: String,
    /// `wav`, `mp3`, ...
    pub format: String,
}

impl SamplingFields {
    /// The speculative decoding the request asks for; `draft`: the draft model loaded beside
    /// the served one.
    pub fn speculative(&self, draft: Option<ModelId>) -> Result<Option<Speculative>, ApiError> {
        self.speculative
            .as_deref()
            .map(|m| {
                Speculative::named(m, draft)
                    .map_err(|e: EngineError| ApiError::invalid(Some("speculative"), crate::shared::error::engine_message(&e)))
            })
            .transpose()
    }

    /// The engine's settings: the model's defaults with what the request sets over them
    /// (`SamplingParams::with_choices`, the rule the app and the CLI use too).
    /// `default_max_tokens` is the endpoint's default (0: up to the context's end).
    pub fn to_params(&self, defaults: &SamplingParams, default_max_tokens: u32) -> Result<SamplingParams, ApiError> {
        if let Some(n) = self.n.filter(|&n| n != 1) {
            return Err(ApiError::invalid(Some("n"), format!("n = {n} is not supported; this server returns one choice (n = 1).")));
        }
        if self.frequency_penalty.is_some_and(|p| p != 0.0) {
            return Err(ApiError::invalid(
                Some("frequency_penalty"),
                "frequency_penalty is not supported; use presence_penalty, or leave it at 0.",
            ));
        }
        let (name, limit) = match (self.max_completion_tokens, self.max_tokens) {
            (Some(m), _) => ("max_completion_tokens", Some(m)),
            (None, m) => ("max_tokens", m),
        };
        let limit = limit.map(|limit| reply_token_limit(limit).map_err(|e| ApiError::invalid(Some(name), e.to_string()))).transpose()?;
        let stop = match &self.stop {
            None => vec![],
            Some(StopField::One(s)) => vec![s.clone()],
            Some(StopField::Many(list)) => list.clone(),
        };
        if stop.len() > MAX_STOPS {
            return Err(ApiError::invalid(Some("stop"), format!("{} stop sequences given; at most {MAX_STOPS} are allowed.", stop.len())));
        }
        let choices = SamplingChoices {
            temperature: self.temperature,
            top_p: self.top_p,
            presence_penalty: self.presence_penalty,
            seed: self.seed.map(|seed| seed as u64),
            max_tokens: Some(limit.unwrap_or(default_max_tokens)),
            stop,
            ..SamplingChoices::default()
        };
        Ok(sampling_params(defaults, &choices)?)
    }

    pub fn include_usage(&self) -> bool {
        self.stream_options.as_ref().is_some_and(|o| o.include_usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(json: &str) -> SamplingFields {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn request_settings_override_the_model_defaults() {
        let defaults = SamplingParams { temperature: 0.3, top_k: 40, ..SamplingParams::default() };
        let params = fields(r#"{"temperature":0,"top_p":0.5,"max_tokens":7,"stop":"\n","seed":3}"#).to_params(&defaults, 0).unwrap();
        assert_eq!((params.temperature, params.top_p, params.top_k), (0.0, 0.5, 40));
        assert_eq!((params.max_tokens, params.stop, params.seed), (7, vec!["\n".to_string()], Some(3)));
        let newer = fields(r#"{"max_tokens":7,"max_completion_tokens":9}"#).to_params(&defaults, 0).unwrap();
        assert_eq!(newer.max_tokens, 9);
        assert_eq!(fields("{}").to_params(&defaults, 16).unwrap().max_tokens, 16);
    }

    /// tests/sampling: the request the app and the CLI send too, over the model's own defaults.
    #[test]
    fn the_same_request_samples_alike() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/sampling");
        let read = |name: &str| -> Value { serde_json::from_str(&std::fs::read_to_string(folder.join(name)).unwrap()).unwrap() };
        let defaults = SamplingParams::model_defaults(Some(&read("generation_config.json"))).unwrap();
        let expected: SamplingParams = serde_json::from_value(read("expected.json")).unwrap();
        let params = fields(r#"{"temperature":0.2,"top_p":0.5,"max_tokens":64,"seed":9}"#).to_params(&defaults, 0).unwrap();
        assert_eq!(params, expected);
        // The model's stop string stays when the request adds its own.
        let with_stop = fields(r#"{"max_tokens":64,"stop":["END"]}"#).to_params(&defaults, 0).unwrap();
        assert_eq!(with_stop.stop, ["<|im_end|>", "END"]);
    }

    #[test]
    fn speculative_names_a_method() {
        assert_eq!(fields("{}").speculative(None).unwrap(), None);
        let lookup = fields(r#"{"speculative":"prompt_lookup"}"#).speculative(None).unwrap();
        assert_eq!(lookup, Some(Speculative::PromptLookup(Default::default())));
        let mtp = fields(r#"{"speculative":"mtp"}"#).speculative(None).unwrap();
        assert_eq!(mtp, Some(Speculative::Mtp { max_draft: confab_engine::MTP_MAX_DRAFT }));
        let error = fields(r#"{"speculative":"telepathy"}"#).speculative(None).unwrap_err();
        assert!(error.message.contains("telepathy"), "{}", error.message);
        // A draft model, where the server has one loaded; where it has none, what to do.
        let draft = ModelId(7);
        let drafted = fields(r#"{"speculative":"draft_model"}"#).speculative(Some(draft)).unwrap();
        assert_eq!(drafted, Some(Speculative::DraftModel { model: draft, max_draft: confab_engine::DEFAULT_MAX_DRAFT }));
        let error = fields(r#"{"speculative":"draft_model"}"#).speculative(None).unwrap_err();
        assert!(error.message.contains("--draft-model"), "{}", error.message);
    }

    #[test]
    fn bad_settings_name_their_field() {
        let defaults = SamplingParams::default();
        let bad = |json: &str| fields(json).to_params(&defaults, 0).unwrap_err().param;
        assert_eq!(bad(r#"{"max_tokens":-1}"#).as_deref(), Some("max_tokens"));
        assert_eq!(bad(r#"{"max_completion_tokens":0}"#).as_deref(), Some("max_completion_tokens"));
        assert_eq!(bad(r#"{"temperature":-2}"#).as_deref(), Some("temperature"));
        assert_eq!(bad(r#"{"stop":["a","b","c","d","e"]}"#).as_deref(), Some("stop"));
        assert_eq!(bad(r#"{"n":2}"#).as_deref(), Some("n"));
    }

    #[test]
    fn content_parts_parse() {
        let message: Message = serde_json::from_str(
            r#"{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA==","detail":"low"}},{"type":"input_audio","input_audio":{"data":"AA==","format":"wav"}}]}"#,
        )
        .unwrap();
        let Some(Content::Parts(parts)) = message.content else { panic!("parts") };
        assert!(matches!(&parts[1], Part::ImageUrl { image_url } if image_url.url.starts_with("data:")));
        assert!(matches!(&parts[2], Part::InputAudio { input_audio } if input_audio.format == "wav"));
    }
}
