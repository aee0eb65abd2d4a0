//! One assistant turn, whatever the API: the request's tools and switches made into the
//! engine's chat options, and the reply read back as reasoning, text and tool calls with the
//! model's own parser. Chat Completions and Messages (and Responses) only shape what this gives.

use std::sync::atomic::{AtomicU64, Ordering};

use confab_engine::runtime::{Event, ModelInfo, Request, StopReason, Usage};
use confab_engine::text::{ChatOptions, ReplyParser, ReplyPart};
use confab_engine::Constraint;
use serde_json::Value;

use super::error::ApiError;
use super::running::Running;

/// At most this many tools per request (OpenAI's limit).
pub const MAX_TOOLS: usize = 128;

/// Which tools the model may or must call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// No call: the tools are not shown to the model.
    None,
    Auto,
    /// Some call.
    Required,
    /// A call of this tool.
    Named(String),
}

/// The request's tools, checked: each `{"type": "function", "function": {"name", "description",
/// "parameters"}}` as templates read them.
#[derive(Debug, Clone)]
pub struct Tools {
    pub definitions: Vec<Value>,
    pub choice: ToolChoice,
}

/// A function tool, as each API describes it.
pub struct ToolDefinition<'a> {
    pub name: &'a str,
    pub description: Option<&'a str>,
    /// A JSON Schema object; `None` takes no arguments.
    pub parameters: Option<&'a Value>,
}

impl Tools {
    /// Checks names, schemas and the choice; `param` names the field in errors.
    pub fn new(definitions: Vec<ToolDefinition>, choice: ToolChoice, param: &str) -> Result<Self, ApiError> {
        if definitions.len() > MAX_TOOLS {
            return Err(ApiError::invalid(Some(param), format!("{} tools given; at most {MAX_TOOLS} are allowed.", definitions.len())));
        }
        let mut names: Vec<&str> = Vec::new();
        let mut out = Vec::with_capacity(definitions.len());
        for (i, tool) in definitions.iter().enumerate() {
            let at = format!("{param}[{i}]");
            let valid =
                !tool.name.is_empty() && tool.name.len() <= 64 && tool.name.chars().all(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
            if !valid {
                return Err(ApiError::invalid(
                    Some(&at),
                    format!("the tool name `{}` is not valid: use 1 to 64 letters, digits, underscores or dashes.", tool.name),
                ));
            }
            if names.contains(&tool.name) {
                return Err(ApiError::invalid(Some(&at), format!("two tools are named `{}`; tool names must differ.", tool.name)));
            }
            names.push(tool.name);
            let parameters = match tool.parameters {
                None | Some(Value::Null) => serde_json::json!({ "type": "object", "properties": {} }),
                Some(schema @ Value::Object(_)) => schema.clone(),
                Some(_) => return Err(ApiError::invalid(Some(&at), "the tool's parameters must be a JSON Schema object.")),
            };
            let mut function = serde_json::json!({ "name": tool.name, "parameters": parameters });
            if let Some(description) = tool.description {
                function["description"] = Value::from(description);
            }
            out.push(serde_json::json!({ "type": "function", "function": function }));
        }
        match &choice {
            ToolChoice::Named(name) if !names.contains(&name.as_str()) => {
                return Err(ApiError::invalid(
                    Some("tool_choice"),
                    format!("tool_choice names `{name}`, which is not among the request's tools ({}).", names.join(", ")),
                ))
            }
            ToolChoice::Required | ToolChoice::Named(_) if out.is_empty() => {
                return Err(ApiError::invalid(Some("tool_choice"), "tool_choice asks for a call, but the request defines no tools."))
            }
            _ => {}
        }
        Ok(Self { definitions: out, choice })
    }

    /// Whether the model sees tools and its calls are read.
    pub fn offered(&self) -> bool {
        !self.definitions.is_empty() && self.choice != ToolChoice::None
    }

    /// The template's inputs: the tools the model is shown, and the switches.
    pub fn chat_options(&self, switches: std::collections::BTreeMap<String, Value>) -> ChatOptions {
        let tools = if self.offered() { self.definitions.clone() } else { vec![] };
        ChatOptions { tools, switches, reply_prefix: None }
    }

    /// Puts the tools on an engine request, whose reply is read with a `Turn`. A reply that
    /// must call a tool (`required`, or a named one) is held to a grammar of that call, its
    /// arguments valid against the tool's schema, so even a small model makes a call that
    /// validates, in the model's own call syntax; for a schema the grammar cannot hold a call
    /// to (`$ref`, a `pattern` on a text value...), the call's opening is written for the model
    /// and the reply stops at the call's end.
    pub fn apply(
        &self,
        model: &ModelInfo,
        switches: std::collections::BTreeMap<String, Value>,
        request: &mut Request,
    ) -> Result<(), ApiError> {
        let format = model.reply_format;
        let name = |tool: &Value| tool["function"]["name"].as_str().unwrap_or_default().to_string();
        let allowed: Vec<Value> = match &self.choice {
            ToolChoice::Named(wanted) => self.definitions.iter().filter(|t| name(t) == *wanted).cloned().collect(),
            ToolChoice::Required => self.definitions.clone(),
            ToolChoice::Auto | ToolChoice::None => vec![],
        };
        let mut chat = self.chat_options(switches);
        if !allowed.is_empty() {
            match format.call_grammar(&allowed, &model.markup_tokens) {
                Some(grammar) if request.constraint.is_none() => {
                    request.constraint = Some(Constraint::Lark(grammar));
                    // Empty, but it closes a reasoning block the template opened.
                    chat.reply_prefix = Some(String::new());
                }
                Some(_) => {
                    return Err(ApiError::invalid(
                        Some("tool_choice"),
                        "a reply that must call a tool cannot also follow a response format (response_format, text.format); send one or the other.",
                    ))
                }
                None => {
                    chat.reply_prefix = Some(if allowed.len() == 1 {
                        format.call_opening(&name(&allowed[0]))
                    } else {
                        format.any_call_opening().to_string()
                    });
                    request.sampling.stop.extend(format.call_close().map(str::to_string));
                }
            }
        }
        request.chat = chat;
        request.reply_markup = true;
        Ok(())
    }
}

/// What a turn gives, in order.
#[derive(Debug, Clone)]
pub enum TurnEvent {
    Reasoning(String),
    Text(String),
    ToolCall { id: String, name: String, arguments: Value },
    Done { reason: StopReason, usage: Usage },
}

/// A running reply, read through the model's reply parser.
pub struct Turn {
    running: Running,
    parser: ReplyParser,
    ready: std::collections::VecDeque<TurnEvent>,
    /// A denoising reply's parts, held until their canvas is finished: a client gets a chunk
    /// per canvas rather than a canvas's tokens one by one.
    held: Option<Vec<TurnEvent>>,
    ended: bool,
    /// Calls given so far (ids are numbered in order).
    calls: usize,
}

impl Turn {
    pub fn new(running: Running, model: &ModelInfo, tools: &Tools) -> Self {
        let definitions = tools.offered().then(|| tools.definitions.clone());
        let parser = ReplyParser::new(model.reply_format, false, definitions);
        let held = running.plan().is_some_and(|plan| plan.method == "denoising").then(Vec::new);
        Self { running, parser, ready: Default::default(), held, ended: false, calls: 0 }
    }

    /// The next event; `None` after `Done` (or an error).
    pub async fn next(&mut self) -> Option<Result<TurnEvent, ApiError>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(Ok(event));
            }
            if self.ended {
                return None;
            }
            match self.running.next().await {
                Some(Event::Token { text, .. } | Event::Text(text)) => {
                    let parts = self.parser.push(&text);
                    self.take(parts);
                }
                Some(Event::Canvas(canvas)) if canvas.finished => self.release(),
                Some(Event::Done { reason, usage, .. }) => {
                    let parts = self.parser.finish();
                    self.take(parts);
                    self.release();
                    self.ready.push_back(TurnEvent::Done { reason, usage });
                    self.ended = true;
                }
                Some(Event::Error(e)) => {
                    self.ended = true;
                    return Some(Err(e.into()));
                }
                Some(Event::Plan(_) | Event::Canvas(_) | Event::Queued { .. }) => {}
                None => {
                    self.ended = true;
                    return Some(Err(confab_engine::EngineError::EngineStopped.into()));
                }
            }
        }
    }

    /// The engine's plan for the request (prompt tokens, and those the cache serves).
    pub fn plan(&self) -> Option<&confab_engine::runtime::Plan> {
        self.running.plan()
    }

    fn take(&mut self, parts: Vec<ReplyPart>) {
        for part in parts {
            let event = match part {
                ReplyPart::Reasoning(text) => TurnEvent::Reasoning(text),
                ReplyPart::Content(text) => TurnEvent::Text(text),
                ReplyPart::ToolCall(call) => {
                    self.calls += 1;
                    TurnEvent::ToolCall { id: call_id(), name: call.name, arguments: call.arguments }
                }
            };
            match self.held.as_mut() {
                Some(held) => held.push(event),
                None => self.ready.push_back(event),
            }
        }
    }

    /// A finished canvas's held parts, as one text and one reasoning event where they follow
    /// each other.
    fn release(&mut self) {
        let Some(held) = self.held.as_mut() else { return };
        for event in held.drain(..) {
            match (self.ready.back_mut(), event) {
                (Some(TurnEvent::Text(text)), TurnEvent::Text(more)) => text.push_str(&more),
                (Some(TurnEvent::Reasoning(text)), TurnEvent::Reasoning(more)) => text.push_str(&more),
                (_, event) => self.ready.push_back(event),
            }
        }
    }
}

/// A call id no other call of this server had: clients match results to calls by it.
fn call_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let started = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    format!("call_{started:x}{:06x}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The reply's whole content, read to its end.
#[derive(Debug, Default)]
pub struct WholeTurn {
    pub reasoning: String,
    pub text: String,
    pub calls: Vec<(String, String, Value)>,
}

impl Turn {
    /// Reads the turn to its end.
    pub async fn whole(mut self) -> Result<(WholeTurn, StopReason, Usage), ApiError> {
        let mut whole = WholeTurn::default();
        while let Some(event) = self.next().await {
            match event? {
                TurnEvent::Reasoning(text) => whole.reasoning.push_str(&text),
                TurnEvent::Text(text) => whole.text.push_str(&text),
                TurnEvent::ToolCall { id, name, arguments } => whole.calls.push((id, name, arguments)),
                TurnEvent::Done { reason, usage } => return Ok((whole, reason, usage)),
            }
        }
        Err(confab_engine::EngineError::EngineStopped.into())
    }
}

/// The template switches a request may set, checked: names as templates use them, never the
/// variables the server sets itself.
pub fn checked_switches(
    switches: &serde_json::Map<String, Value>,
    param: &str,
) -> Result<std::collections::BTreeMap<String, Value>, ApiError> {
    const RESERVED: [&str; 5] = ["messages", "tools", "add_generation_prompt", "documents", "bos_token"];
    let mut out = std::collections::BTreeMap::new();
    for (name, value) in switches {
        let identifier = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !identifier || RESERVED.contains(&name.as_str()) || name.ends_with("_token") {
            return Err(ApiError::invalid(Some(param), format!("`{name}` cannot be set as a template switch.")));
        }
        out.insert(name.clone(), value.clone());
    }
    Ok(out)
}

/// A reasoning effort (`none`, `low`, …) as template switches: `none` turns a reasoning
/// model's thinking off; templates that read `reasoning_effort` get it too. Switches the
/// request set itself win.
pub fn effort_switches(switches: &mut std::collections::BTreeMap<String, Value>, effort: Option<&str>) {
    if let Some(effort) = effort {
        switches.entry("enable_thinking".into()).or_insert(Value::Bool(effort != "none"));
        switches.entry("reasoning_effort".into()).or_insert(Value::from(effort));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str) -> ToolDefinition<'_> {
        ToolDefinition { name, description: Some("d"), parameters: None }
    }

    #[test]
    fn tools_are_checked() {
        let tools = Tools::new(vec![tool("get_time")], ToolChoice::Auto, "tools").unwrap();
        assert_eq!(
            tools.definitions[0],
            json!({"type": "function", "function": {"name": "get_time", "description": "d", "parameters": {"type": "object", "properties": {}}}})
        );
        let err = |definitions, choice| Tools::new(definitions, choice, "tools").unwrap_err();
        assert_eq!(err(vec![tool("a b")], ToolChoice::Auto).param.as_deref(), Some("tools[0]"));
        assert!(err(vec![tool("a"), tool("a")], ToolChoice::Auto).message.contains("named `a`"));
        assert_eq!(err(vec![tool("a")], ToolChoice::Named("b".into())).param.as_deref(), Some("tool_choice"));
        assert_eq!(err(vec![], ToolChoice::Required).param.as_deref(), Some("tool_choice"));
        let many: Vec<String> = (0..=MAX_TOOLS).map(|i| format!("t{i}")).collect();
        assert!(err(many.iter().map(|n| tool(n)).collect(), ToolChoice::Auto).message.contains("at most 128"));
    }

    #[test]
    fn switches_cannot_replace_the_servers_variables() {
        let ok = checked_switches(json!({"enable_thinking": false}).as_object().unwrap(), "p").unwrap();
        assert_eq!(ok["enable_thinking"], json!(false));
        for bad in ["messages", "eos_token", "a-b", ""] {
            assert!(checked_switches(json!({ bad: 1 }).as_object().unwrap(), "p").is_err(), "{bad}");
        }
    }
}
