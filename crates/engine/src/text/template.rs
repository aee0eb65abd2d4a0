//! `ChatTemplate`: a model's Jinja chat template, rendered as Hugging Face renders it.
//!
//! Templates are written against transformers' Jinja environment, so we reproduce it on
//! minijinja: `trim_blocks` and `lstrip_blocks`, loop controls, Python's str/dict methods
//! (`.strip()`, `.items()`, ... from minijinja-contrib's pycompat), and its globals and filters:
//! `raise_exception` (our `EngineError::Template` carrying the template's own message),
//! `tojson` as Python's `json.dumps`, `strftime_now`, and `bos_token`/`eos_token` variables.
//! `{% generation %}` blocks (transformers' assistant-mask extension) render their body.

use std::borrow::Cow;
use std::collections::BTreeMap;

use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Kwargs, Serde};
use minijinja::{AutoEscape, Environment, Error, ErrorKind, Value};
use serde::{Deserialize, Serialize};

use super::pyjson::PyJson;
use super::strftime::strftime_now;
use super::tokenizer::Tokenizer;
use crate::error::{EngineError, Result};
use crate::media::MediaItem;

const NAME: &str = "chat_template";

/// The most work one render of a chat template may do, in minijinja's fuel: about one unit per
/// instruction run and per 64 bytes of data made or worked on, so it bounds both the time (some
/// ten million units a second) and the memory (about 64 bytes a unit) a template takes. A model's
/// template is a stranger's program: one that loops for ever must fail, not hang the chat. The
/// hungriest real template (Gemma 4's) takes about 250 000 units for a 200-message chat of 400 KB
/// with tools (`real_templates_render_well_within_the_limits`), and grows with the text: this is
/// room for some 3 MB of conversation, and a runaway template stops within a second or so.
pub const TEMPLATE_FUEL: u64 = confab_limits::TEMPLATE_STEPS.value;

/// The deepest nesting of blocks, loops and macro calls a render may reach (minijinja counts a
/// macro call as several levels). minijinja's own default and the most it allows without growing
/// the stack; the real templates nest a few dozen deep.
pub const TEMPLATE_RECURSION_LIMIT: usize = confab_limits::TEMPLATE_DEPTH.as_usize();

/// The stack a render runs on (a thread of its own). minijinja walks nested values recursively,
/// dropping them too: a template can nest a list in a list at about one unit of fuel a level, and
/// at [`TEMPLATE_FUEL`] the nesting takes some 100 MB of stack to drop in a release build (it
/// overflowed the 2 MB of a worker thread, and the 8 MB of a main thread, aborting the app). Only
/// the pages used are taken.
pub const TEMPLATE_STACK_BYTES: usize = 1 << 30;

/// The most bytes a rendered prompt may have: far more than any model's context window holds
/// (64 MiB is some 16 million tokens), so only a runaway template reaches it.
pub const TEMPLATE_OUTPUT_LIMIT: usize = confab_limits::TEMPLATE_OUTPUT_BYTES.as_usize();

/// One turn of a conversation, as templates see it: `message.role`, `message.content`, and
/// the fields transformers passes for tools and reasoning when they are set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
    /// Images and audio clips sent with this message, in order. A message with media reaches
    /// the template as a content list (the media, then the text), as transformers renders it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<MediaItem>,
    /// An assistant message's calls of tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// A `tool` message: the call whose result it carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// A `tool` message: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// An assistant message's reasoning, which templates may render or drop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
}

/// A call of a tool, as chat templates read it: `{"id", "type": "function", "function":
/// {"name", "arguments"}}` with the arguments as an object (transformers' convention).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "ToolCallShape", from = "ToolCallShape")]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// A JSON object.
    pub arguments: serde_json::Value,
}

#[derive(Serialize, Deserialize)]
struct ToolCallShape {
    #[serde(default)]
    id: String,
    #[serde(rename = "type", default = "function_type")]
    kind: String,
    function: FunctionShape,
}

#[derive(Serialize, Deserialize)]
struct FunctionShape {
    name: String,
    #[serde(default)]
    arguments: serde_json::Value,
}

fn function_type() -> String {
    "function".into()
}

impl From<ToolCall> for ToolCallShape {
    fn from(call: ToolCall) -> Self {
        Self { id: call.id, kind: function_type(), function: FunctionShape { name: call.name, arguments: call.arguments } }
    }
}

impl From<ToolCallShape> for ToolCall {
    fn from(shape: ToolCallShape) -> Self {
        Self { id: shape.id, name: shape.function.name, arguments: shape.function.arguments }
    }
}

/// What a conversation's prompt is rendered with besides its messages.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatOptions {
    /// Tool (function) definitions in OpenAI's shape, `{"type": "function", "function": {"name",
    /// "description", "parameters"}}`, passed to the template as `tools`. A template that does
    /// not read `tools` gets them in a system message instead (`tools::fallback_prompt`).
    pub tools: Vec<serde_json::Value>,
    /// The template's own switches, passed as variables: `enable_thinking`, `reasoning_effort`.
    pub switches: BTreeMap<String, serde_json::Value>,
    /// The start of the reply, written for the model (the opening of a call it must make): the
    /// prompt ends with it, after closing a reasoning block the template opened.
    pub reply_prefix: Option<String>,
}

impl ChatMessage {
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            content: content.into(),
            media: vec![],
            tool_calls: vec![],
            tool_call_id: None,
            name: None,
            reasoning_content: None,
        }
    }

    /// The same message with these media items attached.
    pub fn with_media(mut self, media: impl IntoIterator<Item = MediaItem>) -> Self {
        self.media.extend(media);
        self
    }

    pub fn system(content: impl Into<String>) -> Self {
        Self::new("system", content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::new("user", content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new("assistant", content)
    }
}

/// Where a conversation's prompt ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptEnd {
    /// After the generation prompt: the model starts a new reply.
    NewReply,
    /// Right after the final message's text, with no end of turn: the model writes more of that
    /// message (`ChatTemplate::render_continuation`).
    InFinalMessage,
}

pub struct ChatTemplate {
    env: Environment<'static>,
    source: String,
    /// The source mentions `tools` (see `takes_tools`).
    takes_tools: bool,
    /// `bos_token`, `eos_token`, ...: the variables transformers passes from the tokenizer.
    tokens: BTreeMap<&'static str, String>,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate").field("tokens", &self.tokens).finish_non_exhaustive()
    }
}

impl ChatTemplate {
    /// Compiles `source`; a template that does not parse is an error now, not at the first chat.
    pub fn new(source: &str) -> Result<Self> {
        let mut env = Environment::new();
        let syntax = SyntaxConfig::builder().trim_blocks(true).lstrip_blocks(true).build();
        env.set_syntax(syntax.map_err(|e| EngineError::Template(e.to_string()))?);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.set_fuel(Some(TEMPLATE_FUEL));
        env.set_recursion_limit(TEMPLATE_RECURSION_LIMIT);
        minijinja_contrib::add_to_environment(&mut env);
        // `pprint` builds its whole text before its fuel is charged (a nested value's grows with
        // the square of its depth: gigabytes); transformers' templates do not use it.
        env.remove_filter("pprint");
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", |format: String| strftime_now(&format));
        env.add_filter("tojson", tojson);
        env.add_template_owned(NAME, neutralize_generation_tags(source).into_owned())
            .map_err(|e| EngineError::Template(format!("the template does not parse: {e}")))?;
        Ok(Self { env, source: source.to_string(), takes_tools: source.contains("tools"), tokens: BTreeMap::new() })
    }

    /// The tokenizer's own template, with its special tokens as variables; `None` when the
    /// vocabulary came without a template.
    pub fn for_tokenizer(tokenizer: &Tokenizer) -> Result<Option<Self>> {
        let Some(source) = tokenizer.chat_template() else {
            return Ok(None);
        };
        let name = |id: Option<u32>| id.and_then(|id| tokenizer.id_to_token(id));
        let template = Self::new(source)?
            .with_token("bos_token", name(tokenizer.bos_id()))
            .with_token("eos_token", name(tokenizer.eos_id()))
            .with_token("unk_token", name(tokenizer.unk_id()))
            .with_token("pad_token", name(tokenizer.pad_id()));
        Ok(Some(template))
    }

    /// Sets a token variable (`bos_token`, `eos_token`, `unk_token`, `pad_token`); `None` leaves
    /// it undefined, as transformers does for a tokenizer without that token.
    pub fn with_token(mut self, variable: &'static str, token: Option<String>) -> Self {
        match token {
            Some(token) => self.tokens.insert(variable, token),
            None => self.tokens.remove(variable),
        };
        self
    }

    /// The prompt text for `messages`. With `add_generation_prompt`, it ends where the
    /// assistant's reply begins. `tools` is the list of tool (function) schemas, passed to the
    /// template as `tools`; `None` passes `none`, as transformers does.
    pub fn render(&self, messages: &[ChatMessage], add_generation_prompt: bool, tools: Option<serde_json::Value>) -> Result<String> {
        let tools = match tools {
            Some(serde_json::Value::Array(list)) => list,
            Some(one) => vec![one],
            None => vec![],
        };
        self.render_any(messages, add_generation_prompt, &ChatOptions { tools, ..ChatOptions::default() })
    }

    /// Whether the template renders `tools` itself; when it does not, tools and calls are
    /// written into the messages in the fallback format (`tools.rs`).
    pub fn takes_tools(&self) -> bool {
        self.takes_tools
    }

    /// The template's source, as the model ships it.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The prompt that goes on with the final message (a reply cut short): the conversation
    /// rendered whole, then cut right after that message's text, so that no end of turn follows
    /// it and the model writes more of the same message (transformers' `continue_final_message`).
    pub fn render_continuation(&self, messages: &[ChatMessage]) -> Result<String> {
        let final_text = messages.last().map_or("", |m| m.content.as_str());
        self.render_continuation_any(messages, final_text, &ChatOptions::default())
    }

    /// `render_continuation` for messages in any serialisable shape (content lists with media
    /// parts); `final_text` is the final message's text.
    fn render_continuation_any<M: Serialize>(&self, messages: &[M], final_text: &str, options: &ChatOptions) -> Result<String> {
        let text = final_text.trim();
        if text.is_empty() {
            return Err(EngineError::invalid("messages", "the last message has no text to continue"));
        }
        let rendered = self.render_any(messages, false, options)?;
        let end = rendered.rfind(text).ok_or_else(|| {
            EngineError::Template("the template rewrites the reply's text, so it cannot be continued; regenerate it instead".into())
        })?;
        Ok(rendered[..end + text.len()].to_string())
    }

    /// The prompt text for `messages` (in any serialisable shape), ending as `end` says;
    /// `final_text` is the final message's text, where a continuation ends.
    pub fn render_prompt<M: Serialize>(&self, messages: &[M], final_text: &str, end: PromptEnd, options: &ChatOptions) -> Result<String> {
        match end {
            PromptEnd::NewReply => {
                let mut prompt = self.render_any(messages, true, options)?;
                if let Some(prefix) = &options.reply_prefix {
                    let format = super::ReplyFormat::detect(Some(&self.source));
                    if let Some(markers) = format.reasoning.filter(|_| format.starts_in_reasoning(&prompt)) {
                        prompt.push_str(markers.close);
                        prompt.push_str("\n\n");
                    }
                    prompt.push_str(prefix);
                }
                Ok(prompt)
            }
            PromptEnd::InFinalMessage => self.render_continuation_any(messages, final_text, options),
        }
    }

    /// `render` for messages in any serialisable shape (content lists with media parts). A
    /// system message after the conversation began is rendered in place where the template
    /// takes it; where the template raises an error on it, it is joined to the leading system
    /// prompt (after what that already holds, in order; several leading ones are joined too) and
    /// the conversation rendered again.
    pub fn render_any<M: Serialize>(&self, messages: &[M], add_generation_prompt: bool, options: &ChatOptions) -> Result<String> {
        match self.render_messages(messages, add_generation_prompt, options) {
            Err(EngineError::Template(first)) => {
                let as_values =
                    serde_json::to_value(messages).map_err(|e| EngineError::Template(format!("the messages cannot be rendered: {e}")))?;
                match system_prompt_joined(as_values) {
                    Some(joined) => self.render_messages(&joined, add_generation_prompt, options),
                    None => Err(EngineError::Template(first)),
                }
            }
            other => other,
        }
    }

    fn render_messages<M: Serialize>(&self, messages: &[M], add_generation_prompt: bool, options: &ChatOptions) -> Result<String> {
        self.render_messages_measured(messages, add_generation_prompt, options).map(|(text, _)| text)
    }

    /// `render_messages`, and the fuel the render took (for the limits' test).
    pub(super) fn render_messages_measured<M: Serialize>(
        &self,
        messages: &[M],
        add_generation_prompt: bool,
        options: &ChatOptions,
    ) -> Result<(String, u64)> {
        let mut context: BTreeMap<&str, Value> = BTreeMap::new();
        for (name, value) in &options.switches {
            context.insert(name, Value::from(Serde(value)));
        }
        let uses_tools = |m: &serde_json::Value| m.get("tool_calls").is_some() || m.get("role").and_then(|r| r.as_str()) == Some("tool");
        let as_values =
            || serde_json::to_value(messages).map_err(|e| EngineError::Template(format!("the messages cannot be rendered: {e}")));
        let fallback =
            !self.takes_tools && (!options.tools.is_empty() || as_values()?.as_array().is_some_and(|l| l.iter().any(uses_tools)));
        if fallback {
            let list = match as_values()? {
                serde_json::Value::Array(list) => list,
                _ => vec![],
            };
            context.insert("messages", Value::from(Serde(super::tools::fallback_messages(list, &options.tools))));
            context.insert("tools", Value::from(()));
        } else {
            context.insert("messages", Value::from(Serde(messages)));
            let tools = if options.tools.is_empty() { Value::from(()) } else { Value::from(Serde(&options.tools)) };
            context.insert("tools", tools);
        }
        context.insert("add_generation_prompt", Value::from(add_generation_prompt));
        context.insert("documents", Value::from(()));
        for (name, token) in &self.tokens {
            context.insert(name, Value::from(token.as_str()));
        }
        let template = self.env.get_template(NAME).map_err(|e| EngineError::Template(e.to_string()))?;
        let render = move || {
            let mut output = CappedOutput::default();
            let fuel = match template.render_captured_to(context, &mut output) {
                Ok(captured) => captured.state().fuel_levels().map_or(0, |(consumed, _)| consumed),
                Err(_) if output.full => {
                    return Err(EngineError::Template(format!(
                        "the model's chat template wrote past its limit of {TEMPLATE_OUTPUT_LIMIT} bytes ({}; a template that never ends?)",
                        confab_limits::TEMPLATE_OUTPUT_BYTES.name
                    )))
                }
                Err(error) => return Err(render_error(error)),
            };
            let text = String::from_utf8(output.bytes).map_err(|e| EngineError::Template(format!("rendering failed: {e}")))?;
            Ok((text, fuel))
        };
        std::thread::scope(|scope| {
            let thread = std::thread::Builder::new().name("chat template".into()).stack_size(TEMPLATE_STACK_BYTES);
            let rendering =
                thread.spawn_scoped(scope, render).map_err(|e| EngineError::Template(format!("could not start rendering: {e}")))?;
            rendering.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }
}

/// The rendered prompt, refusing to grow past [`TEMPLATE_OUTPUT_LIMIT`] (and saying so: `full`).
#[derive(Default)]
struct CappedOutput {
    bytes: Vec<u8>,
    full: bool,
}

impl std::io::Write for CappedOutput {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + bytes.len() > TEMPLATE_OUTPUT_LIMIT {
            self.full = true;
            return Err(std::io::Error::other("the rendered prompt is too long"));
        }
        self.bytes.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The messages with every system message joined into one system prompt, first (their texts in
/// order, blank lines between: templates that take one system message raise on a second even
/// where it follows the first); `None` when there is nothing to move.
fn system_prompt_joined(messages: serde_json::Value) -> Option<Vec<serde_json::Value>> {
    let serde_json::Value::Array(list) = messages else { return None };
    let is_system = |m: &serde_json::Value| m.get("role").and_then(|r| r.as_str()) == Some("system");
    // Nothing to move: at most one system message, and first.
    if list.iter().skip(1).all(|m| !is_system(m)) {
        return None;
    }
    let text = |m: &serde_json::Value| match m.get("content") {
        Some(serde_json::Value::String(text)) => text.clone(),
        Some(serde_json::Value::Array(parts)) => {
            parts.iter().filter_map(|p| p.get("text").and_then(|t| t.as_str())).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    };
    let joined: Vec<String> = list.iter().filter(|m| is_system(m)).map(text).filter(|t| !t.is_empty()).collect();
    let mut system = list.iter().find(|m| is_system(m)).cloned().unwrap_or_default();
    system["content"] = serde_json::Value::from(joined.join("\n\n"));
    let mut out = vec![system];
    out.extend(list.into_iter().filter(|m| !is_system(m)));
    Some(out)
}

/// The error a template raised on purpose, kept apart so its message reaches the person as is.
#[derive(Debug)]
struct Raised(String);

impl std::fmt::Display for Raised {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Raised {}

fn raise_exception(message: String) -> std::result::Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message.clone()).with_source(Raised(message)))
}

fn render_error(error: Error) -> EngineError {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&error);
    while let Some(e) = cause {
        if let Some(raised) = e.downcast_ref::<Raised>() {
            return EngineError::Template(raised.0.clone());
        }
        cause = e.source();
    }
    if error.kind() == ErrorKind::OutOfFuel {
        return EngineError::Template(format!(
            "the model's chat template ran past its limit of {TEMPLATE_FUEL} steps ({}; a template that never ends?)",
            confab_limits::TEMPLATE_STEPS.name
        ));
    }
    if error.kind() == ErrorKind::InvalidOperation && error.detail() == Some("recursion limit exceeded") {
        return EngineError::Template(format!(
            "the model's chat template nested deeper than its limit of {TEMPLATE_RECURSION_LIMIT} levels ({}; a macro that calls itself for ever?)", confab_limits::TEMPLATE_DEPTH.name
        ));
    }
    EngineError::Template(format!("rendering failed: {error}"))
}

/// `tojson` as transformers defines it: `json.dumps(x, ensure_ascii=False, indent=None,
/// separators=None, sort_keys=False)`.
fn tojson(value: Value, kwargs: Kwargs) -> std::result::Result<String, Error> {
    let indent = match kwargs.get::<Option<Value>>("indent")? {
        None => None,
        Some(v) if v.is_none() => None,
        Some(v) => match v.as_i64() {
            Some(n) => Some(" ".repeat(n.max(0) as usize)),
            None => Some(v.as_str().map(str::to_owned).ok_or_else(|| bad_arg("indent must be a number or a string"))?),
        },
    };
    let mut json = PyJson::new(indent);
    if let Some(ascii) = kwargs.get::<Option<bool>>("ensure_ascii")? {
        json.ensure_ascii = ascii;
    }
    if let Some(sort) = kwargs.get::<Option<bool>>("sort_keys")? {
        json.sort_keys = sort;
    }
    if let Some(separators) = kwargs.get::<Option<Value>>("separators")?.filter(|v| !v.is_none()) {
        let pair: Vec<String> = separators
            .try_iter()?
            .map(|s| s.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .filter(|p: &Vec<String>| p.len() == 2)
            .ok_or_else(|| bad_arg("separators must be two strings"))?;
        json.item_separator.clone_from(&pair[0]);
        json.key_separator.clone_from(&pair[1]);
    }
    kwargs.assert_all_used()?;
    let data = serde_json::to_value(&value).map_err(|e| bad_arg(&format!("cannot be written as JSON: {e}")))?;
    Ok(json.dumps(&data))
}

fn bad_arg(what: &str) -> Error {
    Error::new(ErrorKind::InvalidOperation, format!("tojson: {what}"))
}

/// `{% generation %}` ... `{% endgeneration %}` is transformers' own tag, which minijinja does
/// not know. It only marks the assistant's text, so it becomes `{% if true %}` ... `{% endif %}`,
/// keeping the tag's whitespace control.
fn neutralize_generation_tags(source: &str) -> Cow<'_, str> {
    if !source.contains("generation") {
        return Cow::Borrowed(source);
    }
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(open) = rest.find("{%") {
        let (before, tag) = rest.split_at(open + 2);
        out.push_str(before);
        let control = usize::from(tag.starts_with(['-', '+']));
        let (marker, body) = tag.split_at(control);
        let word_at = body.len() - body.trim_start().len();
        let (space, word_and_rest) = body.split_at(word_at);
        let ends_word = |w: &str| word_and_rest.strip_prefix(w).filter(|r| r.starts_with(|c: char| c.is_whitespace() || "-+%".contains(c)));
        let (replacement, after) = if let Some(after) = ends_word("endgeneration") {
            ("endif", after)
        } else if let Some(after) = ends_word("generation") {
            ("if true", after)
        } else {
            ("", word_and_rest)
        };
        out.push_str(marker);
        out.push_str(space);
        out.push_str(replacement);
        rest = after;
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chat() -> Vec<ChatMessage> {
        vec![ChatMessage::system("Be brief."), ChatMessage::user("Hi"), ChatMessage::assistant("Hello!")]
    }

    const CHATML: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}\
                          {% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

    #[test]
    fn a_continuation_leaves_the_final_message_open() {
        let template = ChatTemplate::new(CHATML).unwrap();
        let mut messages = chat();
        messages[2].content = "Hello! Once upon a time ".into();
        let prompt = template.render_continuation(&messages).unwrap();
        assert_eq!(
            prompt,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello! Once upon a time"
        );
        // The same text as the whole conversation, up to where the reply's end of turn began.
        assert!(template.render(&messages, false, None).unwrap().starts_with(&prompt));
        messages[2].content = " ".into();
        assert!(template.render_continuation(&messages).is_err(), "nothing to continue");
        let rewrites = ChatTemplate::new("{% for m in messages %}{{ m.content | upper }}{% endfor %}").unwrap();
        let refused = rewrites.render_continuation(&chat()).unwrap_err().to_string();
        assert!(refused.contains("regenerate it instead"), "{refused}");
    }

    #[test]
    fn a_later_system_message_is_rendered_in_place_where_the_template_takes_it() {
        let template = ChatTemplate::new(CHATML).unwrap();
        let messages = vec![ChatMessage::system("Be brief."), ChatMessage::user("Hi"), ChatMessage::system("Now in Paris.")];
        let out = template.render(&messages, false, None).unwrap();
        assert!(out.ends_with("<|im_start|>user\nHi<|im_end|>\n<|im_start|>system\nNow in Paris.<|im_end|>\n"), "{out}");
    }

    #[test]
    fn a_later_system_message_joins_the_system_prompt_where_the_template_raises() {
        let source = "{% for m in messages %}{% if m.role == 'system' and not loop.first %}\
            {{ raise_exception('System message must be at the beginning.') }}{% endif %}\
            [{{ m.role }}] {{ m.content }}\n{% endfor %}";
        let template = ChatTemplate::new(source).unwrap();
        let messages = vec![
            ChatMessage::system("Be brief."),
            ChatMessage::user("Hi"),
            ChatMessage::system("Now in Paris."),
            ChatMessage::assistant("Hello"),
            ChatMessage::system("Then Rome."),
        ];
        let out = template.render(&messages, false, None).unwrap();
        assert_eq!(out, "[system] Be brief.\n\nNow in Paris.\n\nThen Rome.\n[user] Hi\n[assistant] Hello\n");
        // Without a leading system prompt, the later ones make one.
        let out = template.render(&messages[1..], false, None).unwrap();
        assert_eq!(out, "[system] Now in Paris.\n\nThen Rome.\n[user] Hi\n[assistant] Hello\n");
        // Two leading system messages, where the template takes one, are joined too.
        let two = vec![ChatMessage::system("Be brief."), ChatMessage::system("Be kind."), ChatMessage::user("Hi")];
        assert_eq!(template.render(&two, false, None).unwrap(), "[system] Be brief.\n\nBe kind.\n[user] Hi\n");
        // An error that moving them does not cure is the template's own.
        let error = template.render(&messages[..2], false, None);
        assert!(error.is_ok());
        let raises = ChatTemplate::new("{{ raise_exception('No.') }}").unwrap();
        assert!(matches!(raises.render(&messages, false, None), Err(EngineError::Template(m)) if m == "No."));
    }

    #[test]
    fn trims_blocks_like_transformers() {
        let source = "{% for m in messages %}\n  {% if m.role == 'user' %}\n[{{ m.content }}]\n  {% endif %}\n{% endfor %}\n";
        let out = ChatTemplate::new(source).unwrap().render(&chat(), false, None).unwrap();
        assert_eq!(out, "[Hi]\n");
    }

    #[test]
    fn python_methods_and_loop_controls_work() {
        let source = "{% for m in messages %}{% if m.role == 'system' %}{% continue %}{% endif %}\
                      {{ m.role.upper() }}:{{ ('  ' + m.content + '  ').strip() }};\
                      {% if m.content.startswith('Hi') %}{% break %}{% endif %}{% endfor %}\
                      {% for k, v in {'a': 1}.items() %}{{ k }}={{ v }}{% endfor %}";
        let out = ChatTemplate::new(source).unwrap().render(&chat(), false, None).unwrap();
        assert_eq!(out, "USER:Hi;a=1");
    }

    #[test]
    fn raise_exception_carries_the_templates_message() {
        let source = "{% if messages[0].role != 'user' %}{{ raise_exception('Conversations must start with a user message') }}{% endif %}";
        let err = ChatTemplate::new(source).unwrap().render(&chat(), true, None).unwrap_err();
        assert!(matches!(err, EngineError::Template(ref m) if m == "Conversations must start with a user message"), "{err:?}");
        assert!(err.to_string().contains("Edit the template or pick another model"), "{err}");
    }

    #[test]
    fn other_render_errors_say_what_failed() {
        let err = ChatTemplate::new("{{ messages[0].content.nope() }}").unwrap().render(&chat(), true, None).unwrap_err();
        assert!(err.to_string().starts_with("chat template: rendering failed"), "{err}");
        let err = ChatTemplate::new("{% if %}").unwrap_err();
        assert!(err.to_string().contains("does not parse"), "{err}");
    }

    #[test]
    fn tools_and_tojson_render_as_python_json() {
        let source = "{% if tools is not none %}{% for t in tools %}{{ t | tojson }}\n{% endfor %}{% endif %}\
                      {{ messages[-1].content }}{% if add_generation_prompt %}<assistant>{% endif %}";
        let template = ChatTemplate::new(source).unwrap();
        let tools = json!([{"type": "function", "function": {"name": "get_time", "parameters": {"zone": "<UTC>"}}}]);
        let out = template.render(&chat(), true, Some(tools)).unwrap();
        assert_eq!(
            out,
            "{\"type\": \"function\", \"function\": {\"name\": \"get_time\", \"parameters\": {\"zone\": \"<UTC>\"}}}\nHello!<assistant>"
        );
        assert_eq!(template.render(&chat(), false, None).unwrap(), "Hello!");
    }

    #[test]
    fn templates_without_tools_get_them_in_the_system_message() {
        let template = ChatTemplate::new(CHATML).unwrap();
        assert!(!template.takes_tools());
        let options = ChatOptions { tools: vec![json!({"type": "function", "function": {"name": "f"}})], ..ChatOptions::default() };
        let out = template.render_any(&chat(), true, &options).unwrap();
        assert!(out.starts_with("<|im_start|>system\nBe brief.\n\n# Tools"), "{out}");
        assert!(out.contains("{\"type\": \"function\", \"function\": {\"name\": \"f\"}}"), "{out}");
        assert!(ChatTemplate::new("{% if tools %}{% endif %}").unwrap().takes_tools());
    }

    #[test]
    fn switches_are_template_variables() {
        let template = ChatTemplate::new("{% if enable_thinking is defined and not enable_thinking %}off{% else %}on{% endif %}").unwrap();
        let mut options = ChatOptions::default();
        assert_eq!(template.render_any(&chat(), true, &options).unwrap(), "on");
        options.switches.insert("enable_thinking".into(), json!(false));
        assert_eq!(template.render_any(&chat(), true, &options).unwrap(), "off");
    }

    #[test]
    fn a_reply_prefix_follows_a_closed_reasoning_block() {
        let source = "{% for m in messages %}{{ m.content }}{% endfor %}{% if add_generation_prompt %}<think>\n{% endif %}";
        let template = ChatTemplate::new(source).unwrap();
        let options = ChatOptions { reply_prefix: Some("<tool_call>".into()), ..ChatOptions::default() };
        let prompt = template.render_prompt(&chat(), "", PromptEnd::NewReply, &options).unwrap();
        assert_eq!(prompt, "Be brief.HiHello!<think>\n</think>\n\n<tool_call>");
        let plain = ChatTemplate::new(CHATML).unwrap().render_prompt(&chat(), "", PromptEnd::NewReply, &options).unwrap();
        assert!(plain.ends_with("<|im_start|>assistant\n<tool_call>"), "{plain}");
    }

    #[test]
    fn tool_calls_reach_templates_in_transformers_shape() {
        let mut call = ChatMessage::assistant("");
        call.tool_calls.push(ToolCall { id: "c1".into(), name: "f".into(), arguments: json!({"x": 1}) });
        let mut result = ChatMessage::new("tool", "42");
        result.tool_call_id = Some("c1".into());
        let source = "{% if tools %}{% endif %}{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.id }}:{{ c.type }}:{{ c.function.name }}({{ c.function.arguments | tojson }}){% endfor %}\
                      {% if m.tool_call_id %}[{{ m.tool_call_id }}={{ m.content }}]{% endif %}{% endfor %}";
        let out = ChatTemplate::new(source).unwrap().render_any(&[call.clone(), result], false, &ChatOptions::default()).unwrap();
        assert_eq!(out, "c1:function:f({\"x\": 1})[c1=42]");
        let back: ChatMessage = serde_json::from_value(serde_json::to_value(&call).unwrap()).unwrap();
        assert_eq!(back, call);
    }

    #[test]
    fn tojson_takes_pythons_keyword_arguments() {
        let source = "{{ {'b': [1, 2], 'a': 'é'} | tojson(indent=2, sort_keys=true) }}|{{ [1, 2] | tojson(separators=(',', ':')) }}";
        let out = ChatTemplate::new(source).unwrap().render(&[], false, None).unwrap();
        assert_eq!(out, "{\n  \"a\": \"é\",\n  \"b\": [\n    1,\n    2\n  ]\n}|[1,2]");
        let err = ChatTemplate::new("{{ 1 | tojson(colour=1) }}").unwrap().render(&[], false, None);
        assert!(err.is_err());
    }

    #[test]
    fn special_tokens_and_strftime_are_available() {
        let source = "{{ bos_token }}{{ strftime_now('%Y') | length }}{% if eos_token is defined %}E{% endif %}";
        let template = ChatTemplate::new(source).unwrap().with_token("bos_token", Some("<s>".into()));
        assert_eq!(template.render(&[], false, None).unwrap(), "<s>4");
    }

    /// A template that loops for ever, recurses for ever or writes gigabytes fails within a
    /// second or two, saying which limit it hit.
    #[test]
    fn a_runaway_template_fails_fast_naming_its_limit() {
        let cases = [
            // Ten billion steps (range itself stops at 100 000 items).
            ("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}", format!("limit of {TEMPLATE_FUEL} steps")),
            // A macro that calls itself for ever.
            ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", format!("limit of {TEMPLATE_RECURSION_LIMIT} levels")),
            ("{% for m in messages recursive %}{{ loop([m]) }}{% endfor %}", format!("limit of {TEMPLATE_RECURSION_LIMIT} levels")),
            // A hundred gigabytes of output, a megabyte at a time.
            (
                "{% set s = 'x' * 1000000 %}{% for a in range(100000) %}{{ s }}{% endfor %}",
                format!("limit of {TEMPLATE_OUTPUT_LIMIT} bytes"),
            ),
            // ... or eight bytes at a time: the steps run out first.
            (
                "{% for a in range(100000) %}{% for b in range(100000) %}xxxxxxxx{% endfor %}{% endfor %}",
                format!("limit of {TEMPLATE_FUEL} steps"),
            ),
            // Lists nested two million deep, which minijinja drops recursively.
            (
                "{% set ns = namespace(x=[]) %}{% for a in range(100000) %}{% set ns.x = [[[[[[[[[[[[[[[[[[[[ns.x]]]]]]]]]]]]]]]]]]]] %}{% endfor %}",
                format!("limit of {TEMPLATE_FUEL} steps"),
            ),
            // A string doubled until it takes gigabytes, never written.
            (
                "{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
                format!("limit of {TEMPLATE_FUEL} steps"),
            ),
        ];
        for (source, limit) in cases {
            let began = std::time::Instant::now();
            let error = ChatTemplate::new(source).unwrap().render(&chat(), true, None).unwrap_err().to_string();
            assert!(error.contains(&limit), "{source}: {error}");
            assert!(began.elapsed() < std::time::Duration::from_secs(5), "{source} took {:?}", began.elapsed());
        }
        // range's own cap comes first for a gigabyte in one loop.
        let error = ChatTemplate::new("{% for i in range(10**9) %}xxxxxxxx{% endfor %}").unwrap().render(&chat(), true, None).unwrap_err();
        assert!(error.to_string().contains("too many elements"), "{error}");
    }

    #[test]
    fn generation_blocks_render_their_body() {
        let source = "{% for m in messages %}{% if m.role == 'assistant' %}{%- generation -%} {{ m.content }} {%- endgeneration %}{% endif %}{% endfor %}";
        let out = ChatTemplate::new(source).unwrap().render(&chat(), false, None).unwrap();
        assert_eq!(out, "Hello!");
        assert_eq!(neutralize_generation_tags("{%generation%}x{%+ endgeneration +%}"), "{%if true%}x{%+ endif +%}");
        assert_eq!(neutralize_generation_tags("{% generations %}"), "{% generations %}");
    }
}
