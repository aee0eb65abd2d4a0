//! A reply's parts while it streams: the model's reasoning, its answer, and its calls of tools,
//! each read in the markup the model was trained on. The markup is found in the model's chat
//! template (`ReplyFormat::detect`): `<think>` (Qwen3, Qwen3.5, SmolLM3), Gemma 4's thought
//! channel, Mistral's `[THINK]`; Qwen3's `<tool_call>` JSON (also the fallback for templates
//! without tools), Qwen3.5's XML parameters, Llama 3's bare JSON, Mistral's `[TOOL_CALLS]`
//! and Gemma 4's `<|tool_call>call:name{...}`; gpt-oss's harmony messages, whose channel says
//! what they are (`analysis`: reasoning, `final`: the answer, `commentary` addressed
//! `to=functions.NAME`: a call). The app and the server read replies through the same parser.

use serde_json::{Map, Value};

/// How a model writes its calls of tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolSyntax {
    /// `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Qwen2.5, Qwen3, Hermes; and
    /// what the fallback prompt teaches models whose template has no tools).
    Hermes,
    /// `<tool_call><function=name><parameter=p>value</parameter></function></tool_call>`
    /// (Qwen3.5, Qwen3-Coder).
    QwenXml,
    /// A bare `{"name": ..., "parameters": {...}}` as the whole reply, or after `<|python_tag|>`.
    Llama3Json,
    /// `[TOOL_CALLS]name[ARGS]{...}`, or `[TOOL_CALLS][{"name": ..., "arguments": {...}}]`.
    Mistral,
    /// `<|tool_call>call:name{key:<|"|>text<|"|>,n:1}<tool_call|>`.
    Gemma4,
    /// Harmony (gpt-oss): messages `<|start|>assistant<|channel|>NAME<|message|>…<|end|>`,
    /// a call being a `commentary` message addressed `to=functions.NAME` whose body is the
    /// arguments as JSON, ended by `<|call|>`.
    Harmony,
}

/// The texts that open and close a block of the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Markers {
    pub open: &'static str,
    pub close: &'static str,
}

const THINK: Markers = Markers { open: "<think>", close: "</think>" };
const GEMMA4_THOUGHT: Markers = Markers { open: "<|channel>thought", close: "<channel|>" };
const MISTRAL_THINK: Markers = Markers { open: "[THINK]", close: "[/THINK]" };
/// Harmony's reasoning is its `analysis` channel (the parser reads any channel; these name it
/// for code that asks where reasoning opens and closes).
const HARMONY_ANALYSIS: Markers = Markers { open: "<|channel|>analysis<|message|>", close: "<|end|>" };
/// Harmony's markup, each a special token of gpt-oss's vocabulary.
const HARMONY_START: &str = "<|start|>";
const HARMONY_CHANNEL: &str = "<|channel|>";
const HARMONY_MESSAGE: &str = "<|message|>";
const HARMONY_CONSTRAIN: &str = "<|constrain|>";
/// What ends a message: `<|end|>`, a call's `<|call|>`, the reply's `<|return|>` (or the next
/// message's start, where a model leaves the end out).
const HARMONY_ENDS: [&str; 4] = ["<|end|>", "<|call|>", "<|return|>", HARMONY_START];
pub(super) const GEMMA4_STRING: &str = "<|\"|>";

/// How one model marks reasoning and tool calls in its replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyFormat {
    /// `None`: the model does not reason in a block of its own.
    pub reasoning: Option<Markers>,
    pub tools: ToolSyntax,
}

impl ReplyFormat {
    /// The format a chat template implies (the markup it writes for earlier turns is the markup
    /// the model was trained to write).
    pub fn detect(template: Option<&str>) -> Self {
        let source = template.unwrap_or_default();
        if source.contains(HARMONY_CHANNEL) && source.contains(HARMONY_MESSAGE) {
            return Self { reasoning: Some(HARMONY_ANALYSIS), tools: ToolSyntax::Harmony };
        }
        let reasoning = if source.contains("<|channel>") {
            Some(GEMMA4_THOUGHT)
        } else if source.contains("[THINK]") {
            Some(MISTRAL_THINK)
        } else if source.contains("<think>") || source.contains("</think>") {
            Some(THINK)
        } else {
            None
        };
        let tools = if source.contains("<|tool_call>") {
            ToolSyntax::Gemma4
        } else if source.contains("<function=") {
            ToolSyntax::QwenXml
        } else if source.contains("[TOOL_CALLS]") {
            ToolSyntax::Mistral
        } else if source.contains("<tool_call>") {
            ToolSyntax::Hermes
        } else if source.contains("<|python_tag|>") || (source.contains("<|eot_id|>") && source.contains("tools")) {
            ToolSyntax::Llama3Json
        } else {
            ToolSyntax::Hermes
        };
        Self { reasoning, tools }
    }

    /// Where a call opens, and where it closes (`None`: it runs to the next call or the end).
    fn call_markers(&self) -> (&'static str, Option<&'static str>) {
        match self.tools {
            ToolSyntax::Hermes | ToolSyntax::QwenXml => ("<tool_call>", Some("</tool_call>")),
            ToolSyntax::Gemma4 => ("<|tool_call>", Some("<tool_call|>")),
            ToolSyntax::Mistral => ("[TOOL_CALLS]", None),
            ToolSyntax::Llama3Json => ("<|python_tag|>", None),
            // A call opens with its message's header and ends with the message.
            ToolSyntax::Harmony => ("to=functions.", Some("<|call|>")),
        }
    }

    /// The markup the parser reads. Where the vocabulary makes these special tokens, the
    /// engine keeps them in the streamed text of requests that parse their replies.
    pub fn markup(&self) -> Vec<&'static str> {
        if self.tools == ToolSyntax::Harmony {
            let mut texts = vec![HARMONY_CHANNEL, HARMONY_MESSAGE, HARMONY_CONSTRAIN];
            texts.extend(HARMONY_ENDS);
            return texts;
        }
        let (open, close) = self.call_markers();
        let mut texts = vec![open];
        texts.extend(close);
        if let Some(m) = self.reasoning {
            // Gemma 4's opener is a token followed by the channel's name.
            texts.push(m.open.strip_suffix("thought").unwrap_or(m.open));
            texts.push(m.close);
        }
        match self.tools {
            ToolSyntax::Gemma4 => texts.push(GEMMA4_STRING),
            ToolSyntax::Mistral => texts.extend(["[ARGS]", "[CALL_ID]"]),
            _ => {}
        }
        texts
    }

    /// Whether a prompt leaves the reply inside a reasoning block (a template that opens
    /// `<think>` in its generation prompt).
    pub fn starts_in_reasoning(&self, prompt: &str) -> bool {
        let Some(m) = self.reasoning.filter(|_| self.tools != ToolSyntax::Harmony) else { return false };
        match (prompt.rfind(m.open), prompt.rfind(m.close)) {
            (Some(open), Some(close)) => open > close,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    // `call_grammar`, the grammar of a call in this syntax, is in `call_grammar.rs`.

    /// The text that ends a call, for syntaxes that close their calls.
    pub fn call_close(&self) -> Option<&'static str> {
        self.call_markers().1
    }

    /// The text that begins a call of whichever tool the model picks, for a reply that must
    /// call one.
    pub fn any_call_opening(&self) -> &'static str {
        match self.tools {
            ToolSyntax::Hermes => "<tool_call>\n{\"name\": \"",
            ToolSyntax::QwenXml => "<tool_call>\n<function=",
            ToolSyntax::Llama3Json => "{\"name\": \"",
            ToolSyntax::Mistral => "[TOOL_CALLS]",
            ToolSyntax::Gemma4 => "<|tool_call>call:",
            ToolSyntax::Harmony => "<|channel|>commentary to=functions.",
        }
    }

    /// The text that begins a call of `name`, for a reply that must call it: the engine
    /// writes it, and the model goes on with the arguments.
    pub fn call_opening(&self, name: &str) -> String {
        let quoted = Value::from(name).to_string();
        match self.tools {
            ToolSyntax::Hermes => format!("<tool_call>\n{{\"name\": {quoted}, \"arguments\": "),
            ToolSyntax::QwenXml => format!("<tool_call>\n<function={name}>\n"),
            ToolSyntax::Llama3Json => format!("{{\"name\": {quoted}, \"parameters\": "),
            ToolSyntax::Mistral => format!("[TOOL_CALLS]{name}[ARGS]"),
            ToolSyntax::Gemma4 => format!("<|tool_call>call:{name}{{"),
            ToolSyntax::Harmony => format!("<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"),
        }
    }
}

/// A call of a tool, read from the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedCall {
    pub name: String,
    /// A JSON object.
    pub arguments: Value,
}

/// A piece of a reply, in the order the model wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyPart {
    Reasoning(String),
    Content(String),
    ToolCall(ParsedCall),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Content,
    Reasoning,
    Call,
}

/// Splits a streamed reply into its parts. Text that may be the start of a marker is held
/// back until it is certain; a call is given whole once its body is complete, and a body that
/// does not parse comes back as content, markup and all.
#[derive(Debug)]
pub struct ReplyParser {
    format: ReplyFormat,
    /// The request's tool definitions; `None` when it has none (calls are then plain text).
    tools: Option<Vec<Value>>,
    block: Block,
    /// Text not given out yet.
    pending: String,
    /// Content has been given out (a bare-JSON call can only be the whole reply).
    content_started: bool,
    /// Right after a block: leading white space of what follows is dropped.
    trim_start: bool,
    /// Harmony's reader, which takes the place of the blocks above for harmony replies.
    harmony: Option<Harmony>,
}

impl ReplyParser {
    /// `in_reasoning`: the prompt left the reply inside a reasoning block
    /// (`ReplyFormat::starts_in_reasoning`). `tools`: the request's definitions, or `None`.
    pub fn new(format: ReplyFormat, in_reasoning: bool, tools: Option<Vec<Value>>) -> Self {
        let block = if in_reasoning && format.reasoning.is_some() { Block::Reasoning } else { Block::Content };
        let harmony = (format.tools == ToolSyntax::Harmony).then(|| Harmony { tools: tools.is_some(), message: None });
        Self { format, tools, block, pending: String::new(), content_started: false, trim_start: block == Block::Reasoning, harmony }
    }

    /// The parts `text` completes.
    pub fn push(&mut self, text: &str) -> Vec<ReplyPart> {
        self.pending.push_str(text);
        let mut parts = Vec::new();
        match self.harmony.as_mut() {
            Some(harmony) => harmony.advance(&mut self.pending, &mut parts, false),
            None => self.advance(&mut parts, false),
        }
        parts
    }

    /// Whatever is left: an unfinished block is given as it is.
    pub fn finish(&mut self) -> Vec<ReplyPart> {
        let mut parts = Vec::new();
        if let Some(harmony) = self.harmony.as_mut() {
            harmony.advance(&mut self.pending, &mut parts, true);
            return parts;
        }
        self.advance(&mut parts, true);
        let rest = std::mem::take(&mut self.pending);
        match self.block {
            Block::Content => self.content(&mut parts, &rest),
            Block::Reasoning => self.reasoning(&mut parts, &rest),
            Block::Call => {
                self.call(&mut parts, &rest, false);
            }
        }
        self.block = Block::Content;
        parts
    }

    fn advance(&mut self, parts: &mut Vec<ReplyPart>, at_end: bool) {
        loop {
            match self.block {
                Block::Content => {
                    if self.bare_json_call_begins() {
                        self.block = Block::Call;
                        continue;
                    }
                    if self.bare_json_call_possible() && self.pending.trim().is_empty() && !at_end {
                        return; // white space before what may be a bare call
                    }
                    let mut openers: Vec<(&'static str, Block)> = Vec::new();
                    if let Some(m) = self.format.reasoning {
                        openers.push((m.open, Block::Reasoning));
                    }
                    if self.tools.is_some() {
                        openers.push((self.format.call_markers().0, Block::Call));
                    }
                    let first =
                        openers.iter().filter_map(|&(marker, block)| Some((self.pending.find(marker)?, marker, block))).min_by_key(|f| f.0);
                    if let Some((at, marker, block)) = first {
                        let before = take_through(&mut self.pending, at, marker.len());
                        self.content(parts, &before);
                        self.block = block;
                        self.trim_start = block == Block::Reasoning;
                        continue;
                    }
                    let held = if at_end { 0 } else { partial_suffix(&self.pending, openers.iter().map(|o| o.0)) };
                    let ready: String = self.pending.drain(..self.pending.len() - held).collect();
                    self.content(parts, &ready);
                    return;
                }
                Block::Reasoning => {
                    let close = self.format.reasoning.map_or("", |m| m.close);
                    if let Some(at) = self.pending.find(close) {
                        let inside = take_through(&mut self.pending, at, close.len());
                        self.reasoning(parts, &inside);
                        self.block = Block::Content;
                        self.trim_start = true;
                        continue;
                    }
                    let held = if at_end { 0 } else { partial_suffix(&self.pending, [close]) };
                    let ready: String = self.pending.drain(..self.pending.len() - held).collect();
                    self.reasoning(parts, &ready);
                    return;
                }
                Block::Call => {
                    let (open, close) = self.format.call_markers();
                    // A closed call ends at its marker; an open-ended one at the next call.
                    let end = match close {
                        Some(close) => self.closed_call_end(close, at_end).map(|at| (at, close.len())),
                        None => self.pending.get(1..).and_then(|rest| rest.find(open)).map(|at| (at + 1, 0)),
                    };
                    let Some((at, skip)) = end else { return };
                    let body = take_through(&mut self.pending, at, skip);
                    let parsed = self.call(parts, &body, close.is_some());
                    // Mistral's next call starts with its own marker, which the search left.
                    if let Some(rest) = self.pending.strip_prefix(open).map(str::to_string).filter(|_| close.is_none()) {
                        self.pending = rest;
                        continue;
                    }
                    self.block = Block::Content;
                    self.trim_start = parsed;
                }
            }
        }
    }

    /// Where a call ends that ends at `close`: at the first `close` after which its body reads
    /// as a call (one inside a string of its arguments does not end it), else, at the end of
    /// the reply, at the first.
    fn closed_call_end(&self, close: &str, at_end: bool) -> Option<usize> {
        let tools = self.tools.as_deref().unwrap_or_default();
        let mut ends = self.pending.match_indices(close).map(|(at, _)| at).peekable();
        let first = *ends.peek()?;
        let reads = |body: &str| {
            // Qwen's XML reads leniently (a value that is not JSON is text): only a body its
            // template would have ended counts here.
            parse_calls(self.format.tools, body, tools).is_some()
                && (self.format.tools != ToolSyntax::QwenXml || body.trim_end().ends_with("</function>"))
        };
        ends.find(|&at| reads(&self.pending[..at])).or(at_end.then_some(first))
    }

    /// A Llama 3 reply that is a call starts with `{` and is nothing else.
    fn bare_json_call_begins(&self) -> bool {
        self.bare_json_call_possible() && self.pending.trim_start().starts_with('{')
    }

    fn bare_json_call_possible(&self) -> bool {
        self.tools.is_some() && self.format.tools == ToolSyntax::Llama3Json && !self.content_started
    }

    fn content(&mut self, parts: &mut Vec<ReplyPart>, text: &str) {
        let text = if self.trim_start { text.trim_start() } else { text };
        if text.is_empty() {
            return;
        }
        self.trim_start = false;
        self.content_started = true;
        push_text(parts, text, ReplyPart::Content);
    }

    /// Reasoning text; the line break after the opening marker is not part of it.
    fn reasoning(&mut self, parts: &mut Vec<ReplyPart>, text: &str) {
        if text.is_empty() {
            return;
        }
        let text = if std::mem::take(&mut self.trim_start) { text.strip_prefix('\n').unwrap_or(text) } else { text };
        if !text.is_empty() {
            push_text(parts, text, ReplyPart::Reasoning);
        }
    }

    /// A call block's body (`closed`: its closing marker was written); whether it was a call.
    fn call(&mut self, parts: &mut Vec<ReplyPart>, body: &str, closed: bool) -> bool {
        let tools = self.tools.as_deref().unwrap_or_default();
        if let Some((calls, after)) = parse_calls(self.format.tools, body, tools) {
            parts.extend(calls.into_iter().map(ReplyPart::ToolCall));
            self.trim_start = true;
            self.content(parts, after);
            return true;
        }
        // Not a call after all: the text as the model wrote it.
        let (open, close) = self.format.call_markers();
        let bare = self.bare_json_call_possible() && body.trim_start().starts_with('{');
        let close = if closed { close.unwrap_or_default() } else { "" };
        let written = if bare { body.to_string() } else { format!("{open}{body}{close}") };
        self.trim_start = false;
        self.content(parts, &written);
        false
    }
}

/// What a harmony message is, by its header.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HarmonyMessage {
    Reasoning,
    Content,
    /// A call of `functions.NAME`: its body is the arguments.
    Call(String),
}

/// Reads a harmony reply: a header (`<|start|>assistant`, ` to=RECIPIENT`,
/// `<|channel|>NAME`, ` <|constrain|>json`) up to `<|message|>`, then the message up to its end,
/// and so on. Reasoning and answers stream; a call is given whole when its message ends.
#[derive(Debug)]
struct Harmony {
    /// The request has tools: a message addressed to a function is a call.
    tools: bool,
    /// The message being read; `None` while reading a header.
    message: Option<HarmonyMessage>,
}

impl Harmony {
    fn advance(&mut self, pending: &mut String, parts: &mut Vec<ReplyPart>, at_end: bool) {
        loop {
            let Some(message) = self.message.clone() else {
                if let Some(at) = pending.find(HARMONY_MESSAGE) {
                    let header = take_through(pending, at, HARMONY_MESSAGE.len());
                    self.message = Some(self.kind(&header));
                    continue;
                }
                // Text that cannot begin a header is an answer written without one.
                let trimmed = pending.trim_start();
                if !trimmed.is_empty() && !trimmed.starts_with("<|") && !"<|".starts_with(trimmed) {
                    self.message = Some(HarmonyMessage::Content);
                    continue;
                }
                if at_end {
                    pending.clear();
                }
                return;
            };
            let end = HARMONY_ENDS.iter().filter_map(|marker| Some((pending.find(marker)?, *marker))).min_by_key(|e| e.0);
            match (message, end) {
                (HarmonyMessage::Call(name), Some((at, marker))) => {
                    // `<|start|>` is the next header's: left for it.
                    let body = take_through(pending, at, if marker == HARMONY_START { 0 } else { marker.len() });
                    Self::call(parts, &name, &body);
                    self.message = None;
                }
                (HarmonyMessage::Call(name), None) => {
                    if at_end {
                        let body = std::mem::take(pending);
                        Self::call(parts, &name, &body);
                    }
                    return;
                }
                (kind, Some((at, marker))) => {
                    let text = take_through(pending, at, if marker == HARMONY_START { 0 } else { marker.len() });
                    Self::text(parts, &kind, &text);
                    self.message = None;
                }
                (kind, None) => {
                    let held = if at_end { 0 } else { partial_suffix(pending, HARMONY_ENDS) };
                    let ready: String = pending.drain(..pending.len() - held).collect();
                    Self::text(parts, &kind, &ready);
                    return;
                }
            }
        }
    }

    /// What a header says its message is.
    fn kind(&self, header: &str) -> HarmonyMessage {
        let word_after = |marker: &str| -> Option<&str> {
            let rest = &header[header.find(marker)? + marker.len()..];
            let end = rest.find(|c: char| c.is_whitespace() || c == '<').unwrap_or(rest.len());
            Some(&rest[..end])
        };
        if let Some(name) = word_after("to=").and_then(|r| r.strip_prefix("functions.")).filter(|_| self.tools) {
            return HarmonyMessage::Call(name.to_string());
        }
        match word_after(HARMONY_CHANNEL) {
            Some("analysis") => HarmonyMessage::Reasoning,
            _ => HarmonyMessage::Content,
        }
    }

    fn text(parts: &mut Vec<ReplyPart>, kind: &HarmonyMessage, text: &str) {
        if text.is_empty() {
            return;
        }
        let part = if *kind == HarmonyMessage::Reasoning { ReplyPart::Reasoning } else { ReplyPart::Content };
        push_text(parts, text, part);
    }

    /// A call's body: its arguments as JSON; one that does not read is given as content.
    fn call(parts: &mut Vec<ReplyPart>, name: &str, body: &str) {
        match serde_json::from_str(body.trim()).ok().and_then(|arguments| call(name, arguments)) {
            Some(calls) => parts.extend(calls.into_iter().map(ReplyPart::ToolCall)),
            None => push_text(parts, body, ReplyPart::Content),
        }
    }
}

/// The first `at` bytes of `pending`, removed with the `marker` bytes after them.
fn take_through(pending: &mut String, at: usize, marker: usize) -> String {
    let mut taken: String = pending.drain(..at + marker).collect();
    taken.truncate(at);
    taken
}

/// Appends text to the last part when it is of the same kind, so callers get few, long parts.
fn push_text(parts: &mut Vec<ReplyPart>, text: &str, kind: fn(String) -> ReplyPart) {
    match (parts.last_mut(), kind(String::new())) {
        (Some(ReplyPart::Content(last)), ReplyPart::Content(_)) | (Some(ReplyPart::Reasoning(last)), ReplyPart::Reasoning(_)) => {
            last.push_str(text)
        }
        _ => parts.push(kind(text.to_string())),
    }
}

/// The length of the longest end of `text` that begins one of `markers` (to hold back).
fn partial_suffix<'a>(text: &str, markers: impl IntoIterator<Item = &'a str>) -> usize {
    markers
        .into_iter()
        .flat_map(|marker| (1..marker.len()).rev().filter(move |&n| marker.is_char_boundary(n)).map(move |n| &marker[..n]))
        .filter(|prefix| text.ends_with(prefix))
        .map(str::len)
        .max()
        .unwrap_or(0)
}

/// The calls in one call block, and text the model wrote after a call it did not close; or
/// `None` when it is not a call.
fn parse_calls<'a>(syntax: ToolSyntax, body: &'a str, tools: &[Value]) -> Option<(Vec<ParsedCall>, &'a str)> {
    let body = body.trim();
    if syntax == ToolSyntax::Hermes {
        // A call cut short of its closing tag (a stop string, the end of the reply) may have
        // text after its JSON.
        let mut values = serde_json::Deserializer::from_str(body).into_iter::<Value>();
        let call = json_call(&values.next()?.ok()?)?;
        return Some((vec![call], &body[values.byte_offset()..]));
    }
    match syntax {
        // Harmony's calls are read by its own reader (`Harmony`), name and body apart.
        ToolSyntax::Hermes | ToolSyntax::Harmony => None,
        ToolSyntax::Llama3Json => {
            // Several calls may be separated by `;` (read as JSON: one in a string is text).
            let mut calls = Vec::new();
            let mut rest = body;
            loop {
                let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
                calls.push(json_call(&values.next()?.ok()?)?);
                let after = rest[values.byte_offset()..].trim_start();
                if after.is_empty() {
                    break Some(calls);
                }
                rest = after.strip_prefix(';')?;
            }
        }
        ToolSyntax::Mistral => {
            if body.starts_with('[') {
                let list: Vec<Value> = serde_json::from_str(body).ok()?;
                return list.iter().map(json_call).collect::<Option<Vec<_>>>().filter(|c| !c.is_empty()).map(|c| (c, ""));
            }
            let (head, arguments) = body.split_once("[ARGS]")?;
            let name = head.split_once("[CALL_ID]").map_or(head, |(name, _)| name).trim();
            call(name, serde_json::from_str(arguments.trim()).ok()?)
        }
        ToolSyntax::QwenXml => xml_call(body, tools).map(|c| vec![c]),
        ToolSyntax::Gemma4 => {
            let rest = body.strip_prefix("call:")?;
            let brace = rest.find('{')?;
            let mut reader = GemmaReader { text: &rest[brace..] };
            let arguments = reader.value()?;
            reader.text.trim().is_empty().then_some(())?;
            call(&rest[..brace], arguments)
        }
    }
    .filter(|calls| !calls.is_empty())
    .map(|calls| (calls, ""))
}

/// One call from a name and its arguments (an object).
fn call(name: &str, arguments: Value) -> Option<Vec<ParsedCall>> {
    let name = name.trim();
    (valid_name(name) && arguments.is_object()).then(|| vec![ParsedCall { name: name.to_string(), arguments }])
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || "_-.:".contains(c))
}

/// `{"name": ..., "arguments": {...}}` (or `"parameters"`; arguments given as a JSON string
/// are read too).
fn json_call(value: &Value) -> Option<ParsedCall> {
    let name = value.get("name")?.as_str()?;
    let arguments = match value.get("arguments").or_else(|| value.get("parameters")) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::String(s)) => serde_json::from_str(s).ok()?,
        Some(other) => other.clone(),
    };
    call(name, arguments)?.pop()
}

/// `<function=name><parameter=p>value</parameter>...</function>`. Values are text unless the
/// tool's schema gives the parameter another type (`xml_value_is_text`), as Qwen's own parsers
/// read them; other values are JSON, or Python's words for them (its template writes
/// `True`, `None`).
fn xml_call(body: &str, tools: &[Value]) -> Option<ParsedCall> {
    let rest = body.strip_prefix("<function=")?;
    let (name, mut rest) = rest.split_once('>')?;
    let properties = tools
        .iter()
        .map(|t| t.get("function").unwrap_or(t))
        .find(|f| f.get("name").and_then(Value::as_str) == Some(name))
        .and_then(|f| f.pointer("/parameters/properties"));
    let mut arguments = Map::new();
    while let Some(start) = rest.find("<parameter=") {
        let after = &rest[start + "<parameter=".len()..];
        let (key, after) = after.split_once('>')?;
        let schema = properties.and_then(|p| p.get(key));
        let text = xml_value_is_text(schema);
        let raw_until = |end: usize| {
            let raw = after[..end].strip_prefix('\n').unwrap_or(&after[..end]);
            raw.strip_suffix('\n').unwrap_or(raw)
        };
        // Text ends at the first `</parameter>`; JSON at the first after which it is whole
        // (one inside a string of it does not end it).
        let mut ends = after.match_indices("</parameter>").map(|(at, _)| at);
        let first = ends.clone().next()?;
        let end = if text { first } else { ends.find(|&at| serde_json::from_str::<Value>(raw_until(at)).is_ok()).unwrap_or(first) };
        let raw = raw_until(end);
        let value = if text {
            Value::String(raw.to_string())
        } else {
            serde_json::from_str(raw).ok().or_else(|| python_word(raw)).unwrap_or_else(|| Value::String(raw.to_string()))
        };
        arguments.insert(key.to_string(), value);
        rest = &after[end + "</parameter>".len()..];
    }
    let rest = rest.trim();
    (rest.is_empty() || rest == "</function>").then_some(())?;
    call(name, Value::Object(arguments))?.pop()
}

/// Whether Qwen's XML form carries a parameter's value as plain text: a string parameter, or
/// one its tool does not describe (Qwen's parsers read those as strings), or one whose only
/// values are strings. Others are JSON. The call grammar writes values by the same rule.
pub(super) fn xml_value_is_text(schema: Option<&Value>) -> bool {
    let Some(schema) = schema else { return true };
    match schema.get("type") {
        Some(Value::String(kind)) => kind == "string",
        Some(_) => false,
        None if schema.get("anyOf").is_some() || schema.get("oneOf").is_some() => false,
        None => match (schema.get("const"), schema.get("enum")) {
            (Some(one), _) => one.is_string(),
            (None, Some(Value::Array(many))) => many.iter().all(Value::is_string),
            _ => true,
        },
    }
}

/// Python's (and some models') words for JSON's `true`, `false` and `null`.
fn python_word(word: &str) -> Option<Value> {
    match word.to_ascii_lowercase().as_str() {
        "true" => Some(Value::Bool(true)),
        "false" => Some(Value::Bool(false)),
        "none" | "null" | "nil" => Some(Value::Null),
        _ => None,
    }
}

/// Gemma 4's argument notation: JSON-like, with bare keys and strings between `<|"|>`.
struct GemmaReader<'a> {
    text: &'a str,
}

impl GemmaReader<'_> {
    fn value(&mut self) -> Option<Value> {
        self.skip_space();
        if let Some(rest) = self.text.strip_prefix(GEMMA4_STRING) {
            let end = rest.find(GEMMA4_STRING)?;
            self.text = &rest[end + GEMMA4_STRING.len()..];
            return Some(Value::String(rest[..end].to_string()));
        }
        match self.text.chars().next()? {
            '{' => {
                self.text = &self.text[1..];
                let mut object = Map::new();
                loop {
                    self.skip_space();
                    if let Some(rest) = self.text.strip_prefix('}') {
                        self.text = rest;
                        return Some(Value::Object(object));
                    }
                    let key = match self.text.strip_prefix(GEMMA4_STRING).or_else(|| self.text.strip_prefix('"')) {
                        Some(_) => self.value()?.as_str()?.to_string(),
                        None => {
                            let end = self.text.find(':')?;
                            let key = self.text[..end].trim().to_string();
                            self.text = &self.text[end..];
                            key
                        }
                    };
                    self.skip_space();
                    self.text = self.text.strip_prefix(':')?;
                    object.insert(key, self.value()?);
                    self.separator('}')?;
                }
            }
            '[' => {
                self.text = &self.text[1..];
                let mut list = Vec::new();
                loop {
                    self.skip_space();
                    if let Some(rest) = self.text.strip_prefix(']') {
                        self.text = rest;
                        return Some(Value::Array(list));
                    }
                    list.push(self.value()?);
                    self.separator(']')?;
                }
            }
            '"' => {
                let mut stream = serde_json::Deserializer::from_str(self.text).into_iter::<Value>();
                let value = stream.next()?.ok()?;
                self.text = &self.text[stream.byte_offset()..];
                Some(value)
            }
            _ => {
                let end = self.text.find([',', '}', ']']).unwrap_or(self.text.len());
                let word = self.text[..end].trim();
                self.text = &self.text[end..];
                // A null as its template writes it (Python's `None`) too.
                Some(
                    serde_json::from_str(word)
                        .ok()
                        .or_else(|| python_word(word).filter(Value::is_null))
                        .unwrap_or_else(|| Value::String(word.to_string())),
                )
            }
        }
    }

    /// After an item: a comma, or the closing bracket (left for the caller).
    fn separator(&mut self, close: char) -> Option<()> {
        self.skip_space();
        if let Some(rest) = self.text.strip_prefix(',') {
            self.text = rest;
            return Some(());
        }
        self.text.starts_with(close).then_some(())
    }

    fn skip_space(&mut self) {
        self.text = self.text.trim_start();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn format(template: &str) -> ReplyFormat {
        ReplyFormat::detect(Some(template))
    }

    /// The parts of `text` streamed in pieces of `step` bytes (on character boundaries), with
    /// neighbouring parts of one kind joined.
    fn parse(parser: &mut ReplyParser, text: &str, step: usize) -> Vec<ReplyPart> {
        let mut parts = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let mut n = step.min(rest.len());
            while !rest.is_char_boundary(n) {
                n += 1;
            }
            for part in parser.push(&rest[..n]) {
                join(&mut parts, part);
            }
            rest = &rest[n..];
        }
        for part in parser.finish() {
            join(&mut parts, part);
        }
        parts
    }

    fn join(parts: &mut Vec<ReplyPart>, part: ReplyPart) {
        match part {
            ReplyPart::Content(t) => push_text(parts, &t, ReplyPart::Content),
            ReplyPart::Reasoning(t) => push_text(parts, &t, ReplyPart::Reasoning),
            call => parts.push(call),
        }
    }

    fn tools() -> Option<Vec<Value>> {
        Some(vec![
            json!({"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}),
        ])
    }

    fn weather(city: &str, days: Option<i64>) -> ReplyPart {
        let mut arguments = json!({ "city": city });
        if let Some(d) = days {
            arguments["days"] = json!(d);
        }
        ReplyPart::ToolCall(ParsedCall { name: "get_weather".into(), arguments })
    }

    fn every_step(format: ReplyFormat, in_reasoning: bool, tools: Option<Vec<Value>>, text: &str, expected: &[ReplyPart]) {
        for step in [1, 2, 3, 5, 7, 64, 10_000] {
            let mut parser = ReplyParser::new(format, in_reasoning, tools.clone());
            assert_eq!(parse(&mut parser, text, step), expected, "in pieces of {step}: {text:?}");
        }
    }

    #[test]
    fn templates_say_which_markup_their_models_write() {
        assert_eq!(format("{{ '<think>' }}{% if tools %}<tool_call>{% endif %}").tools, ToolSyntax::Hermes);
        assert_eq!(format("<think> <tool_call><function=x>").tools, ToolSyntax::QwenXml);
        assert_eq!(format("<|tool_call>call:").tools, ToolSyntax::Gemma4);
        assert_eq!(format("<|tool_call>").reasoning, None);
        assert_eq!(format("<|channel>thought").reasoning, Some(GEMMA4_THOUGHT));
        assert_eq!(format("[TOOL_CALLS]").tools, ToolSyntax::Mistral);
        assert_eq!(format("<|eot_id|>{% if tools %}").tools, ToolSyntax::Llama3Json);
        assert_eq!(ReplyFormat::detect(None), ReplyFormat { reasoning: None, tools: ToolSyntax::Hermes });
        let qwen = format("<think>");
        assert!(qwen.starts_in_reasoning("<|im_start|>assistant\n<think>\n"));
        assert!(!qwen.starts_in_reasoning("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
        assert!(!qwen.starts_in_reasoning("<|im_start|>assistant\n"));
    }

    #[test]
    fn reasoning_and_answer_are_apart() {
        let qwen = format("<think></think>");
        let expected = [ReplyPart::Reasoning("Paris is in France.\n".into()), ReplyPart::Content("It is Paris.".into())];
        every_step(qwen, false, None, "<think>\nParis is in France.\n</think>\n\nIt is Paris.", &expected);
        every_step(qwen, true, None, "Paris is in France.\n</think>\n\nIt is Paris.", &expected);
        // Cut off while reasoning: what there is, is reasoning.
        every_step(qwen, false, None, "<think>\nHmm, <thin", &[ReplyPart::Reasoning("Hmm, <thin".into())]);
        // A model without a reasoning block: the tags are text.
        every_step(format(""), false, None, "<think>x</think>y", &[ReplyPart::Content("<think>x</think>y".into())]);
        let gemma = format("<|channel>");
        every_step(
            gemma,
            false,
            None,
            "<|channel>thought\nLet me see.<channel|>Yes.",
            &[ReplyPart::Reasoning("Let me see.".into()), ReplyPart::Content("Yes.".into())],
        );
    }

    #[test]
    fn a_closing_marker_inside_a_string_of_the_arguments_does_not_end_the_call() {
        let hermes = format("<tool_call>");
        let text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"a</tool_call>b\"}}\n</tool_call>";
        every_step(hermes, false, tools(), text, &[weather("a</tool_call>b", None)]);
        let tools = Some(vec![json!({"name": "f", "parameters": {"properties": {"o": {"type": "object"}}}})]);
        let text =
            "<tool_call>\n<function=f>\n<parameter=o>\n{\"s\": \"</parameter></tool_call>\"}\n</parameter>\n</function>\n</tool_call>";
        let expected = ParsedCall { name: "f".into(), arguments: json!({"o": {"s": "</parameter></tool_call>"}}) };
        every_step(format("<function="), false, tools, text, &[ReplyPart::ToolCall(expected)]);
    }

    #[test]
    fn hermes_calls_parse_and_others_stay_text() {
        let qwen = format("<think><tool_call>");
        let text = "<think>\nI need the weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Rome\\\", \\\"days\\\": 2}\"}\n</tool_call>";
        let expected = [ReplyPart::Reasoning("I need the weather.\n".into()), weather("Paris", None), weather("Rome", Some(2))];
        every_step(qwen, false, tools(), text, &expected);
        // Without tools in the request, the markup is the reply's text.
        let plain = "<tool_call>{\"name\": \"get_weather\"}</tool_call>";
        every_step(format("<tool_call>"), false, None, plain, &[ReplyPart::Content(plain.into())]);
        // A body that is not a call comes back as written.
        let broken = "Sure. <tool_call>{\"name\": get_weather}</tool_call> Done.";
        every_step(format("<tool_call>"), false, tools(), broken, &[ReplyPart::Content(broken.into())]);
        // Unfinished at the end: as written.
        let cut = "<tool_call>{\"name\": \"get_weather\", \"argu";
        every_step(format("<tool_call>"), false, tools(), cut, &[ReplyPart::Content(cut.into())]);
    }

    #[test]
    fn text_that_is_not_ascii_ends_where_its_marker_begins() {
        let qwen = format("<think><tool_call>");
        let text = "<think>\nCafé ☕</think>\n\nNaïve: <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\"}}\n</tool_call>";
        let expected = [ReplyPart::Reasoning("Café ☕".into()), ReplyPart::Content("Naïve: ".into()), weather("Zürich", None)];
        every_step(qwen, false, tools(), text, &expected);
        let broken = "<tool_call>{\"ü\": ☕}</tool_call> ✓";
        every_step(qwen, false, tools(), broken, &[ReplyPart::Content(broken.into())]);
    }

    #[test]
    fn qwen_xml_parameters_take_their_schema_types() {
        let text = "Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nNew York\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>";
        every_step(
            format("<function="),
            false,
            tools(),
            text,
            &[ReplyPart::Content("Let me check.\n".into()), weather("New York", Some(3))],
        );
    }

    #[test]
    fn llama3_mistral_and_gemma4_calls_parse() {
        let llama = format("<|eot_id|>{{ tools }}");
        every_step(llama, false, tools(), " {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}", &[weather("Oslo", None)]);
        every_step(llama, false, tools(), "It is {\"a\": 1}", &[ReplyPart::Content("It is {\"a\": 1}".into())]);
        every_step(llama, false, tools(), "{not json", &[ReplyPart::Content("{not json".into())]);
        let two = "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"a; b\"}}; {\"name\": \"get_weather\", \"parameters\": {\"city\": \"c\"}}";
        every_step(llama, false, tools(), two, &[weather("a; b", None), weather("c", None)]);

        let mistral = format("[TOOL_CALLS]");
        every_step(
            mistral,
            false,
            tools(),
            "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Lyon\"}[TOOL_CALLS]get_weather[CALL_ID]a1[ARGS]{\"city\": \"Nice\", \"days\": 1}",
            &[weather("Lyon", None), weather("Nice", Some(1))],
        );
        every_step(
            mistral,
            false,
            tools(),
            "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Bern\"}}]",
            &[weather("Bern", None)],
        );

        let gemma = format("<|tool_call><|channel>");
        let text = "<|channel>thought\nWeather.<channel|><|tool_call>call:get_weather{city:<|\"|>Den Haag, NL<|\"|>,days:4,opts:{metric:true,tags:[<|\"|>a<|\"|>,2]}}<tool_call|>";
        let mut expected = weather("Den Haag, NL", Some(4));
        if let ReplyPart::ToolCall(c) = &mut expected {
            c.arguments["opts"] = json!({"metric": true, "tags": ["a", 2]});
        }
        every_step(gemma, false, tools(), text, &[ReplyPart::Reasoning("Weather.".into()), expected]);
    }

    #[test]
    fn markup_and_call_openings_match_the_parser() {
        let gemma = format("<|tool_call><|channel>");
        assert!(gemma.markup().contains(&"<|channel>") && gemma.markup().contains(&GEMMA4_STRING));
        for template in ["<tool_call>", "<function=", "<|tool_call>", "[TOOL_CALLS] [ARGS]", "<|eot_id|> tools", "<|channel|><|message|>"] {
            let format = format(template);
            let opening = format.call_opening("get_weather");
            let rest = match format.tools {
                ToolSyntax::Hermes => "{\"city\": \"Paris\"}}\n</tool_call>",
                ToolSyntax::QwenXml => "<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
                ToolSyntax::Llama3Json | ToolSyntax::Mistral => "{\"city\": \"Paris\"}}",
                ToolSyntax::Gemma4 => "city:<|\"|>Paris<|\"|>}<tool_call|>",
                ToolSyntax::Harmony => "{\"city\": \"Paris\"}<|call|>",
            };
            let rest = if format.tools == ToolSyntax::Mistral { rest.strip_suffix('}').unwrap() } else { rest };
            every_step(format, false, tools(), &format!("{opening}{rest}"), &[weather("Paris", None)]);
        }
        // A required call of any tool: the model writes the name.
        let hermes = format("<tool_call>");
        let text = format!("{}get_weather\", \"arguments\": {{\"city\": \"Paris\"}}}}", hermes.any_call_opening());
        every_step(hermes, false, tools(), &text, &[weather("Paris", None)]);
        // Cut at its closing tag by a stop string, with text after the JSON: the call, then the text.
        assert_eq!(hermes.call_close(), Some("</tool_call>"));
        let text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}} I hope";
        every_step(hermes, false, tools(), text, &[weather("Paris", None), ReplyPart::Content("I hope".into())]);
    }

    fn harmony() -> ReplyFormat {
        format("{{- \"<|start|>system<|message|>\" }}{%- if tools %}<|channel|>commentary{% endif %}")
    }

    fn weather_args(arguments: Value) -> ReplyPart {
        ReplyPart::ToolCall(ParsedCall { name: "get_weather".into(), arguments })
    }

    /// gpt-oss's reasoning then its answer, as it writes them after the prompt's
    /// `<|start|>assistant` (the reply's `<|return|>` is a stop token, left out or not).
    #[test]
    fn harmony_analysis_is_reasoning_and_final_the_answer() {
        let f = harmony();
        assert_eq!((f.tools, f.reasoning), (ToolSyntax::Harmony, Some(HARMONY_ANALYSIS)));
        let text = "<|channel|>analysis<|message|>User asks: capital of France. Simple: Paris.<|end|><|start|>assistant<|channel|>final<|message|>The capital of France is **Paris**.";
        for end in ["", "<|return|>"] {
            for step in [1, 3, 7, 1000] {
                let parts = parse(&mut ReplyParser::new(f, false, None), &format!("{text}{end}"), step);
                assert_eq!(
                    parts,
                    [
                        ReplyPart::Reasoning("User asks: capital of France. Simple: Paris.".into()),
                        ReplyPart::Content("The capital of France is **Paris**.".into())
                    ],
                    "step {step}, end {end:?}"
                );
            }
        }
    }

    /// A call in the commentary channel, with the recipient after the channel (as gpt-oss
    /// writes it) or before it (as its template renders earlier calls); `<|call|>` may follow.
    #[test]
    fn harmony_commentary_to_a_function_is_a_call() {
        let texts = [
            "<|channel|>analysis<|message|>Need the weather; call get_weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\",\"days\":3}<|call|>",
            "<|channel|>analysis<|message|>Need the weather; call get_weather.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Paris\", \"days\": 3}",
        ];
        for text in texts {
            for step in [1, 4, 1000] {
                let parts = parse(&mut ReplyParser::new(harmony(), false, tools()), text, step);
                assert_eq!(
                    parts,
                    [ReplyPart::Reasoning("Need the weather; call get_weather.".into()), weather("Paris", Some(3))],
                    "step {step}: {text}"
                );
            }
        }
    }

    /// A preamble in the commentary channel (no recipient) is shown; a call whose arguments are
    /// not JSON, or any call when the request has no tools, is text.
    #[test]
    fn harmony_preambles_and_broken_calls_are_content() {
        let text = "<|channel|>commentary<|message|>Checking the forecast.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": Paris}<|call|>";
        let parts = parse(&mut ReplyParser::new(harmony(), false, tools()), text, 5);
        assert_eq!(parts, [ReplyPart::Content("Checking the forecast.{\"city\": Paris}".into())]);
        let call = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Rome\"}";
        assert_eq!(parse(&mut ReplyParser::new(harmony(), false, None), call, 3), [ReplyPart::Content("{\"city\":\"Rome\"}".into())]);
        assert_eq!(parse(&mut ReplyParser::new(harmony(), false, tools()), call, 3), [weather_args(json!({"city": "Rome"}))]);
        // An answer written without any header is the answer.
        assert_eq!(parse(&mut ReplyParser::new(harmony(), false, None), "Paris.", 2), [ReplyPart::Content("Paris.".into())]);
    }

    #[test]
    fn harmony_markup_is_kept_and_calls_open_in_the_commentary_channel() {
        let f = harmony();
        for marker in ["<|channel|>", "<|message|>", "<|end|>", "<|start|>", "<|constrain|>", "<|call|>", "<|return|>"] {
            assert!(f.markup().contains(&marker), "{marker}");
        }
        let opening = f.call_opening("get_weather");
        assert_eq!(opening, "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>");
        let parts = parse(&mut ReplyParser::new(f, false, tools()), &format!("{opening}{{\"city\":\"Oslo\"}}"), 1000);
        assert_eq!(parts, [weather_args(json!({"city": "Oslo"}))]);
        assert!(!f.starts_in_reasoning("<|start|>assistant<|channel|>analysis<|message|>x<|end|><|start|>assistant"));
    }
}
