//! A reply's parts while it streams: the model's reasoning, its answer, and its calls of tools,
//! each read in the markup the model was trained on. The markup is found in the model's chat
//! template (`ReplyFormat::detect`): reasoning in `<think>` (Qwen3, Qwen3.5, SmolLM3), Gemma 4's
//! thought channel or Mistral's `[THINK]`, read here; calls in the format the template writes
//! (`call_formats`: one file each, which reads the calls' blocks that this parser finds). The
//! app and the server read replies through the same parser.

use serde_json::Value;

pub use super::call_formats::ToolSyntax;
use super::call_formats::{self, CallFormat, ReplyReader};
use super::parts::{partial_suffix, push_text, take_through};
pub use super::parts::{Markers, ParsedCall, ReplyPart};

const THINK: Markers = Markers { open: "<think>", close: "</think>" };
const GEMMA4_THOUGHT: Markers = Markers { open: "<|channel>thought", close: "<channel|>" };
const MISTRAL_THINK: Markers = Markers { open: "[THINK]", close: "[/THINK]" };

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
        let tools = ToolSyntax::detect(source);
        if let Some(whole) = tools.call_format().whole_reply() {
            return Self { reasoning: Some(whole.reasoning), tools };
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
        Self { reasoning, tools }
    }

    fn calls(&self) -> &'static dyn CallFormat {
        self.tools.call_format()
    }

    /// The markup the parser reads. Where the vocabulary makes these special tokens, the
    /// engine keeps them in the streamed text of requests that parse their replies.
    pub fn markup(&self) -> Vec<&'static str> {
        let mut texts = self.calls().markup();
        if let Some(m) = self.reasoning.filter(|_| self.calls().whole_reply().is_none()) {
            // Gemma 4's opener is a token followed by the channel's name.
            texts.push(m.open.strip_suffix("thought").unwrap_or(m.open));
            texts.push(m.close);
        }
        texts
    }

    /// Whether a prompt leaves the reply inside a reasoning block (a template that opens
    /// `<think>` in its generation prompt).
    pub fn starts_in_reasoning(&self, prompt: &str) -> bool {
        let Some(m) = self.reasoning.filter(|_| self.calls().whole_reply().is_none()) else { return false };
        match (prompt.rfind(m.open), prompt.rfind(m.close)) {
            (Some(open), Some(close)) => open > close,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// A grammar (llguidance's Lark) for a reply that is exactly one call of one of `tools`
    /// (definitions in OpenAI's shape), in this model's syntax, its arguments valid against the
    /// tool's schema; `None` when a schema asks for what the grammar cannot enforce (those get
    /// `call_opening` instead). `markup_tokens`: the markup the model's vocabulary has as single
    /// tokens, with their ids (`ModelInfo::markup_tokens`).
    pub fn call_grammar(&self, tools: &[Value], markup_tokens: &[(&str, u32)]) -> Option<String> {
        call_formats::call_grammar(self.tools, tools, markup_tokens)
    }

    /// The text that ends a call, for syntaxes that close their calls.
    pub fn call_close(&self) -> Option<&'static str> {
        self.calls().call_markers().1
    }

    /// The text that begins a call of whichever tool the model picks, for a reply that must
    /// call one.
    pub fn any_call_opening(&self) -> &'static str {
        self.calls().any_call_opening()
    }

    /// The text that begins a call of `name`, for a reply that must call it: the engine
    /// writes it, and the model goes on with the arguments.
    pub fn call_opening(&self, name: &str) -> String {
        self.calls().call_opening(name)
    }
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
    /// The reader of a format that frames whole replies (harmony), which takes the place of
    /// the blocks above.
    whole: Option<Box<dyn ReplyReader>>,
}

impl ReplyParser {
    /// `in_reasoning`: the prompt left the reply inside a reasoning block
    /// (`ReplyFormat::starts_in_reasoning`). `tools`: the request's definitions, or `None`.
    pub fn new(format: ReplyFormat, in_reasoning: bool, tools: Option<Vec<Value>>) -> Self {
        let block = if in_reasoning && format.reasoning.is_some() { Block::Reasoning } else { Block::Content };
        let whole = format.calls().whole_reply().map(|whole| (whole.reader)(tools.is_some()));
        Self { format, tools, block, pending: String::new(), content_started: false, trim_start: block == Block::Reasoning, whole }
    }

    /// The parts `text` completes.
    pub fn push(&mut self, text: &str) -> Vec<ReplyPart> {
        self.pending.push_str(text);
        let mut parts = Vec::new();
        match self.whole.as_mut() {
            Some(reader) => reader.advance(&mut self.pending, &mut parts, false),
            None => self.advance(&mut parts, false),
        }
        parts
    }

    /// Whatever is left: an unfinished block is given as it is.
    pub fn finish(&mut self) -> Vec<ReplyPart> {
        let mut parts = Vec::new();
        if let Some(reader) = self.whole.as_mut() {
            reader.advance(&mut self.pending, &mut parts, true);
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
                    if self.bare_call_begins() {
                        self.block = Block::Call;
                        continue;
                    }
                    if self.bare_call_start().is_some() && self.pending.trim().is_empty() && !at_end {
                        return; // white space before what may be a bare call
                    }
                    let mut openers: Vec<(&'static str, Block)> = Vec::new();
                    if let Some(m) = self.format.reasoning {
                        openers.push((m.open, Block::Reasoning));
                    }
                    if self.tools.is_some() {
                        openers.push((self.format.calls().call_markers().0, Block::Call));
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
                    let (open, close) = self.format.calls().call_markers();
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
        let calls = self.format.calls();
        let reads = |body: &str| calls.parse_calls(body, tools).is_some() && calls.closes(body);
        ends.find(|&at| reads(&self.pending[..at])).or(at_end.then_some(first))
    }

    /// A reply that is a call with no opening marker (Llama 3's bare JSON) starts with the
    /// format's bare start and is nothing else.
    fn bare_call_begins(&self) -> bool {
        self.bare_call_start().is_some_and(|start| self.pending.trim_start().starts_with(start))
    }

    /// What a bare call starts with, while the reply may still be one.
    fn bare_call_start(&self) -> Option<&'static str> {
        self.format.calls().bare_call_start().filter(|_| self.tools.is_some() && !self.content_started)
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
        if let Some((calls, after)) = self.format.calls().parse_calls(body, tools) {
            parts.extend(calls.into_iter().map(ReplyPart::ToolCall));
            self.trim_start = true;
            self.content(parts, after);
            return true;
        }
        // Not a call after all: the text as the model wrote it.
        let (open, close) = self.format.calls().call_markers();
        let bare = self.bare_call_start().is_some_and(|start| body.trim_start().starts_with(start));
        let close = if closed { close.unwrap_or_default() } else { "" };
        let written = if bare { body.to_string() } else { format!("{open}{body}{close}") };
        self.trim_start = false;
        self.content(parts, &written);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::call_formats::{every_step, format, tools, weather};

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
    fn text_that_is_not_ascii_ends_where_its_marker_begins() {
        let qwen = format("<think><tool_call>");
        let text = "<think>\nCafé ☕</think>\n\nNaïve: <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\"}}\n</tool_call>";
        let expected = [ReplyPart::Reasoning("Café ☕".into()), ReplyPart::Content("Naïve: ".into()), weather("Zürich", None)];
        every_step(qwen, false, tools(), text, &expected);
        let broken = "<tool_call>{\"ü\": ☕}</tool_call> ✓";
        every_step(qwen, false, tools(), broken, &[ReplyPart::Content(broken.into())]);
    }
}
