//! What the formats' tests share: streaming a reply through the parser in pieces, the tools
//! the parser tests call, and the vocabularies, tools and checks the grammar tests use.

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
        let markup_tokens = markup.iter().filter_map(|&m| Some((m, tokenizer.token_to_id(m).filter(|id| special.contains(id))?))).collect();
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
        let scored: Vec<(u32, usize)> = allowed.iter().map(|&id| (id, reach(pieces.get(id as usize).map_or("", String::as_str)))).collect();
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
            _ => {
                value.as_object().is_some_and(|f| f.get("site").is_some_and(Value::is_string) && f.get("max").is_none_or(Value::is_number))
            }
        };
        if !ok {
            return Err(format!("{key} = {value} does not fit"));
        }
    }
    Ok(())
}
