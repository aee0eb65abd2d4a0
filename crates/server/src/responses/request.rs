//! OpenAI's Responses API (`POST /v1/responses`): the request as OpenAI defines it (the fields
//! Confab honours; hosted tools are left out of the prompt, background runs and server-side
//! conversations are refused with a clear error, other fields are ignored), and how its input items become the engine's
//! conversation, tools, template switches, format and sampling settings.
//!
//! A conversation is a list of items: messages (user, system, developer, assistant), the
//! model's `function_call`s and `reasoning`, and the client's `function_call_output`s. A
//! request continuing from a kept response (`previous_response_id`) is that response's chain of
//! inputs and outputs followed by its own input; the prefix cache serves the shared part.

use std::collections::BTreeMap;

use confab_engine::ChatMessage;
use confab_engine::MediaItem;
use confab_engine::ToolCall;
use confab_engine::{SamplingChoices, SamplingParams};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::chat_completions::chat_messages::call_arguments;
use crate::shared::error::ApiError;
use crate::shared::{data_url, documents};
use confab_turn::{checked_switches, reply_token_limit, sampling_params, Thinking};

use crate::shared::turn::{ToolChoice, ToolDefinition, Tools};

/// `POST /v1/responses` (and `POST /v1/responses/input_tokens`, which takes the same body).
#[derive(Debug, Deserialize)]
pub struct ResponsesRequest {
    pub model: Option<String>,
    /// A string (one user message) or a list of items.
    pub input: Option<Value>,
    /// A system message put first; not carried over from a previous response (as OpenAI does).
    pub instructions: Option<String>,
    pub tools: Option<Vec<Value>>,
    pub tool_choice: Option<Value>,
    /// `{"format": {"type": "text" | "json_object" | "json_schema", ...}}`.
    pub text: Option<TextField>,
    /// `{"effort": "none" | "minimal" | "low" | "medium" | "high"}` (`summary` is ignored: the
    /// model's reasoning is returned whole).
    pub reasoning: Option<ReasoningField>,
    /// Signed, so that a negative value gets a clear error rather than a parse failure.
    pub max_output_tokens: Option<i64>,
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    #[serde(default)]
    pub stream: bool,
    /// Keep the response for `previous_response_id` and `GET /v1/responses/{id}` (OpenAI's
    /// default is true).
    pub store: Option<bool>,
    pub previous_response_id: Option<String>,
    pub parallel_tool_calls: Option<bool>,
    pub metadata: Option<Value>,
    /// vLLM's and SGLang's way to set template switches (`{"enable_thinking": false}`).
    pub chat_template_kwargs: Option<Map<String, Value>>,
    /// Runs detached from the request; a local server answers while the client waits.
    pub background: Option<bool>,
    /// OpenAI's server-side conversations; `previous_response_id` chains responses here.
    pub conversation: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
pub struct TextField {
    pub format: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
pub struct ReasoningField {
    pub effort: Option<String>,
}

/// The request's tools as the engine takes them, how the grouped ones are named, and what was
/// left out.
#[derive(Debug)]
pub struct RequestTools {
    pub tools: Tools,
    pub namespaces: Namespaces,
    /// OpenAI's hosted tools, each with why it is left out of the prompt.
    pub left_out: Vec<String>,
}

/// The functions of tool groups (`namespace` tools): `(name shown to the model, group, the
/// function's name)`. The model is shown the function's own name, or `group__name` where
/// another tool has the same name; its calls are answered with `name` and `namespace`, as
/// OpenAI answers them.
#[derive(Debug, Default, Clone)]
pub struct Namespaces(Vec<(String, String, String)>);

impl Namespaces {
    /// The name the model knows a function by.
    pub fn model_name(&self, namespace: Option<&str>, name: &str) -> String {
        let Some(namespace) = namespace else { return name.to_string() };
        self.0
            .iter()
            .find(|(_, group, function)| group == namespace && function == name)
            .map_or_else(|| format!("{namespace}__{name}"), |(shown, _, _)| shown.clone())
    }

    /// A call's group and function name, from the name the model wrote.
    pub fn client_name(&self, model_name: &str) -> (Option<String>, String) {
        match self.0.iter().find(|(shown, _, _)| shown == model_name) {
            Some((_, group, function)) => (Some(group.clone()), function.clone()),
            None => (None, model_name.to_string()),
        }
    }
}

/// One item of a conversation, as the client or the server wrote it.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item {
    Message {
        role: String,
        content: Value,
    },
    FunctionCall {
        call_id: String,
        name: String,
        /// The tool group (`namespace` tool) the function belongs to.
        #[serde(default)]
        namespace: Option<String>,
        /// JSON text of an object (OpenAI's shape); an object is taken too.
        arguments: Value,
    },
    FunctionCallOutput {
        call_id: String,
        output: Value,
    },
    Reasoning {
        #[serde(default)]
        summary: Vec<TextPart>,
        #[serde(default)]
        content: Option<Vec<TextPart>>,
        /// The reasoning as the server that wrote it encrypted it (OpenAI's, replayed by
        /// clients such as Codex): Confab never issues it and cannot read it.
        #[serde(default)]
        encrypted_content: Option<String>,
    },
}

/// A part that carries text: `summary_text`, `reasoning_text`, `input_text`, `output_text`.
#[derive(Debug, Deserialize)]
struct TextPart {
    #[serde(default)]
    text: String,
}

/// A message's content part.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part {
    InputText {
        text: String,
    },
    OutputText {
        text: String,
    },
    Refusal {
        refusal: String,
    },
    InputImage {
        image_url: Option<String>,
    },
    /// A document: `{"type": "input_file", "filename", "file_data": "data:application/pdf;base64,..."}`.
    InputFile {
        filename: Option<String>,
        file_data: Option<String>,
    },
}

/// How an image's data URL becomes a media item the engine reads (written to a file for the
/// request, refused when the model reads no images): `(url, param)`.
pub type ImageReader<'a> = dyn FnMut(&str, &str) -> Result<MediaItem, ApiError> + 'a;

/// Where an item came from, for errors: the request's `input[i]`, or a kept response.
pub struct Sourced<'a> {
    pub item: &'a Value,
    pub param: String,
}

impl ResponsesRequest {
    /// Refuses what a local server does not do, before any work.
    pub fn check(&self) -> Result<(), ApiError> {
        if self.background == Some(true) {
            return Err(ApiError::invalid(
                Some("background"),
                "background responses are not supported; this local server answers while the request waits (stream it to see progress).",
            ));
        }
        if self.conversation.as_ref().is_some_and(|c| !c.is_null()) {
            return Err(ApiError::invalid(
                Some("conversation"),
                "server-side conversations are not supported; continue a conversation with previous_response_id.",
            ));
        }
        Ok(())
    }

    /// The request's own input items, each as an object with its `type` (a string input is
    /// one user message), as they are kept and listed.
    pub fn input_items(&self) -> Result<Vec<Value>, ApiError> {
        match &self.input {
            None | Some(Value::Null) => Err(ApiError::invalid(Some("input"), "input is required: a string, or a list of input items.")),
            Some(Value::String(text)) => {
                Ok(vec![json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": text }] })])
            }
            Some(Value::Array(items)) if items.is_empty() => {
                Err(ApiError::invalid(Some("input"), "input is empty; send at least one item (a user message, or a function_call_output)."))
            }
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    if !item.is_object() {
                        return Err(ApiError::invalid(Some(&format!("input[{i}]")), "each input item must be an object."));
                    }
                    Ok(typed(item.clone()))
                })
                .collect(),
            Some(_) => Err(ApiError::invalid(Some("input"), "input must be a string or a list of input items.")),
        }
    }

    /// The tools and the choice, checked: function tools, and the function tools of each tool
    /// group (`namespace`), unpacked (`Namespaces` maps their calls back to the group's names).
    /// OpenAI's hosted tools (web search, file search, code interpreter, computer use, image
    /// generation, MCP servers...) are left out of the prompt, named in `RequestTools::left_out`;
    /// a `tool_choice` naming one is an error.
    pub fn tools(&self) -> Result<RequestTools, ApiError> {
        let mut functions: Vec<(Option<&str>, &Value, String)> = Vec::new();
        let mut left_out = Vec::new();
        for (i, tool) in self.tools.iter().flatten().enumerate() {
            let at = format!("tools[{i}]");
            let kind = tool.get("type").and_then(Value::as_str).unwrap_or_default();
            match kind {
                "function" => functions.push((None, tool, at)),
                "namespace" => {
                    let Some(group) = tool.get("name").and_then(Value::as_str) else {
                        return Err(ApiError::invalid(Some(&format!("{at}.name")), "a namespace tool needs a name."));
                    };
                    for (j, inner) in tool.get("tools").and_then(Value::as_array).into_iter().flatten().enumerate() {
                        let inner_at = format!("{at}.tools[{j}]");
                        match inner.get("type").and_then(Value::as_str).unwrap_or("function") {
                            "function" => functions.push((Some(group), inner, inner_at)),
                            other => left_out.push(format!("{inner_at} (`{other}` in namespace `{group}`: only function tools run here)")),
                        }
                    }
                }
                other => {
                    if self.tool_choice.as_ref().and_then(|c| c.get("type")).and_then(Value::as_str) == Some(other) {
                        return Err(ApiError::invalid(
                            Some("tool_choice"),
                            format!("tool_choice names `{other}`, one of OpenAI's hosted tools, which do not run on this local server; name a function tool."),
                        ));
                    }
                    left_out.push(format!("{at} `{other}` (one of OpenAI's hosted tools, which do not run on this local server)"));
                }
            }
        }
        let mut namespaces = Namespaces::default();
        let names: Vec<&str> = functions.iter().filter_map(|(_, tool, _)| tool.get("name").and_then(Value::as_str)).collect();
        let mut definitions = Vec::new();
        for (group, tool, at) in &functions {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                return Err(ApiError::invalid(Some(&format!("{at}.name")), "a function tool needs a name."));
            };
            let model_name = match group {
                Some(group) => {
                    // The function's own name, where no other tool has it; else the group's too.
                    let shown =
                        if names.iter().filter(|n| **n == name).count() == 1 { name.to_string() } else { format!("{group}__{name}") };
                    namespaces.0.push((shown.clone(), group.to_string(), name.to_string()));
                    shown
                }
                None => name.to_string(),
            };
            definitions.push((model_name, tool.get("description").and_then(Value::as_str), tool.get("parameters")));
        }
        let definitions: Vec<ToolDefinition> = definitions
            .iter()
            .map(|(name, description, parameters)| ToolDefinition { name, description: *description, parameters: *parameters })
            .collect();
        let choice = match &self.tool_choice {
            None | Some(Value::Null) if definitions.is_empty() => ToolChoice::None,
            None | Some(Value::Null) => ToolChoice::Auto,
            Some(Value::String(mode)) => match mode.as_str() {
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
            Some(choice) => match (choice.get("type").and_then(Value::as_str), choice.get("name").and_then(Value::as_str)) {
                (Some("function"), Some(name)) => {
                    ToolChoice::Named(namespaces.model_name(choice.get("namespace").and_then(Value::as_str), name))
                }
                _ => {
                    return Err(ApiError::invalid(
                        Some("tool_choice"),
                        "tool_choice must be none, auto, required or {\"type\": \"function\", \"name\": ...}.",
                    ))
                }
            },
        };
        Ok(RequestTools { tools: Tools::new(definitions, choice)?, namespaces, left_out })
    }

    /// The template switches the request sets itself (`chat_template_kwargs`).
    pub fn switches(&self) -> Result<BTreeMap<String, Value>, ApiError> {
        Ok(checked_switches(self.chat_template_kwargs.as_ref().unwrap_or(&Map::new()))?)
    }

    /// `reasoning.effort`, as Chat Completions' `reasoning_effort`.
    pub fn thinking(&self) -> Thinking {
        Thinking { enabled: None, effort: self.reasoning.as_ref().and_then(|r| r.effort.clone()) }
    }

    /// `text.format`, as the request sent it.
    pub fn format(&self) -> Option<&Value> {
        self.text.as_ref().and_then(|t| t.format.as_ref())
    }

    /// The engine's settings: the model's defaults with what the request sets over them
    /// (`SamplingParams::with_choices`, the rule the app and the CLI use too); the reply may run to the context's end unless `max_output_tokens` bounds it.
    pub fn sampling(&self, defaults: &SamplingParams) -> Result<SamplingParams, ApiError> {
        let limit = self
            .max_output_tokens
            .map(|limit| reply_token_limit(limit).map_err(|e| ApiError::invalid(Some("max_output_tokens"), e.to_string())))
            .transpose()?;
        let choices = SamplingChoices {
            temperature: self.temperature,
            top_p: self.top_p,
            max_tokens: Some(limit.unwrap_or(0)),
            ..SamplingChoices::default()
        };
        Ok(sampling_params(defaults, &choices)?)
    }
}

/// The conversation as the engine takes it: the instructions first, then the items in order.
/// A run of the model's items (reasoning, an assistant message, function calls) is one
/// assistant message; each `function_call_output` is a `tool` message answering a call by its
/// id, the images of a run of outputs following them as one user message (templates show no
/// image in a tool message; the Messages API's tool results do the same). Every call must have
/// its output: the model continues after the results. A reasoning item encrypted by another
/// server is read as its summary, or left out where it has none, with a logged note.
pub fn conversation(
    instructions: Option<&str>,
    items: &[Sourced],
    namespaces: &Namespaces,
    images: &mut ImageReader,
) -> Result<Vec<ChatMessage>, ApiError> {
    let mut out = Vec::with_capacity(items.len() + 1);
    if let Some(instructions) = instructions.filter(|i| !i.is_empty()) {
        out.push(ChatMessage::new("system", instructions));
    }
    // The model's turn being gathered, and every call so far (id, name, answered).
    let mut assistant: Option<ChatMessage> = None;
    let mut calls: Vec<(String, String, bool)> = Vec::new();
    // The images of the function outputs just read, for the user message after them.
    let mut output_media: Vec<MediaItem> = Vec::new();
    let mut encrypted: Vec<String> = Vec::new();
    for Sourced { item, param } in items {
        let item: Item = serde_json::from_value(typed((*item).clone())).map_err(|e| {
            ApiError::invalid(
                Some(param),
                format!(
                    "this item is not one this server reads ({e}); send message, function_call, function_call_output or reasoning items."
                ),
            )
        })?;
        let turn = || ChatMessage::new("assistant", "");
        if !matches!(item, Item::FunctionCallOutput { .. }) && !output_media.is_empty() {
            out.push(ChatMessage::new("user", "").with_media(std::mem::take(&mut output_media)));
        }
        match item {
            Item::Message { role, content } if role == "assistant" => {
                let text = message_text(&content, &format!("{param}.content"), &mut |_: &str, at: &str| {
                    Err(ApiError::invalid(Some(at), "an assistant message holds text only."))
                })?
                .0;
                assistant.get_or_insert_with(turn).content.push_str(&text);
            }
            Item::Message { role, content } => {
                let role = match role.as_str() {
                    "user" => "user",
                    "system" | "developer" => "system",
                    other => {
                        return Err(ApiError::invalid(
                            Some(&format!("{param}.role")),
                            format!("role `{other}` is not supported; use user, system, developer or assistant."),
                        ))
                    }
                };
                out.extend(assistant.take());
                let (text, media) = message_text(&content, &format!("{param}.content"), images)?;
                out.push(ChatMessage::new(role, text).with_media(media));
            }
            Item::FunctionCall { call_id, name, namespace, arguments } => {
                let name = namespaces.model_name(namespace.as_deref(), &name);
                let arguments = call_arguments(&arguments, &format!("{param}.arguments"))?;
                calls.push((call_id.clone(), name.clone(), false));
                assistant.get_or_insert_with(turn).tool_calls.push(ToolCall { id: call_id, name, arguments });
            }
            Item::Reasoning { summary, content, encrypted_content } => {
                let parts = content.filter(|c| !c.is_empty()).unwrap_or(summary);
                let text: String = parts.into_iter().map(|p| p.text).collect();
                if encrypted_content.is_some_and(|e| !e.is_empty()) {
                    encrypted.push(if text.is_empty() { format!("{param} (left out)") } else { format!("{param} (its summary read)") });
                }
                let message = assistant.get_or_insert_with(turn);
                message.reasoning_content = Some(message.reasoning_content.take().unwrap_or_default() + &text).filter(|r| !r.is_empty());
            }
            Item::FunctionCallOutput { call_id, output } => {
                let Some(call) = calls.iter_mut().find(|(id, _, _)| *id == call_id) else {
                    return Err(ApiError::invalid(
                        Some(&format!("{param}.call_id")),
                        format!("no earlier function_call has call_id `{call_id}`; a function_call_output answers a call by its id."),
                    ));
                };
                call.2 = true;
                out.extend(assistant.take());
                let text = match &output {
                    Value::String(text) => text.clone(),
                    other => {
                        let (text, media) = message_text(other, &format!("{param}.output"), images)?;
                        output_media.extend(media);
                        text
                    }
                };
                let mut tool = ChatMessage::new("tool", text);
                tool.tool_call_id = Some(call_id);
                tool.name = Some(call.1.clone());
                out.push(tool);
            }
        }
    }
    out.extend(assistant.take());
    if !output_media.is_empty() {
        out.push(ChatMessage::new("user", "").with_media(output_media));
    }
    if !encrypted.is_empty() {
        tracing::info!(
            items = encrypted.join(", "),
            "responses: reasoning encrypted by another server (its encrypted_content) cannot be read here; its summary is read in its place, or it is left out"
        );
    }
    if let Some((id, name, _)) = calls.iter().find(|(_, _, answered)| !answered) {
        return Err(ApiError::invalid(
            Some("input"),
            format!("the function call `{id}` ({name}) has no output; send {{\"type\": \"function_call_output\", \"call_id\": \"{id}\", \"output\": ...}} with its result."),
        ));
    }
    if !out.iter().any(|m| m.role != "system") {
        return Err(ApiError::invalid(Some("input"), "input has no message; send at least one user message."));
    }
    Ok(out)
}

/// An item with its `type`: an "easy" message has a role and no type.
fn typed(mut item: Value) -> Value {
    if let Some(object) = item.as_object_mut() {
        if !object.contains_key("type") && object.contains_key("role") {
            object.insert("type".into(), Value::from("message"));
        }
    }
    item
}

/// A message's content (a string or a list of parts) as text and images.
fn message_text(content: &Value, at: &str, images: &mut ImageReader) -> Result<(String, Vec<MediaItem>), ApiError> {
    let parts = match content {
        Value::String(text) => return Ok((text.clone(), vec![])),
        Value::Array(parts) => parts,
        _ => return Err(ApiError::invalid(Some(at), "content must be a string or a list of content parts.")),
    };
    let mut text = Vec::new();
    let mut media = Vec::new();
    let mut texts_of_documents = Vec::new();
    for (j, part) in parts.iter().enumerate() {
        let param = format!("{at}[{j}]");
        let part: Part = serde_json::from_value(part.clone()).map_err(|e| {
            ApiError::invalid(
                Some(&param),
                format!(
                    "this content part is not one this server reads ({e}); send input_text, output_text, input_image or input_file parts."
                ),
            )
        })?;
        match part {
            Part::InputText { text: t } | Part::OutputText { text: t } | Part::Refusal { refusal: t } => text.push(t),
            Part::InputImage { image_url: Some(url) } => media.push(images(&url, &param)?),
            Part::InputImage { image_url: None } => {
                return Err(ApiError::invalid(
                    Some(&param),
                    "input_image needs an image_url (a data URL); file ids need OpenAI's Files API, which this server does not have.",
                ))
            }
            Part::InputFile { filename, file_data: Some(url) } => {
                let (bytes, media_type) = data_url::decode(&url, &param, "file_data", "application/pdf")?;
                let name = filename.unwrap_or_else(|| documents::name_for(&media_type).to_string());
                texts_of_documents.push(documents::document_text(&name, &bytes, &param)?);
            }
            Part::InputFile { file_data: None, .. } => {
                return Err(ApiError::invalid(
                    Some(&param),
                    "input_file needs file_data (a data URL); file ids need OpenAI's Files API, which this server does not have.",
                ))
            }
        }
    }
    Ok((documents::with_documents(&texts_of_documents, &text), media))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(body: Value) -> ResponsesRequest {
        serde_json::from_value(body).unwrap()
    }

    fn no_images(_: &str, param: &str) -> Result<MediaItem, ApiError> {
        Err(ApiError::invalid(Some(param), "no images here"))
    }

    fn chat(items: &[Value], instructions: Option<&str>) -> Result<Vec<ChatMessage>, ApiError> {
        let sourced: Vec<Sourced> = items.iter().enumerate().map(|(i, item)| Sourced { item, param: format!("input[{i}]") }).collect();
        conversation(instructions, &sourced, &Namespaces::default(), &mut no_images)
    }

    #[test]
    fn a_string_input_is_one_user_message() {
        let items = request(json!({"input": "Hi"})).input_items().unwrap();
        assert_eq!(items, [json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]})]);
        let messages = chat(&items, Some("Be brief.")).unwrap();
        assert_eq!(
            messages.iter().map(|m| (m.role.as_str(), m.content.as_str())).collect::<Vec<_>>(),
            [("system", "Be brief."), ("user", "Hi")]
        );
        let easy = request(json!({"input": [{"role": "user", "content": "Hi"}]})).input_items().unwrap();
        assert_eq!(easy[0]["type"], "message");
    }

    #[test]
    fn the_models_items_make_one_assistant_turn_and_outputs_answer_calls() {
        let items = [
            json!({"type": "message", "role": "user", "content": "Weather?"}),
            json!({"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "Use the tool."}]}),
            json!({"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}),
            json!({"type": "function_call_output", "call_id": "call_1", "output": "Sunny"}),
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It is sunny.", "annotations": []}]}),
            json!({"role": "user", "content": [{"type": "input_text", "text": "Thanks"}]}),
        ];
        let messages = chat(&items, None).unwrap();
        let roles: Vec<&str> = messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "tool", "assistant", "user"]);
        assert_eq!(messages[1].reasoning_content.as_deref(), Some("Use the tool."));
        assert_eq!(messages[1].tool_calls[0].arguments, json!({"city": "Paris"}));
        assert_eq!((messages[2].tool_call_id.as_deref(), messages[2].name.as_deref()), (Some("call_1"), Some("get_weather")));
        assert_eq!(messages[3].content, "It is sunny.");
    }

    #[test]
    fn reasoning_another_server_encrypted_is_read_as_its_summary_or_left_out() {
        // As Codex replays OpenAI's reasoning: a summary, no content, encrypted_content.
        let reasoning = |summary: Value| json!({"type": "reasoning", "id": "rs_1", "summary": summary, "content": null, "encrypted_content": "gAAAAABopaque"});
        let call = json!({"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{\"cmd\":\"ls\"}"});
        let output = json!({"type": "function_call_output", "call_id": "c1", "output": "README.md"});
        let user = json!({"role": "user", "content": "List the files."});
        let summary = json!([{"type": "summary_text", "text": "List them first."}]);
        let messages = chat(&[user.clone(), reasoning(summary), call.clone(), output.clone()], None).unwrap();
        assert_eq!(messages[1].reasoning_content.as_deref(), Some("List them first."));
        assert_eq!(messages[1].tool_calls[0].name, "exec_command");
        let messages = chat(&[user, reasoning(json!([])), call, output], None).unwrap();
        assert_eq!(messages[1].reasoning_content, None, "nothing readable: left out, not refused");
        assert_eq!(messages.iter().map(|m| m.role.as_str()).collect::<Vec<_>>(), ["user", "assistant", "tool"]);
    }

    #[test]
    fn images_in_function_outputs_follow_the_outputs_as_a_user_message() {
        let call = |id: &str| json!({"type": "function_call", "call_id": id, "name": "view_image", "arguments": "{}"});
        let image = |id: &str| {
            json!({"type": "function_call_output", "call_id": id, "output": [
                {"type": "input_text", "text": format!("image {id}")}, {"type": "input_image", "image_url": format!("data:image/png;base64,{id}")}]})
        };
        let items = [
            json!({"role": "user", "content": "Look."}),
            call("a"),
            call("b"),
            image("a"),
            image("b"),
            json!({"role": "user", "content": "And?"}),
        ];
        let sourced: Vec<Sourced> = items.iter().enumerate().map(|(i, item)| Sourced { item, param: format!("input[{i}]") }).collect();
        let mut read = Vec::new();
        let mut images = |url: &str, param: &str| {
            read.push(param.to_string());
            Ok(MediaItem::from_bytes(confab_engine::MediaKind::Image, url, url.as_bytes().to_vec()))
        };
        let messages = conversation(None, &sourced, &Namespaces::default(), &mut images).unwrap();
        let roles: Vec<&str> = messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "tool", "tool", "user", "user"]);
        assert_eq!((messages[2].content.as_str(), messages[3].content.as_str()), ("image a", "image b"));
        assert_eq!(messages[4].media.len(), 2, "both outputs' images, after the outputs");
        assert_eq!(read, ["input[3].output[1]", "input[4].output[1]"]);
    }

    #[test]
    fn bad_items_name_their_place() {
        let param = |items: &[Value]| chat(items, None).unwrap_err().param.unwrap();
        let user = json!({"role": "user", "content": "Hi"});
        assert_eq!(param(&[user.clone(), json!({"type": "function_call_output", "call_id": "nope", "output": "1"})]), "input[1].call_id");
        assert_eq!(param(&[user.clone(), json!({"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"})]), "input");
        assert_eq!(param(&[json!({"type": "web_search_call"})]), "input[0]");
        assert_eq!(param(&[json!({"role": "tool", "content": "x"})]), "input[0].role");
        assert_eq!(param(&[json!({"role": "user", "content": [{"type": "input_image", "file_id": "f"}]})]), "input[0].content[0]");
        assert_eq!(param(&[json!({"role": "user", "content": [{"type": "input_audio"}]})]), "input[0].content[0]");
        let bad_arguments = json!({"type": "function_call", "call_id": "c", "name": "f", "arguments": "{oops"});
        assert_eq!(param(&[user, bad_arguments]), "input[1].arguments");
        assert_eq!(request(json!({"input": []})).input_items().unwrap_err().param.as_deref(), Some("input"));
        assert_eq!(request(json!({"input": [3]})).input_items().unwrap_err().param.as_deref(), Some("input[0]"));
    }

    #[test]
    fn tools_choice_effort_and_limits() {
        let tool = json!({"type": "function", "name": "get_time", "parameters": {"type": "object", "properties": {}}});
        let tools = request(json!({"tools": [tool], "tool_choice": {"type": "function", "name": "get_time"}})).tools().unwrap().tools;
        assert_eq!(tools.choice, ToolChoice::Named("get_time".into()));
        assert_eq!(tools.definitions[0]["function"]["name"], "get_time");
        let unknown = request(json!({"tools": [tool], "tool_choice": {"type": "function", "name": "nope"}})).tools().unwrap_err();
        assert_eq!(unknown.param.as_deref(), Some("tool_choice"));

        let thinking = request(json!({"reasoning": {"effort": "none"}})).thinking();
        assert_eq!(
            thinking,
            Thinking { enabled: None, effort: Some("none".into()) },
            "effort none turns thinking off (confab_turn::Thinking)"
        );
        let defaults = SamplingParams::default();
        assert_eq!(request(json!({"max_output_tokens": 5})).sampling(&defaults).unwrap().max_tokens, 5);
        assert_eq!(request(json!({"max_output_tokens": 0})).sampling(&defaults).unwrap_err().param.as_deref(), Some("max_output_tokens"));
        let model = SamplingParams { stop: vec!["<|im_end|>".into()], ..defaults.clone() };
        assert_eq!(request(json!({})).sampling(&model).unwrap().stop, ["<|im_end|>"], "the model's stop strings stay");
        assert_eq!(request(json!({"background": true})).check().unwrap_err().param.as_deref(), Some("background"));
    }

    #[test]
    fn hosted_tools_are_left_out_and_a_choice_of_one_is_an_error() {
        let tool = json!({"type": "function", "name": "get_time"});
        let body = json!({"tools": [tool, {"type": "web_search", "external_web_access": false}, {"type": "file_search"}, {"type": "code_interpreter"},
            {"type": "computer_use_preview"}, {"type": "image_generation"}, {"type": "local_shell"}]});
        let tools = request(body.clone()).tools().unwrap();
        assert_eq!(tools.tools.definitions.len(), 1);
        assert_eq!(tools.left_out.len(), 6);
        assert!(tools.left_out[0].starts_with("tools[1] `web_search`"), "{:?}", tools.left_out);
        let mut chosen = body;
        chosen["tool_choice"] = json!({"type": "web_search"});
        let error = request(chosen).tools().unwrap_err();
        assert_eq!(error.param.as_deref(), Some("tool_choice"));
        assert!(error.message.contains("`web_search`"), "{}", error.message);
    }

    #[test]
    fn namespace_groups_are_unpacked_and_their_calls_named_as_the_group_names_them() {
        let function =
            |name: &str| json!({"type": "function", "name": name, "description": "d", "parameters": {"type": "object", "properties": {}}});
        let body = json!({"tools": [
            function("exec_command"),
            {"type": "namespace", "name": "multi_agent_v1", "description": "Agents.", "tools": [function("spawn_agent"), function("exec_command")]},
        ]});
        let tools = request(body).tools().unwrap();
        let names: Vec<&str> = tools.tools.definitions.iter().map(|d| d["function"]["name"].as_str().unwrap()).collect();
        // A function whose name another tool has is shown with its group's.
        assert_eq!(names, ["exec_command", "spawn_agent", "multi_agent_v1__exec_command"]);
        let namespaces = &tools.namespaces;
        assert_eq!(namespaces.client_name("spawn_agent"), (Some("multi_agent_v1".into()), "spawn_agent".into()));
        assert_eq!(namespaces.client_name("multi_agent_v1__exec_command"), (Some("multi_agent_v1".into()), "exec_command".into()));
        assert_eq!(namespaces.client_name("exec_command"), (None, "exec_command".into()));
        // A call the client sends back with its namespace reaches the model by the name it knows.
        let items = [
            json!({"role": "user", "content": "Go"}),
            json!({"type": "function_call", "call_id": "c1", "name": "spawn_agent", "namespace": "multi_agent_v1", "arguments": "{}"}),
            json!({"type": "function_call_output", "call_id": "c1", "output": "ok"}),
        ];
        let sourced: Vec<Sourced> = items.iter().enumerate().map(|(i, item)| Sourced { item, param: format!("input[{i}]") }).collect();
        let messages = conversation(None, &sourced, namespaces, &mut no_images).unwrap();
        assert_eq!(messages[1].tool_calls[0].name, "spawn_agent");
        assert_eq!(messages[2].name.as_deref(), Some("spawn_agent"));
        // A choice of a grouped function names it with its group.
        let choice = request(json!({"tools": [{"type": "namespace", "name": "g", "tools": [function("f")]}],
            "tool_choice": {"type": "function", "name": "f", "namespace": "g"}}));
        assert_eq!(choice.tools().unwrap().tools.choice, ToolChoice::Named("f".into()));
    }
}
