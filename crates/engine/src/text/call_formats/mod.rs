//! The ways models write calls of tools, one file each: a format's markup, the grammar that
//! holds a reply to one call in it, and the parser that reads its calls back, side by side, so
//! that what the grammar admits is what the parser reads.
//!
//! The rest of the engine reaches a format through [`ToolSyntax`] (which format a template
//! implies) and [`CallFormat`] (what the format does); `reply.rs` reads the generic parts of a
//! reply (reasoning, answer) and hands call blocks to the format. A new format is a file here
//! and one line in the registry below.
//!
//! Grammars (llguidance's Lark, built with [`lark::Lark`]) hold what a `tool_choice` of
//! `required` or a named function asks for: exactly one call of one of the request's tools,
//! with arguments valid against the tool's JSON Schema. Markup the vocabulary has as one token
//! (`<tool_call>` in Qwen's, `<|"|>` in Gemma's) is named by id (`<[id]>`): grammar text never
//! matches a special token, and a model asked to spell its own markup in pieces writes worse
//! arguments. What a grammar cannot hold a value to is refused (`None`: the caller falls back
//! to writing the call's opening): `$ref`, `allOf`, `not`, conditionals, and `pattern` on a
//! string that is not JSON. `format` is an annotation (as JSON Schema validators treat it by
//! default).

use serde_json::{Map, Value};

use super::reply::{Markers, ParsedCall, ReplyPart};

pub(crate) mod lark;
#[cfg(test)]
pub(crate) mod testing;

/// What a format of calls does: where its calls open and close, how a call is read back, the
/// text that begins a call the engine writes for the model, and the grammar of one call.
pub(crate) trait CallFormat: Sync {
    /// Whether a chat template writes earlier calls in this format (what the model learnt to
    /// write). Formats are tried in the registry's order.
    fn written_by(&self, template: &str) -> bool;

    /// Where a call opens, and where it closes (`None`: it runs to the next call or the end).
    fn call_markers(&self) -> (&'static str, Option<&'static str>);

    /// The markup the parser reads in a call besides its markers (Mistral's `[ARGS]`, Gemma's
    /// string delimiter); where the vocabulary makes these special tokens, the engine keeps them
    /// in the streamed text of requests that parse their replies.
    fn markup(&self) -> Vec<&'static str> {
        let (open, close) = self.call_markers();
        let mut texts = vec![open];
        texts.extend(close);
        texts
    }

    /// The text that begins a call of whichever tool the model picks, for a reply that must
    /// call one.
    fn any_call_opening(&self) -> &'static str;

    /// The text that begins a call of `name`, for a reply that must call it: the engine writes
    /// it, and the model goes on with the arguments.
    fn call_opening(&self, name: &str) -> String;

    /// The calls in one call block (the text between its markers), and text the model wrote
    /// after a call it did not close; `None` when it is not a call.
    fn parse_calls<'a>(&self, body: &'a str, tools: &[Value]) -> Option<(Vec<ParsedCall>, &'a str)>;

    /// Whether the closing marker after `body`, which reads as a call, ends it (a format whose
    /// bodies read leniently counts only a body its template would have ended).
    fn closes(&self, _body: &str) -> bool {
        true
    }

    /// A call written with no opening marker, as the whole reply, starts with this (Llama 3's
    /// bare JSON).
    fn bare_call_start(&self) -> Option<&'static str> {
        None
    }

    /// The start of a grammar for exactly one call of one of `tools` (definitions in OpenAI's
    /// shape), its rules added to `lark`; `None` when a schema asks for what the grammar cannot
    /// enforce.
    fn call_grammar(&self, lark: &mut lark::Lark, tools: &[Value]) -> Option<String>;

    /// For a format that frames the whole reply in messages of its own (harmony), reasoning
    /// included: its reasoning's markers, and its reader. Other formats' calls sit among the
    /// blocks `reply.rs` reads.
    fn whole_reply(&self) -> Option<WholeReply> {
        None
    }
}

/// A format that reads whole replies (see [`CallFormat::whole_reply`]).
pub(crate) struct WholeReply {
    /// Where its reasoning opens and closes, for code that asks.
    pub reasoning: Markers,
    /// A reader for one reply; `tools`: the request has tools (else calls are text).
    pub reader: fn(tools: bool) -> Box<dyn ReplyReader>,
}

/// Reads a reply in a format that frames it whole: `pending` is the text not read yet.
pub(crate) trait ReplyReader: std::fmt::Debug + Send {
    /// The parts `pending` completes (`at_end`: all of them, the reply is over).
    fn advance(&mut self, pending: &mut String, parts: &mut Vec<ReplyPart>, at_end: bool);
}

/// The registry: one line per format, in the order templates are tried (a format whose mark
/// contains another's comes first), each its variant of [`ToolSyntax`], its module and its
/// value.
macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident => $module:ident::$format:ident,)*) => {
        $(mod $module;)*

        /// How a model writes its calls of tools.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
        #[serde(rename_all = "snake_case")]
        pub enum ToolSyntax {
            $($(#[$doc])* $variant,)*
        }

        impl ToolSyntax {
            /// Every format, in the order templates are tried.
            pub const ALL: &'static [ToolSyntax] = &[$(ToolSyntax::$variant),*];

            /// What the format does.
            pub(crate) fn call_format(self) -> &'static dyn CallFormat {
                match self {
                    $(ToolSyntax::$variant => &$module::$format,)*
                }
            }
        }
    };
}

registry! {
    /// Harmony (gpt-oss): messages `<|start|>assistant<|channel|>NAME<|message|>…<|end|>`,
    /// a call being a `commentary` message addressed `to=functions.NAME` whose body is the
    /// arguments as JSON, ended by `<|call|>`.
    Harmony => harmony::Harmony,
    /// `<|tool_call>call:name{key:<|"|>text<|"|>,n:1}<tool_call|>`.
    Gemma4 => gemma4::Gemma4,
    /// `<tool_call><function=name><parameter=p>value</parameter></function></tool_call>`
    /// (Qwen3.5, Qwen3-Coder).
    QwenXml => qwen_xml::QwenXml,
    /// `[TOOL_CALLS]name[ARGS]{...}`, or `[TOOL_CALLS][{"name": ..., "arguments": {...}}]`.
    Mistral => mistral::Mistral,
    /// `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Qwen2.5, Qwen3, Hermes; and
    /// what the fallback prompt teaches models whose template has no tools).
    Hermes => hermes::Hermes,
    /// A bare `{"name": ..., "parameters": {...}}` as the whole reply, or after `<|python_tag|>`.
    Llama3Json => llama3_json::Llama3Json,
}

impl ToolSyntax {
    /// The format a chat template implies: the first that the template writes, else Hermes
    /// (what the fallback prompt for templates without tools teaches).
    pub(crate) fn detect(template: &str) -> Self {
        Self::ALL.iter().copied().find(|syntax| syntax.call_format().written_by(template)).unwrap_or(ToolSyntax::Hermes)
    }
}

/// A grammar (llguidance's Lark) for a reply that is exactly one call of one of `tools` in
/// `syntax`; `None` when a schema asks for what the grammar cannot enforce. `markup_tokens`:
/// the markup the vocabulary has as single tokens, with their ids.
pub(crate) fn call_grammar(syntax: ToolSyntax, tools: &[Value], markup_tokens: &[(&str, u32)]) -> Option<String> {
    if tools.is_empty() {
        return None;
    }
    let mut lark = lark::Lark::new(markup_tokens);
    let start = syntax.call_format().call_grammar(&mut lark, tools)?;
    Some(lark.grammar(&start))
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

/// Calls that are whole, with no text after them; `None` for none.
fn whole(calls: Option<Vec<ParsedCall>>) -> Option<(Vec<ParsedCall>, &'static str)> {
    calls.filter(|calls| !calls.is_empty()).map(|calls| (calls, ""))
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
