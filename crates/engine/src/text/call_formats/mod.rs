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

use super::parts::{Markers, ParsedCall, ReplyPart};

pub(crate) mod lark;

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

/// The parser tests' helpers, for `reply.rs`'s tests too.
#[cfg(test)]
pub(crate) use testing::{every_step, format, tools, weather};

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

/// What the formats' tests share: streaming a reply through the parser in pieces, the tools
/// the parser tests call, and the vocabularies, tools and checks the grammar tests use.
#[cfg(test)]
mod testing {
    use std::sync::LazyLock;

    use serde_json::{json, Value};

    use super::call_grammar;
    use crate::constraint::{Constraint, Grammars};
    use crate::text::{ParsedCall, ReplyFormat, ReplyParser, ReplyPart, Tokenizer, ToolSyntax};

    pub(crate) fn format(template: &str) -> ReplyFormat {
        ReplyFormat::detect(Some(template))
    }

    /// The parts of `text` streamed in pieces of `step` bytes (on character boundaries), with
    /// neighbouring parts of one kind joined.
    pub(crate) fn parse(parser: &mut ReplyParser, text: &str, step: usize) -> Vec<ReplyPart> {
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
        match (parts.last_mut(), part) {
            (Some(ReplyPart::Content(last)), ReplyPart::Content(t)) | (Some(ReplyPart::Reasoning(last)), ReplyPart::Reasoning(t)) => {
                last.push_str(&t)
            }
            (_, part) => parts.push(part),
        }
    }

    /// The parser tests' one tool.
    pub(crate) fn tools() -> Option<Vec<Value>> {
        Some(vec![
            json!({"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}),
        ])
    }

    pub(crate) fn weather(city: &str, days: Option<i64>) -> ReplyPart {
        let mut arguments = json!({ "city": city });
        if let Some(d) = days {
            arguments["days"] = json!(d);
        }
        ReplyPart::ToolCall(ParsedCall { name: "get_weather".into(), arguments })
    }

    pub(crate) fn weather_args(arguments: Value) -> ReplyPart {
        ReplyPart::ToolCall(ParsedCall { name: "get_weather".into(), arguments })
    }

    pub(crate) fn every_step(format: ReplyFormat, in_reasoning: bool, tools: Option<Vec<Value>>, text: &str, expected: &[ReplyPart]) {
        for step in [1, 2, 3, 5, 7, 64, 10_000] {
            let mut parser = ReplyParser::new(format, in_reasoning, tools.clone());
            assert_eq!(parse(&mut parser, text, step), expected, "in pieces of {step}: {text:?}");
        }
    }

    const TINY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/fixtures/tiny");

    fn weather_tool() -> Value {
        json!({"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "minLength": 1},
            "days": {"type": "integer", "minimum": 1, "maximum": 16},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
            "required": ["city"]}}})
    }

    fn search_tool() -> Value {
        json!({"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
            "query": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
            "filters": {"type": "object", "properties": {"site": {"type": "string"}, "max": {"type": "number"}}, "required": ["site"]},
            "exact": {"type": "boolean"}},
            "required": ["query", "exact"]}}})
    }

    /// The grammar tests' tools.
    pub(crate) fn grammar_tools() -> Vec<Value> {
        vec![weather_tool(), search_tool()]
    }

    pub(crate) fn call(name: &str, arguments: Value) -> ParsedCall {
        ParsedCall { name: name.into(), arguments }
    }

    /// Texts a grammar admits, and how they read; texts it refuses.
    pub(crate) struct GrammarCases {
        pub admitted: Vec<(String, ParsedCall)>,
        pub refused: Vec<String>,
    }

    impl GrammarCases {
        pub(crate) fn new(admitted: Vec<(&str, ParsedCall)>, refused: Vec<&str>) -> Self {
            Self {
                admitted: admitted.into_iter().map(|(t, c)| (t.to_string(), c)).collect(),
                refused: refused.into_iter().map(str::to_string).collect(),
            }
        }
    }

    /// A vocabulary, its grammars, and its end-of-reply id.
    pub(crate) struct Vocabulary {
        tokenizer: Tokenizer,
        grammars: Grammars,
        eos: u32,
        /// The markup it has as single tokens.
        pub markup_tokens: Vec<(&'static str, u32)>,
    }

    impl Vocabulary {
        fn new(tokenizer: Tokenizer, markup: &[&'static str]) -> Self {
            let eos = tokenizer.eos_id().expect("an EOS id");
            let grammars = Grammars::new(&tokenizer, tokenizer.vocab_size(), &[eos]).unwrap();
            let special = crate::constraint::special_ids(&tokenizer);
            let markup_tokens =
                markup.iter().filter_map(|&m| Some((m, tokenizer.token_to_id(m).filter(|id| special.contains(id))?))).collect();
            Self { tokenizer, grammars, eos, markup_tokens }
        }

        fn tiny(name: &str) -> Self {
            Self::new(Tokenizer::from_hf_folder(format!("{TINY}/{name}")).unwrap(), &[])
        }

        /// The tiny checkpoint's vocabulary with `markup` added as tokens (special ones as
        /// released vocabularies have them).
        fn with_markup(name: &str, markup: &[&'static str]) -> Self {
            let folder = tempfile::tempdir().unwrap();
            let folder = folder.path();
            for file in ["tokenizer.json", "tokenizer_config.json"] {
                std::fs::copy(format!("{TINY}/{name}/{file}"), folder.join(file)).unwrap();
            }
            let path = folder.join("tokenizer.json");
            let mut json: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let next = json["model"]["vocab"].as_object().unwrap().len() + json["added_tokens"].as_array().unwrap().len();
            for (i, token) in markup.iter().enumerate() {
                json["added_tokens"].as_array_mut().unwrap().push(json!({"id": next + i, "content": token, "single_word": false,
                    "lstrip": false, "rstrip": false, "normalized": false, "special": !token.starts_with("<tool_call>") && !token.starts_with("</")}));
            }
            std::fs::write(&path, json.to_string()).unwrap();
            let tokenizer = Tokenizer::from_hf_folder(folder).unwrap();
            for token in markup {
                assert!(tokenizer.token_to_id(token).is_some(), "{token} is a token");
            }
            Self::new(tokenizer, markup)
        }

        pub(crate) fn grammar(&self, syntax: ToolSyntax, tools: &[Value]) -> String {
            call_grammar(syntax, tools, &self.markup_tokens).unwrap_or_else(|| panic!("a grammar for {syntax:?}"))
        }

        /// Whether the grammar admits `text` whole, token by token as the tokenizer splits it.
        fn admits(&self, grammar: &str, text: &str) -> bool {
            let mut guide = self.grammars.guide(&Constraint::Lark(grammar.to_string())).unwrap_or_else(|e| panic!("{e}\n{grammar}"));
            for id in self.tokenizer.encode(text, false).unwrap() {
                match guide.mask() {
                    Ok(mask) if mask.allows(id) => guide.consume(id).unwrap(),
                    _ => return false,
                }
            }
            guide.finished() || guide.mask().is_ok_and(|m| m.allows(self.eos))
        }
    }

    /// Made once for all the formats' tests (a vocabulary's grammars take a while to build).
    pub(crate) static QWEN: LazyLock<Vocabulary> = LazyLock::new(|| Vocabulary::tiny("qwen3_5"));
    pub(crate) static GEMMA: LazyLock<Vocabulary> = LazyLock::new(|| Vocabulary::tiny("gemma4"));
    /// Qwen's vocabulary with its call tags as tokens.
    pub(crate) static QWEN_MARKUP: LazyLock<Vocabulary> =
        LazyLock::new(|| Vocabulary::with_markup("qwen3_5", &["<tool_call>", "</tool_call>"]));
    /// Gemma's vocabulary with its call markup as tokens.
    pub(crate) static GEMMA_MARKUP: LazyLock<Vocabulary> =
        LazyLock::new(|| Vocabulary::with_markup("gemma4", &["<|tool_call>", "<tool_call|>", super::gemma4::STRING]));

    /// The parser reads `text` as exactly `expected`.
    fn reads_as(syntax: ToolSyntax, text: &str, expected: &ParsedCall) {
        let format = ReplyFormat { reasoning: None, tools: syntax };
        let mut parser = ReplyParser::new(format, false, Some(grammar_tools()));
        let mut parts = parser.push(text);
        parts.extend(parser.finish());
        assert_eq!(parts, [ReplyPart::ToolCall(expected.clone())], "{text:?}");
    }

    /// The grammar of `syntax` under `vocabulary` admits the admitted cases, which the parser
    /// reads as given, and refuses the refused ones.
    pub(crate) fn admits_and_refuses(vocabulary: &Vocabulary, syntax: ToolSyntax, cases: &GrammarCases) {
        let grammar = vocabulary.grammar(syntax, &grammar_tools());
        for (text, expected) in &cases.admitted {
            assert!(vocabulary.admits(&grammar, text), "{syntax:?} refuses {text:?}\n{grammar}");
            reads_as(syntax, text, expected);
        }
        for text in &cases.refused {
            assert!(!vocabulary.admits(&grammar, text), "{syntax:?} admits {text:?}\n{grammar}");
        }
    }

    /// Random replies under the grammar of `syntax` (leaning towards the tokens that close what is
    /// open, so that they end): each reads back as one call whose arguments fit the schema.
    pub(crate) fn random_replies_read_back(vocabulary: &Vocabulary, syntax: ToolSyntax) {
        let grammar = vocabulary.grammar(syntax, &grammar_tools());
        let mut finished = 0;
        for seed in 1..=20u64 {
            let Some(text) = random_reply(vocabulary, &grammar, seed) else { continue };
            finished += 1;
            let format = ReplyFormat { reasoning: None, tools: syntax };
            let mut parser = ReplyParser::new(format, false, Some(grammar_tools()));
            let mut parts = parser.push(&text);
            parts.extend(parser.finish());
            let [ReplyPart::ToolCall(call)] = parts.as_slice() else { panic!("{syntax:?}: {text:?} reads as {parts:?}") };
            fits(call).unwrap_or_else(|why| panic!("{syntax:?}: {text:?} reads as {call:?}: {why}"));
        }
        assert!(finished >= 10, "{syntax:?}: only {finished} of 20 random replies ended");
    }

    /// A reply under `grammar`, its tokens picked at random; `None` when it runs long. Free
    /// text would rarely end by chance, so most picks go to the allowed tokens that carry on
    /// furthest with some closing markup.
    fn random_reply(vocabulary: &Vocabulary, grammar: &str, seed: u64) -> Option<String> {
        let closers = ["\n</parameter>\n", "</function>\n", "<|\"|>", "<tool_call|>", "</tool_call>", "}", "]", ",", "\""];
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let pieces: Vec<String> =
            (0..vocabulary.tokenizer.vocab_size() as u32).map(|id| vocabulary.tokenizer.decode(&[id], false).unwrap_or_default()).collect();
        let mut guide = vocabulary.grammars.guide(&Constraint::Lark(grammar.to_string())).unwrap();
        let mut ids = Vec::new();
        let mut text = String::new();
        for _ in 0..400 {
            if guide.finished() {
                return Some(text);
            }
            let mask = guide.mask().unwrap();
            if mask.allows(vocabulary.eos) {
                return Some(text);
            }
            // How far a token goes into a closer that the text so far may have begun.
            let reach = |piece: &str| {
                closers
                    .iter()
                    .flat_map(|c| (0..c.len()).filter(|&k| c.is_char_boundary(k) && text.ends_with(&c[..k])).map(move |k| (c, k)))
                    .filter(|(c, k)| !piece.is_empty() && c[*k..].starts_with(piece))
                    .map(|(_, k)| k + piece.len())
                    .max()
                    .unwrap_or(0)
            };
            let allowed = mask.allowed();
            let scored: Vec<(u32, usize)> =
                allowed.iter().map(|&id| (id, reach(pieces.get(id as usize).map_or("", String::as_str)))).collect();
            let best = scored.iter().map(|s| s.1).max().unwrap_or(0);
            let closing: Vec<u32> = scored.iter().filter(|s| best > 0 && s.1 == best).map(|s| s.0).collect();
            let pool = if !closing.is_empty() && next() % 5 != 0 { &closing } else { &allowed };
            let id = pool[(next() % pool.len() as u64) as usize];
            guide.consume(id).unwrap();
            ids.push(id);
            text = vocabulary.tokenizer.decode(&ids, false).unwrap();
        }
        None
    }

    /// Whether a call's arguments are valid against `grammar_tools()`'s schemas.
    fn fits(call: &ParsedCall) -> Result<(), String> {
        let arguments = call.arguments.as_object().ok_or("not an object")?;
        let (required, kinds): (&[&str], &[(&str, &str)]) = match call.name.as_str() {
            "get_weather" => (&["city"], &[("city", "string"), ("days", "integer"), ("unit", "unit")]),
            "search" => (&["query", "exact"], &[("query", "string"), ("tags", "tags"), ("filters", "filters"), ("exact", "boolean")]),
            other => return Err(format!("no tool {other}")),
        };
        for key in required {
            arguments.get(*key).ok_or(format!("{key} is missing"))?;
        }
        for (key, value) in arguments {
            // Keys the schema does not list are allowed (it does not forbid them).
            let Some(&(_, kind)) = kinds.iter().find(|(k, _)| k == key) else { continue };
            let ok = match kind {
                "string" => value.as_str().is_some_and(|s| key != "city" || !s.is_empty()),
                "integer" => value.as_i64().is_some_and(|n| (1..=16).contains(&n)),
                "unit" => value == "celsius" || value == "fahrenheit",
                "boolean" => value.is_boolean(),
                "tags" => value.as_array().is_some_and(|t| t.len() <= 3 && t.iter().all(Value::is_string)),
                // Other keys are allowed: the schema does not forbid them.
                _ => value
                    .as_object()
                    .is_some_and(|f| f.get("site").is_some_and(Value::is_string) && f.get("max").is_none_or(Value::is_number)),
            };
            if !ok {
                return Err(format!("{key} = {value} does not fit"));
            }
        }
        Ok(())
    }
}
