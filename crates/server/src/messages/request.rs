//! Anthropic's Messages API (`POST /v1/messages`, `POST /v1/messages/count_tokens`): the request
//! as Anthropic defines it (the fields Confab honours; others, such as `cache_control` and
//! `metadata`, are ignored as Anthropic-compatible servers do), and how it becomes the engine's
//! conversation, tools, template switches and sampling settings.

use confab_engine::ChatMessage;
use confab_engine::MediaItem;
use confab_engine::Prompt;
use confab_engine::ToolCall;
use confab_engine::{SamplingChoices, SamplingParams};
use serde::Deserialize;
use serde_json::Value;

use super::render::thinking_of_signature;
use crate::chat_completions::chat_messages::call_arguments;
use crate::shared::error::ApiError;
use crate::shared::{data_url, documents};
use confab_turn::{reply_token_limit, sampling_params, Thinking};

use crate::shared::turn::{ToolChoice, ToolDefinition, Tools};

/// `POST /v1/messages`; `count_tokens` takes the same body without `max_tokens`.
#[derive(Debug, Deserialize)]
pub struct MessagesRequest {
    pub model: Option<String>,
    /// Required on `/v1/messages` (Anthropic's API has no default). Signed, so that a negative
    /// value gets a clear error rather than a parse failure.
    pub max_tokens: Option<i64>,
    /// A string or a list of text blocks.
    pub system: Option<Value>,
    pub messages: Vec<Message>,
    pub tools: Option<Vec<ToolField>>,
    pub tool_choice: Option<ToolChoiceField>,
    pub thinking: Option<ThinkingField>,
    pub stop_sequences: Option<Vec<String>>,
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub top_k: Option<i64>,
    #[serde(default)]
    pub stream: bool,
    /// `{"effort": "low" | "medium" | "high" | "max"}`, as the template's effort switches.
    pub output_config: Option<OutputConfig>,
    /// Every other field, ignored: `metadata` (a `user_id` for Anthropic's abuse checks),
    /// `context_management` (edits of Anthropic's server-side context), `service_tier`,
    /// `container`, `mcp_servers`... Those that change what Anthropic would do are logged
    /// (`ignored`).
    #[serde(flatten)]
    pub other: serde_json::Map<String, Value>,
}

#[derive(Debug, Default, Deserialize)]
pub struct OutputConfig {
    pub effort: Option<String>,
    #[serde(flatten)]
    pub other: serde_json::Map<String, Value>,
}

/// The fields of a request nothing reads and that nobody needs told about.
const QUIET_FIELDS: [&str; 1] = ["metadata"];

/// Anthropic's server tools (run on Anthropic's side): left out of the prompt with a warning.
const SERVER_TOOLS: [&str; 4] = ["web_search_", "web_fetch_", "code_execution_", "tool_search_tool_"];

/// Content is read block by block (`blocks`), so that a malformed block is an error that
/// names it rather than a parse failure of the whole body.
#[derive(Debug, Deserialize)]
pub struct Message {
    pub role: String,
    pub content: Value,
}

/// A client tool: `{"name", "description", "input_schema"}` (`type` absent or `custom`).
#[derive(Debug, Deserialize)]
pub struct ToolField {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub name: String,
    pub description: Option<String>,
    pub input_schema: Option<Value>,
    /// Anthropic's tool search: a deferred tool is not in the prompt's tool list; a client's
    /// tool search (Claude Code's `ToolSearch`) loads it with a `tool_reference` block in a
    /// tool result, where its definition is then written (`MessagesRequest::callable_tools`).
    #[serde(default)]
    pub defer_loading: bool,
}

/// `{"type": "auto" | "any" | "tool" | "none", "name"}`. `disable_parallel_tool_use` changes
/// nothing: Confab reads every call the model writes; the model decides how many it makes.
#[derive(Debug, Deserialize)]
pub struct ToolChoiceField {
    #[serde(rename = "type")]
    pub kind: String,
    pub name: Option<String>,
}

/// `{"type": "enabled", "budget_tokens"}`, `{"type": "adaptive"}` or `{"type": "disabled"}`.
/// `budget_tokens` is not enforced: the engine has no separate budget for reasoning, and
/// `max_tokens` bounds the whole reply, thinking included.
#[derive(Debug, Deserialize)]
pub struct ThinkingField {
    #[serde(rename = "type")]
    pub kind: String,
    /// `"summarized"` (the default), `"omitted"` (blocks without their text) or others, shown whole.
    pub display: Option<String>,
}

/// One content block of a message, as the client sent it.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        text: String,
    },
    Image {
        source: ImageSource,
    },
    /// A PDF (base64) or plain text, read as the app reads an attached document.
    Document {
        source: DocumentSource,
        #[serde(default)]
        title: Option<String>,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        #[serde(default)]
        content: Option<Value>,
        #[serde(default)]
        is_error: bool,
    },
    Thinking {
        thinking: String,
        /// Anthropic's is opaque; Confab's carries the text it left out (`display: "omitted"`).
        #[serde(default)]
        signature: Option<String>,
    },
    /// Reasoning Anthropic encrypted: nothing a local model can read, so it is dropped.
    RedactedThinking {},
    /// In a tool result: a tool the client's tool search found, loaded from here on.
    ToolReference {
        tool_name: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ImageSource {
    Base64 { media_type: String, data: String },
    Url {},
    File {},
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum DocumentSource {
    Base64 { media_type: String, data: String },
    Text { data: String },
    Url {},
    File {},
    Content {},
}

/// How an image block's base64 data becomes a media item the engine reads (written to a file
/// for the request, refused when the model reads no images): `(media_type, data, param)`.
pub type ImageReader<'a> = dyn FnMut(&str, &str, &str) -> Result<MediaItem, ApiError> + 'a;

impl MessagesRequest {
    /// The conversation as the engine takes it: the system prompt first; each user message's
    /// `tool_result` blocks as `tool` messages, in order, then its text and images as a user
    /// message; assistant `tool_use` blocks as calls and `thinking` as reasoning. A conversation
    /// that ends with an assistant message is continued (Anthropic's prefill).
    pub fn prompt(&self, images: &mut ImageReader) -> Result<Prompt, ApiError> {
        if self.messages.is_empty() {
            return Err(ApiError::invalid(Some("messages"), "messages is empty; send at least one user message."));
        }
        let mut out = Vec::with_capacity(self.messages.len() + 1);
        let system = self.system_text()?;
        if !system.is_empty() {
            out.push(ChatMessage::new("system", system));
        }
        // Every call so far, by id: a result must answer one of them.
        let mut calls: Vec<(String, String)> = Vec::new();
        for (i, message) in self.messages.iter().enumerate() {
            let at = format!("messages[{i}]");
            let blocks = blocks(&message.content, &format!("{at}.content"))?;
            match message.role.as_str() {
                "user" => user_messages(blocks, &at, &calls, &|name| self.reference(name), images, &mut out)?,
                "assistant" => {
                    let chat = assistant_message(blocks, &at)?;
                    calls.extend(chat.tool_calls.iter().map(|c| (c.id.clone(), c.name.clone())));
                    out.push(chat);
                }
                // Claude Code sends its environment this way (the beta
                // `mid-conversation-tool-changes`): a system message where it stands, which the
                // engine renders in place where the template allows it, else joined to the
                // leading system prompt.
                "system" => out.push(ChatMessage::new("system", text_only(blocks, &at)?)),
                other => {
                    return Err(ApiError::invalid(
                        Some(&format!("{at}.role")),
                        format!("role `{other}` is not supported; use user, assistant or system."),
                    ))
                }
            }
        }
        match out.last() {
            Some(last) if last.role == "assistant" && !last.tool_calls.is_empty() => Err(ApiError::invalid(
                Some("messages"),
                "the last message is an assistant message with tool_use blocks; send their results as tool_result blocks in a user message.",
            )),
            Some(last) if last.role == "assistant" => Ok(Prompt::Continue(out)),
            _ => Ok(Prompt::Chat(out)),
        }
    }

    /// The system prompt: a string, or the text of its text blocks.
    fn system_text(&self) -> Result<String, ApiError> {
        match &self.system {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(text)) => Ok(text.clone()),
            Some(Value::Array(items)) => {
                let mut texts = Vec::with_capacity(items.len());
                for (j, item) in items.iter().enumerate() {
                    match serde_json::from_value::<Block>(item.clone()) {
                        Ok(Block::Text { text }) => texts.push(text),
                        _ => {
                            return Err(ApiError::invalid(
                                Some(&format!("system[{j}]")),
                                "the system prompt's blocks must be text blocks: {\"type\": \"text\", \"text\": \"...\"}.",
                            ))
                        }
                    }
                }
                Ok(texts.join("\n"))
            }
            Some(_) => Err(ApiError::invalid(Some("system"), "system must be a string or a list of text blocks.")),
        }
    }

    /// What the request asks for that this server does not do, each with the reason it is
    /// left out, logged once per request: notes (fields it ignores, deferred tools) and warnings
    /// (Anthropic's own tools, which the model does not get). Fields ignored quietly are not named.
    pub fn ignored(&self) -> (Vec<String>, Vec<String>) {
        let mut warnings = Vec::new();
        let mut out: Vec<String> = self
            .other
            .keys()
            .filter(|k| !QUIET_FIELDS.contains(&k.as_str()))
            .map(|k| match k.as_str() {
                "context_management" => {
                    "context_management (edits of Anthropic's server-side context; the whole conversation is kept)".to_string()
                }
                other => format!("{other} (not read by this server)"),
            })
            .collect();
        if let Some(config) = &self.output_config {
            out.extend(config.other.keys().map(|k| format!("output_config.{k} (not read by this server)")));
        }
        for (i, tool) in self.tools.iter().flatten().enumerate() {
            match tool.kind.as_deref().filter(|k| *k != "custom") {
                Some(kind) if SERVER_TOOLS.iter().any(|p| kind.starts_with(p)) => warnings.push(format!(
                    "tools[{i}] `{}` ({kind}: one of Anthropic's server tools, which run on Anthropic's side, not on this local server)",
                    tool.name
                )),
                Some(kind) => warnings.push(format!(
                    "tools[{i}] `{}` ({kind}: one of Anthropic's own tools, whose definition this server does not have; define it as a client tool)",
                    tool.name
                )),
                None if self.deferred(tool) && !self.referenced().contains(&tool.name.as_str()) => out.push(format!(
                    "tools[{i}] `{}` (defer_loading: kept out of the prompt until a tool_reference loads it)",
                    tool.name
                )),
                None => {}
            }
        }
        (out, warnings)
    }

    fn names_tool(&self, name: &str) -> bool {
        self.tool_choice.as_ref().is_some_and(|c| c.kind == "tool" && c.name.as_deref() == Some(name))
    }

    /// A deferred tool stays out of the prompt's tool list, unless the request's tool_choice
    /// names it: one rule for `tools` and for what `ignored` logs.
    fn deferred(&self, tool: &ToolField) -> bool {
        tool.defer_loading && !self.names_tool(&tool.name)
    }

    /// The tools a `tool_reference` block in a tool result names: those the client's tool search
    /// loaded.
    fn referenced(&self) -> Vec<&str> {
        let mut names = Vec::new();
        for message in self.messages.iter().filter(|m| m.role == "user") {
            for result in message.content.as_array().into_iter().flatten().filter(|b| b["type"] == "tool_result") {
                for block in result["content"].as_array().into_iter().flatten() {
                    if let (Some("tool_reference"), Some(name)) = (block["type"].as_str(), block["tool_name"].as_str()) {
                        if let Some(tool) = self.tools.iter().flatten().find(|t| t.name == name) {
                            names.push(tool.name.as_str());
                        }
                    }
                }
            }
        }
        names
    }

    /// A tool reference as the model reads it where it stands: the tool's definition, in the
    /// `<functions>` encoding Claude Code's `ToolSearch` tells the model to expect (the prompt's
    /// tool list stays as it was, so the prefix cache still serves it).
    fn reference(&self, name: &str) -> String {
        match self.tools.iter().flatten().find(|t| t.name == name) {
            Some(tool) => {
                let parameters = tool.input_schema.clone().unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
                let definition = serde_json::json!({ "description": tool.description, "name": tool.name, "parameters": parameters });
                format!("<function>{definition}</function>")
            }
            None => format!("<function>{}</function>", serde_json::json!({ "name": name, "error": "not among this request's tools" })),
        }
    }

    /// The tools and the choice, checked. Anthropic's own tools (server tools such as web
    /// search, and those whose definition only Anthropic has) and deferred tools are left out of
    /// the prompt (`ignored` says why); a `tool_choice` naming one of Anthropic's is an error.
    pub fn tools(&self) -> Result<Tools, ApiError> {
        self.checked_tools(false)
    }

    /// The tools whose calls the reply is read for: the prompt's (`tools`), and the deferred
    /// ones a `tool_reference` loaded, whose definitions are in the conversation.
    pub fn callable_tools(&self) -> Result<Tools, ApiError> {
        self.checked_tools(true)
    }

    fn checked_tools(&self, loaded: bool) -> Result<Tools, ApiError> {
        let referenced = if loaded { self.referenced() } else { vec![] };
        let mut definitions = Vec::new();
        for tool in self.tools.iter().flatten() {
            if let Some(kind) = tool.kind.as_deref().filter(|k| *k != "custom") {
                if self.names_tool(&tool.name) {
                    return Err(ApiError::invalid(
                        Some("tool_choice"),
                        format!(
                            "tool_choice names `{}`, which is `{kind}`, one of Anthropic's own tools; this local server does not run them. Define a client tool with name, description and input_schema.",
                            tool.name
                        ),
                    ));
                }
                continue;
            }
            if self.deferred(tool) && !referenced.contains(&tool.name.as_str()) {
                continue;
            }
            definitions.push(ToolDefinition {
                name: &tool.name,
                description: tool.description.as_deref(),
                parameters: tool.input_schema.as_ref(),
            });
        }
        let choice = match &self.tool_choice {
            None if definitions.is_empty() => ToolChoice::None,
            None => ToolChoice::Auto,
            Some(choice) => match (choice.kind.as_str(), &choice.name) {
                ("auto", _) => ToolChoice::Auto,
                ("any", _) => ToolChoice::Required,
                ("none", _) => ToolChoice::None,
                ("tool", Some(name)) => ToolChoice::Named(name.clone()),
                ("tool", None) => {
                    return Err(ApiError::invalid(Some("tool_choice.name"), "tool_choice of type `tool` needs the tool's name."))
                }
                (other, _) => {
                    return Err(ApiError::invalid(
                        Some("tool_choice.type"),
                        format!("tool_choice type `{other}` is not one of auto, any, tool or none."),
                    ))
                }
            },
        };
        Ok(Tools::new(definitions, choice)?)
    }

    /// Whether thinking blocks come back without their text (`thinking.display: "omitted"`).
    pub fn omit_thinking(&self) -> bool {
        self.thinking.as_ref().and_then(|t| t.display.as_deref()) == Some("omitted")
    }

    /// `thinking` turns a reasoning model's thinking on or off, and `output_config.effort` is
    /// the effort templates read (`max` as `high`, the most they know); without them the
    /// template's default holds.
    pub fn thinking(&self) -> Result<Thinking, ApiError> {
        let enabled = match self.thinking.as_ref().map(|t| t.kind.as_str()) {
            None => None,
            Some("enabled" | "adaptive") => Some(true),
            Some("disabled") => Some(false),
            Some(other) => {
                return Err(ApiError::invalid(
                    Some("thinking.type"),
                    format!("thinking type `{other}` is not one of enabled, adaptive or disabled."),
                ))
            }
        };
        let effort = self.output_config.as_ref().and_then(|c| c.effort.as_deref());
        if let Some(effort) = effort {
            if !["low", "medium", "high", "max"].contains(&effort) {
                return Err(ApiError::invalid(
                    Some("output_config.effort"),
                    format!("effort `{effort}` is not one of low, medium, high or max."),
                ));
            }
        }
        Ok(Thinking { enabled, effort: effort.map(|e| if e == "max" { "high" } else { e }.to_string()) })
    }

    /// The engine's settings: the model's defaults with what the request sets over them
    /// (`SamplingParams::with_choices`, the rule the app and the CLI use too).
    /// `max_tokens` is required (Anthropic's API requires it; a client that omits it has a bug
    /// it should hear about rather than a reply that runs to the context's end).
    pub fn sampling(&self, defaults: &SamplingParams) -> Result<SamplingParams, ApiError> {
        let max_tokens = self.max_tokens.ok_or_else(|| {
            ApiError::invalid(Some("max_tokens"), "max_tokens is required: the most tokens the reply may have (as in Anthropic's API).")
        })?;
        let max_tokens = reply_token_limit(max_tokens)?;
        let top_k = self
            .top_k
            .map(|k| {
                i32::try_from(k)
                    .ok()
                    .filter(|k| *k >= 0)
                    .ok_or_else(|| ApiError::invalid(Some("top_k"), format!("top_k is {k}; it must be 0 (off) or more.")))
            })
            .transpose()?;
        let stop = self.stop_sequences.clone().unwrap_or_default();
        if stop.iter().any(String::is_empty) {
            return Err(ApiError::invalid(Some("stop_sequences"), "a stop sequence is empty; each must have some text."));
        }
        let choices = SamplingChoices {
            temperature: self.temperature,
            top_p: self.top_p,
            top_k,
            max_tokens: Some(max_tokens),
            stop,
            ..SamplingChoices::default()
        };
        Ok(sampling_params(defaults, &choices)?)
    }
}

/// A message's content as blocks: a string is one text block.
fn blocks(content: &Value, at: &str) -> Result<Vec<Block>, ApiError> {
    match content {
        Value::String(text) => Ok(vec![Block::Text { text: text.clone() }]),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(j, item)| {
                serde_json::from_value(item.clone()).map_err(|e| {
                    ApiError::invalid(
                        Some(&format!("{at}[{j}]")),
                        format!("this content block is not one this server reads ({e}); send text, image, tool_use, tool_result or thinking blocks."),
                    )
                })
            })
            .collect(),
        _ => Err(ApiError::invalid(Some(at), "content must be a string or a list of content blocks.")),
    }
}

/// A system message's text: its text blocks, joined.
fn text_only(blocks: Vec<Block>, at: &str) -> Result<String, ApiError> {
    let mut texts = Vec::with_capacity(blocks.len());
    for (j, block) in blocks.into_iter().enumerate() {
        match block {
            Block::Text { text } => texts.push(text),
            _ => return Err(ApiError::invalid(Some(&format!("{at}.content[{j}]")), "a system message holds text blocks only.")),
        }
    }
    Ok(texts.join("\n"))
}

/// A user message: its tool results first, as `tool` messages in order, then its text and
/// images (the images of tool results too, which templates cannot show in a tool message).
fn user_messages(
    blocks: Vec<Block>,
    at: &str,
    calls: &[(String, String)],
    reference: &dyn Fn(&str) -> String,
    images: &mut ImageReader,
    out: &mut Vec<ChatMessage>,
) -> Result<(), ApiError> {
    let mut text = Vec::new();
    let mut media = Vec::new();
    let mut texts_of_documents = Vec::new();
    for (j, block) in blocks.into_iter().enumerate() {
        let param = format!("{at}.content[{j}]");
        match block {
            Block::Text { text: t } => text.push(t),
            Block::Image { source } => media.push(image(source, &param, images)?),
            Block::Document { source, title } => texts_of_documents.push(document(source, title, &param)?),
            Block::ToolResult { tool_use_id, content, is_error } => {
                let Some((_, name)) = calls.iter().find(|(id, _)| *id == tool_use_id) else {
                    return Err(ApiError::invalid(
                        Some(&format!("{param}.tool_use_id")),
                        format!("no earlier assistant message has a tool_use block with id `{tool_use_id}`; a tool_result answers a tool_use by its id."),
                    ));
                };
                let (result, result_media) = tool_result(content.as_ref(), &param, reference, images)?;
                // Templates have no field for a failed call: the model reads it in the text.
                let result = if is_error { format!("Error: {result}") } else { result };
                let mut tool = ChatMessage::new("tool", result);
                tool.tool_call_id = Some(tool_use_id);
                tool.name = Some(name.clone());
                out.push(tool);
                media.extend(result_media);
            }
            Block::ToolUse { .. } | Block::Thinking { .. } | Block::RedactedThinking {} => {
                return Err(ApiError::invalid(Some(&param), "tool_use and thinking blocks belong in assistant messages."))
            }
            Block::ToolReference { .. } => {
                return Err(ApiError::invalid(Some(&param), "a tool_reference block belongs in a tool_result's content."))
            }
        }
    }
    if !text.is_empty() || !media.is_empty() || !texts_of_documents.is_empty() {
        out.push(ChatMessage::new("user", documents::with_documents(&texts_of_documents, &text)).with_media(media));
    }
    Ok(())
}

/// A document block as the prompt carries it.
fn document(source: DocumentSource, title: Option<String>, param: &str) -> Result<String, ApiError> {
    let (bytes, media_type) = match source {
        DocumentSource::Base64 { media_type, data } => (data_url::base64(&data, param)?, media_type),
        DocumentSource::Text { data } => (data.into_bytes(), "text/plain".to_string()),
        DocumentSource::Url {} | DocumentSource::File {} | DocumentSource::Content {} => {
            return Err(ApiError::invalid(
                Some(param),
                "send the document as base64 or text; this local server does not download files or use the Files API.",
            ))
        }
    };
    let name = title.unwrap_or_else(|| documents::name_for(&media_type).to_string());
    // The title names the document; its format comes from the media type.
    let name = if std::path::Path::new(&name).extension().is_some() { name } else { format!("{name}.{}", extension_of(&media_type)) };
    documents::document_text(&name, &bytes, param)
}

fn extension_of(media_type: &str) -> &'static str {
    documents::name_for(media_type).rsplit('.').next().unwrap_or("txt")
}

fn assistant_message(blocks: Vec<Block>, at: &str) -> Result<ChatMessage, ApiError> {
    let mut text = Vec::new();
    let mut reasoning = Vec::new();
    let mut calls = Vec::new();
    for (j, block) in blocks.into_iter().enumerate() {
        let param = format!("{at}.content[{j}]");
        match block {
            Block::Text { text: t } => text.push(t),
            Block::Thinking { thinking, signature } if thinking.is_empty() => {
                reasoning.extend(signature.as_deref().and_then(thinking_of_signature));
            }
            Block::Thinking { thinking, .. } => reasoning.push(thinking),
            Block::RedactedThinking {} => {}
            Block::ToolUse { id, name, input } => {
                let arguments = call_arguments(&input, &format!("{param}.input"))?;
                calls.push(ToolCall { id, name, arguments });
            }
            Block::Image { .. } | Block::Document { .. } | Block::ToolResult { .. } | Block::ToolReference { .. } => {
                return Err(ApiError::invalid(
                    Some(&param),
                    "image, document, tool_result and tool_reference blocks belong in user messages.",
                ))
            }
        }
    }
    let mut chat = ChatMessage::new("assistant", text.concat());
    chat.tool_calls = calls;
    chat.reasoning_content = Some(reasoning.concat()).filter(|r| !r.is_empty());
    Ok(chat)
}

/// A tool result's content (a string, or text, image and tool_reference blocks) as text and
/// images; a tool search's references, in a `<functions>` block of the tools' definitions.
fn tool_result(
    content: Option<&Value>,
    at: &str,
    reference: &dyn Fn(&str) -> String,
    images: &mut ImageReader,
) -> Result<(String, Vec<MediaItem>), ApiError> {
    let Some(content) = content.filter(|c| !c.is_null()) else { return Ok((String::new(), vec![])) };
    let mut text = Vec::new();
    let mut media = Vec::new();
    let mut functions = Vec::new();
    for (k, block) in blocks(content, &format!("{at}.content"))?.into_iter().enumerate() {
        let param = format!("{at}.content[{k}]");
        match block {
            Block::Text { text: t } => text.push(t),
            Block::Image { source } => media.push(image(source, &param, images)?),
            Block::ToolReference { tool_name } => functions.push(reference(&tool_name)),
            _ => return Err(ApiError::invalid(Some(&param), "a tool_result's content holds text, image and tool_reference blocks only.")),
        }
    }
    if !functions.is_empty() {
        text.push(format!("<functions>\n{}\n</functions>", functions.join("\n")));
    }
    Ok((text.join("\n"), media))
}

fn image(source: ImageSource, param: &str, images: &mut ImageReader) -> Result<MediaItem, ApiError> {
    match source {
        ImageSource::Base64 { media_type, data } => images(&media_type, &data, param),
        ImageSource::Url {} => Err(ApiError::invalid(
            Some(&format!("{param}.source")),
            "image sources of type `url` are not supported: this local server does not download media; send {\"type\": \"base64\", \"media_type\", \"data\"}.",
        )),
        ImageSource::File {} => Err(ApiError::invalid(
            Some(&format!("{param}.source")),
            "image sources of type `file` need Anthropic's Files API, which this server does not have; send the image as base64.",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(body: Value) -> MessagesRequest {
        serde_json::from_value(body).unwrap()
    }

    fn no_images() -> impl FnMut(&str, &str, &str) -> Result<MediaItem, ApiError> {
        |_: &str, _: &str, param: &str| Err(ApiError::invalid(Some(param), "does not read images"))
    }

    fn messages(body: Value) -> Result<Prompt, ApiError> {
        request(body).prompt(&mut no_images())
    }

    fn chat(prompt: Prompt) -> Vec<ChatMessage> {
        match prompt {
            Prompt::Chat(messages) => messages,
            other => panic!("a chat prompt, not {other:?}"),
        }
    }

    fn error_param(body: Value) -> String {
        messages(body).unwrap_err().param.unwrap_or_default()
    }

    #[test]
    fn system_and_text_messages_map_to_chat_messages() {
        let prompt = messages(json!({
            "model": "m", "max_tokens": 5,
            "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}, {"type": "text", "text": "Be kind."}],
            "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]}, {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
        }))
        .unwrap();
        let roles_and_text: Vec<(String, String)> = chat(prompt).into_iter().map(|m| (m.role, m.content)).collect();
        let expected = [("system", "Be brief.\nBe kind."), ("user", "Hi"), ("assistant", "Hello"), ("user", "a\nb")];
        assert_eq!(roles_and_text, expected.map(|(r, t)| (r.to_string(), t.to_string())));
    }

    #[test]
    fn tool_use_and_tool_result_become_calls_and_tool_messages() {
        let prompt = messages(json!({
            "max_tokens": 5,
            "messages": [
                {"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "Call it.", "signature": "sig"},
                    {"type": "redacted_thinking", "data": "xyz"},
                    {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}},
                ]},
                {"role": "user", "content": [
                    {"type": "text", "text": "Thanks."},
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "18 C"}]},
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "down", "is_error": true},
                ]},
            ],
        }))
        .unwrap();
        let chat = chat(prompt);
        assert_eq!(chat.iter().map(|m| m.role.as_str()).collect::<Vec<_>>(), ["user", "assistant", "tool", "tool", "user"]);
        assert_eq!(
            chat[1].tool_calls,
            vec![ToolCall { id: "toolu_1".into(), name: "weather".into(), arguments: json!({"city": "Paris"}) }]
        );
        assert_eq!(chat[1].reasoning_content.as_deref(), Some("Call it."));
        assert_eq!(
            (chat[2].tool_call_id.as_deref(), chat[2].name.as_deref(), chat[2].content.as_str()),
            (Some("toolu_1"), Some("weather"), "18 C")
        );
        assert_eq!(chat[3].content, "Error: down");
        assert_eq!(chat[4].content, "Thanks.");
    }

    #[test]
    fn a_final_assistant_message_is_continued() {
        let prompt = messages(
            json!({"max_tokens": 5, "messages": [{"role": "user", "content": "Count"}, {"role": "assistant", "content": "1, 2,"}]}),
        );
        assert!(matches!(prompt.unwrap(), Prompt::Continue(m) if m.len() == 2));
    }

    #[test]
    fn bad_conversations_name_the_field_at_fault() {
        let user = |content: Value| json!({"max_tokens": 5, "messages": [{"role": "user", "content": content}]});
        assert_eq!(
            error_param(user(json!([{"type": "tool_result", "tool_use_id": "nope", "content": "x"}]))),
            "messages[0].content[0].tool_use_id"
        );
        assert_eq!(error_param(user(json!(["Hi", {"type": "text"}]))), "messages[0].content[0]");
        assert_eq!(error_param(user(json!([{"type": "text", "text": "a"}, {"type": "text"}]))), "messages[0].content[1]");
        assert_eq!(error_param(user(json!([{"type": "document", "source": {}}]))), "messages[0].content[0]");
        assert_eq!(error_param(user(json!(7))), "messages[0].content");
        let url = user(json!([{"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]));
        let error = messages(url).unwrap_err();
        assert_eq!(error.param.as_deref(), Some("messages[0].content[0].source"));
        assert!(error.message.contains("does not download"), "{}", error.message);
        assert_eq!(error_param(user(json!([{"type": "tool_use", "id": "a", "name": "b", "input": {}}]))), "messages[0].content[0]");
        assert_eq!(error_param(json!({"messages": [{"role": "developer", "content": "x"}]})), "messages[0].role");
        assert_eq!(
            error_param(json!({"messages": [{"role": "system", "content": [{"type": "image", "source": {}}]}]})),
            "messages[0].content[0]"
        );
        assert_eq!(error_param(json!({"messages": []})), "messages");
        assert_eq!(error_param(json!({"system": 3, "messages": [{"role": "user", "content": "x"}]})), "system");
        let unanswered = json!({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "b", "input": {}}]}]});
        assert_eq!(error_param(unanswered), "messages");
        let not_object =
            json!({"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "b", "input": [1]}]}]});
        assert_eq!(error_param(not_object), "messages[0].content[0].input");
    }

    #[test]
    fn base64_images_go_to_the_reader_in_order() {
        let mut seen = Vec::new();
        let mut reader = |media_type: &str, data: &str, param: &str| {
            seen.push(format!("{media_type} {data} {param}"));
            Ok::<_, ApiError>(MediaItem::image(format!("{data}.png")))
        };
        let body = request(json!({"max_tokens": 5, "messages": [
            {"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}, {"type": "text", "text": "What?"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "shot", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "BB"}}]}]},
        ]}));
        let chat = chat(body.prompt(&mut reader).unwrap());
        assert_eq!(seen, ["image/png AA messages[0].content[0]", "image/jpeg BB messages[2].content[0].content[0]"]);
        assert_eq!((chat[0].media.len(), chat[2].role.as_str(), chat[3].media.len()), (1, "tool", 1));
    }

    #[test]
    fn tools_choice_and_thinking_map_to_the_engine() {
        let tool = json!({"name": "weather", "description": "Weather now", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}});
        let with = |extra: Value| {
            let mut body = json!({"max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "tools": [tool.clone()]});
            body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            request(body)
        };
        let tools = with(json!({})).tools().unwrap();
        assert_eq!(tools.choice, ToolChoice::Auto);
        assert_eq!(tools.definitions[0]["function"]["parameters"]["properties"]["city"]["type"], "string");
        assert_eq!(with(json!({"tool_choice": {"type": "any"}})).tools().unwrap().choice, ToolChoice::Required);
        assert_eq!(with(json!({"tool_choice": {"type": "none"}})).tools().unwrap().choice, ToolChoice::None);
        let named = with(json!({"tool_choice": {"type": "tool", "name": "weather"}})).tools().unwrap();
        assert_eq!(named.choice, ToolChoice::Named("weather".into()));
        let unknown = with(json!({"tool_choice": {"type": "tool", "name": "stocks"}})).tools().unwrap_err();
        assert_eq!(unknown.param.as_deref(), Some("tool_choice"));
        assert!(unknown.message.contains("`stocks`"));
        let many: Vec<Value> = (0..129).map(|i| json!({"name": format!("t{i}"), "input_schema": {"type": "object"}})).collect();
        assert!(with(json!({ "tools": many })).tools().unwrap_err().message.contains("at most 128"));

        let thinking = |kind: &str| with(json!({"thinking": {"type": kind, "budget_tokens": 1024}})).thinking();
        assert_eq!(thinking("enabled").unwrap(), Thinking::on(true));
        assert_eq!(thinking("disabled").unwrap(), Thinking::on(false));
        assert!(thinking("sometimes").is_err());
        assert_eq!(with(json!({})).thinking().unwrap(), Thinking::default());
    }

    #[test]
    fn system_messages_anywhere_stay_where_they_are() {
        // As Claude Code sends its environment: a system message after the user's.
        let prompt = messages(json!({
            "max_tokens": 5, "system": "You are Claude Code.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
                {"role": "system", "content": [{"type": "text", "text": "# Environment"}, {"type": "text", "text": "cwd: /tmp"}]},
            ],
        }))
        .unwrap();
        let roles_and_text: Vec<(String, String)> = chat(prompt).into_iter().map(|m| (m.role, m.content)).collect();
        let expected = [("system", "You are Claude Code."), ("user", "Hi"), ("system", "# Environment\ncwd: /tmp")];
        assert_eq!(roles_and_text, expected.map(|(r, t)| (r.to_string(), t.to_string())));
    }

    #[test]
    fn anthropics_own_and_deferred_tools_are_left_out_with_a_reason() {
        let tool = |name: &str| json!({"name": name, "input_schema": {"type": "object"}});
        let body = json!({"max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "tools": [
            tool("Bash"),
            {"type": "web_search_20250305", "name": "web_search"},
            {"type": "web_fetch_20250910", "name": "web_fetch"},
            {"type": "code_execution_20250825", "name": "code_execution"},
            {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
            {"name": "DeferredToolPlaceholder", "input_schema": {"type": "object"}, "defer_loading": true},
        ]});
        let request = request(body.clone());
        let tools = request.tools().unwrap();
        let names: Vec<&str> = tools.definitions.iter().map(|d| d["function"]["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["Bash"]);
        let (notes, warnings) = request.ignored();
        assert_eq!(warnings.len(), 4, "{warnings:?}");
        assert!(warnings[0].contains("web_search") && warnings[0].contains("server tools"), "{warnings:?}");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("DeferredToolPlaceholder") && notes[0].contains("defer_loading"), "{notes:?}");
        // A choice of a server tool is an error; of a deferred tool, it is shown.
        let mut chosen = body.clone();
        chosen["tool_choice"] = json!({"type": "tool", "name": "web_search"});
        let error = super::tests::request(chosen).tools().unwrap_err();
        assert_eq!(error.param.as_deref(), Some("tool_choice"));
        let mut deferred = body;
        deferred["tool_choice"] = json!({"type": "tool", "name": "DeferredToolPlaceholder"});
        let tools = super::tests::request(deferred).tools().unwrap();
        assert_eq!(tools.choice, ToolChoice::Named("DeferredToolPlaceholder".into()));
    }

    #[test]
    fn a_tool_reference_loads_a_deferred_tool_where_it_stands() {
        // As Claude Code 2.1.332 sends it after its ToolSearch ran `select:WebFetch`.
        let deferred = |name: &str| json!({"name": name, "description": format!("{name} it."), "input_schema": {"type": "object", "properties": {"url": {"type": "string"}}}, "defer_loading": true});
        let body = json!({"max_tokens": 5, "tools": [
            {"name": "ToolSearch", "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}},
            deferred("WebFetch"), deferred("NotebookEdit"),
        ], "messages": [
            {"role": "user", "content": "Fetch it."},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "ToolSearch", "input": {"query": "select:WebFetch"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "tool_reference", "tool_name": "WebFetch"}], "cache_control": {"type": "ephemeral"}}]},
        ]});
        let request = request(body);
        let chat = chat(request.prompt(&mut no_images()).unwrap());
        assert_eq!(chat[2].role, "tool");
        let definition = chat[2].content.strip_prefix("<functions>\n<function>").and_then(|s| s.strip_suffix("</function>\n</functions>"));
        let definition: Value = serde_json::from_str(definition.expect(&chat[2].content)).unwrap();
        assert_eq!(
            definition,
            json!({"name": "WebFetch", "description": "WebFetch it.", "parameters": {"type": "object", "properties": {"url": {"type": "string"}}}})
        );
        // The prompt's tool list is as before (its prefix cached); the reply may call WebFetch.
        let names =
            |tools: Tools| tools.definitions.iter().map(|d| d["function"]["name"].as_str().unwrap().to_string()).collect::<Vec<_>>();
        assert_eq!(names(request.tools().unwrap()), ["ToolSearch"]);
        assert_eq!(names(request.callable_tools().unwrap()), ["ToolSearch", "WebFetch"]);
        let (notes, _) = request.ignored();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("NotebookEdit"), "the one still deferred: {notes:?}");
    }

    #[test]
    fn thinking_display_effort_and_ignored_fields() {
        // The fields of Claude Code 2.1.332's first request beyond messages, system and tools.
        let body = json!({
            "max_tokens": 32000, "messages": [{"role": "user", "content": "x"}], "stream": true,
            "metadata": {"user_id": "{}"},
            "thinking": {"type": "adaptive", "display": "omitted"},
            "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
            "output_config": {"effort": "high"},
        });
        let request = request(body.clone());
        assert!(request.omit_thinking());
        assert_eq!(request.thinking().unwrap(), Thinking { enabled: Some(true), effort: Some("high".into()) });
        let (notes, warnings) = request.ignored();
        assert!(warnings.is_empty());
        assert_eq!(notes.len(), 1, "metadata is ignored quietly: {notes:?}");
        assert!(notes[0].starts_with("context_management"), "{notes:?}");
        let with = |thinking: Value, effort: &str| {
            let mut body = body.clone();
            body["thinking"] = thinking;
            body["output_config"] = json!({ "effort": effort });
            super::tests::request(body)
        };
        let off = with(json!({"type": "disabled"}), "max").thinking().unwrap();
        assert_eq!(off, Thinking { enabled: Some(false), effort: Some("high".into()) });
        assert!(!with(json!({"type": "enabled", "budget_tokens": 1024, "display": "summarized"}), "low").omit_thinking());
        let bad = with(json!({"type": "enabled"}), "extreme").thinking().unwrap_err();
        assert_eq!(bad.param.as_deref(), Some("output_config.effort"));
    }

    #[test]
    fn omitted_thinking_comes_back_from_confabs_signature_and_others_are_opaque() {
        // As Confab answered with `display: "omitted"` (messages::render), replayed by the client.
        let mut reply = super::super::render::MessageReply::new(1, "m".into(), vec![]);
        reply.omit_thinking = true;
        let turn = confab_turn::WholeReply { reasoning: "Look it up.".into(), text: String::new(), calls: vec![] };
        let answered = reply.whole(&turn, confab_engine::StopReason::Eos, &confab_engine::Usage::default());
        let replay = |thinking: Value| {
            chat(
                messages(json!({"max_tokens": 5, "messages": [
                    {"role": "user", "content": "Hi"},
                    {"role": "assistant", "content": [thinking, {"type": "text", "text": "Hello"}]},
                    {"role": "user", "content": "And?"},
                ]}))
                .unwrap(),
            )
        };
        assert_eq!(replay(answered["content"][0].clone())[1].reasoning_content.as_deref(), Some("Look it up."));
        // Anthropic's omitted thinking: its signature is Anthropic's to read.
        assert_eq!(replay(json!({"type": "thinking", "thinking": "", "signature": "EqQBCkgIARAB"}))[1].reasoning_content, None);
    }

    #[test]
    fn sampling_requires_max_tokens_and_checks_settings() {
        let defaults = SamplingParams { temperature: 0.7, top_k: 40, ..SamplingParams::default() };
        let sampling = |body: Value| request(body).sampling(&defaults);
        let params =
            sampling(json!({"max_tokens": 7, "messages": [], "temperature": 0, "top_k": 5, "stop_sequences": ["\n\n", "END"]})).unwrap();
        assert_eq!((params.max_tokens, params.temperature, params.top_k), (7, 0.0, 5));
        assert_eq!(params.stop, ["\n\n", "END"]);
        // The model's own stop strings stay, the request's after them.
        let model = SamplingParams { stop: vec!["<|im_end|>".into()], ..defaults.clone() };
        let kept = request(json!({"max_tokens": 7, "messages": [], "stop_sequences": ["END"]})).sampling(&model).unwrap();
        assert_eq!(kept.stop, ["<|im_end|>", "END"]);
        let bad = |body: Value| sampling(body).unwrap_err().param.unwrap_or_default();
        assert_eq!(bad(json!({"messages": []})), "max_tokens");
        assert_eq!(bad(json!({"max_tokens": 0, "messages": []})), "max_tokens");
        assert_eq!(bad(json!({"max_tokens": 5, "top_k": -1, "messages": []})), "top_k");
        assert_eq!(bad(json!({"max_tokens": 5, "temperature": -1, "messages": []})), "temperature");
        assert_eq!(bad(json!({"max_tokens": 5, "stop_sequences": [""], "messages": []})), "stop_sequences");
    }
}
