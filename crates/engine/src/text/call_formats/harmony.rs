//! Harmony (gpt-oss): the reply is messages, `<|start|>assistant<|channel|>NAME<|message|>…<|end|>`,
//! whose channel says what they are (`analysis`: reasoning, `final`: the answer, `commentary`
//! addressed `to=functions.NAME`: a call whose body is the arguments as JSON, ended by
//! `<|call|>`). It reads whole replies with its own reader. Its grammar is the call's header,
//! `<|channel|>commentary to=functions.name <|constrain|>json<|message|>`, then the arguments
//! JSON under the schema (the model ends the message with `<|call|>`).

use serde_json::Value;

use super::lark::{each_tool, literal, Lark};
use super::{call, CallFormat, ParsedCall, ReplyReader, WholeReply};
use crate::text::parts::{partial_suffix, push_text, take_through, Markers, ReplyPart};

/// Harmony's markup, each a special token of gpt-oss's vocabulary.
const START: &str = "<|start|>";
const CHANNEL: &str = "<|channel|>";
const MESSAGE: &str = "<|message|>";
const CONSTRAIN: &str = "<|constrain|>";
/// What ends a message: `<|end|>`, a call's `<|call|>`, the reply's `<|return|>` (or the next
/// message's start, where a model leaves the end out).
const ENDS: [&str; 4] = ["<|end|>", "<|call|>", "<|return|>", START];
/// Harmony's reasoning is its `analysis` channel (the reader reads any channel; these name it
/// for code that asks where reasoning opens and closes).
pub(crate) const ANALYSIS: Markers = Markers { open: "<|channel|>analysis<|message|>", close: "<|end|>" };

pub(super) struct Harmony;

impl CallFormat for Harmony {
    fn written_by(&self, template: &str) -> bool {
        template.contains(CHANNEL) && template.contains(MESSAGE)
    }

    /// A call opens with its message's header and ends with the message.
    fn call_markers(&self) -> (&'static str, Option<&'static str>) {
        ("to=functions.", Some("<|call|>"))
    }

    fn markup(&self) -> Vec<&'static str> {
        let mut texts = vec![CHANNEL, MESSAGE, CONSTRAIN];
        texts.extend(ENDS);
        texts
    }

    fn any_call_opening(&self) -> &'static str {
        "<|channel|>commentary to=functions."
    }

    fn call_opening(&self, name: &str) -> String {
        format!("<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>")
    }

    /// Its calls are read by its own reader, name and body apart.
    fn parse_calls<'a>(&self, _body: &'a str, _tools: &[Value]) -> Option<(Vec<ParsedCall>, &'a str)> {
        None
    }

    fn call_grammar(&self, lark: &mut Lark, tools: &[Value]) -> Option<String> {
        let calls = each_tool(tools, |name, schema| {
            let arguments = lark.json(schema.clone());
            let header = format!("{} {}", literal(&format!("commentary to=functions.{name} ")), lark.markup(CONSTRAIN));
            Some(format!("{header} {} {} {arguments}", literal("json"), lark.markup(MESSAGE)))
        })?;
        Some(format!("{} ({calls})", lark.markup(CHANNEL)))
    }

    fn whole_reply(&self) -> Option<WholeReply> {
        Some(WholeReply { reasoning: ANALYSIS, reader: |tools| Box::new(HarmonyReader { tools, message: None }) })
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
struct HarmonyReader {
    /// The request has tools: a message addressed to a function is a call.
    tools: bool,
    /// The message being read; `None` while reading a header.
    message: Option<HarmonyMessage>,
}

impl ReplyReader for HarmonyReader {
    fn advance(&mut self, pending: &mut String, parts: &mut Vec<ReplyPart>, at_end: bool) {
        loop {
            let Some(message) = self.message.clone() else {
                if let Some(at) = pending.find(MESSAGE) {
                    let header = take_through(pending, at, MESSAGE.len());
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
            let end = ENDS.iter().filter_map(|marker| Some((pending.find(marker)?, *marker))).min_by_key(|e| e.0);
            match (message, end) {
                (HarmonyMessage::Call(name), Some((at, marker))) => {
                    // `<|start|>` is the next header's: left for it.
                    let body = take_through(pending, at, if marker == START { 0 } else { marker.len() });
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
                    let text = take_through(pending, at, if marker == START { 0 } else { marker.len() });
                    Self::text(parts, &kind, &text);
                    self.message = None;
                }
                (kind, None) => {
                    let held = if at_end { 0 } else { partial_suffix(pending, ENDS) };
                    let ready: String = pending.drain(..pending.len() - held).collect();
                    Self::text(parts, &kind, &ready);
                    return;
                }
            }
        }
    }
}

impl HarmonyReader {
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
        match word_after(CHANNEL) {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{
        admits_and_refuses, call, every_step, format, parse, random_replies_read_back, tools, weather, weather_args, GrammarCases, QWEN,
    };
    use super::ANALYSIS;
    use crate::text::{ReplyFormat, ReplyParser, ReplyPart, ToolSyntax};

    fn harmony() -> ReplyFormat {
        format("{{- \"<|start|>system<|message|>\" }}{%- if tools %}<|channel|>commentary{% endif %}")
    }

    /// gpt-oss's reasoning then its answer, as it writes them after the prompt's
    /// `<|start|>assistant` (the reply's `<|return|>` is a stop token, left out or not).
    #[test]
    fn harmony_analysis_is_reasoning_and_final_the_answer() {
        let f = harmony();
        assert_eq!((f.tools, f.reasoning), (ToolSyntax::Harmony, Some(ANALYSIS)));
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

    #[test]
    fn the_opening_and_the_arguments_read_as_the_call() {
        let f = format("<|channel|><|message|>");
        assert_eq!(f.tools, ToolSyntax::Harmony);
        let text = format!("{}{{\"city\": \"Paris\"}}<|call|>", f.call_opening("get_weather"));
        every_step(f, false, tools(), &text, &[weather("Paris", None)]);
    }

    fn cases() -> GrammarCases {
        GrammarCases::new(
            vec![
                (
                    "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}",
                    call("get_weather", json!({"city": "Paris"})),
                ),
                (
                    "<|channel|>commentary to=functions.search <|constrain|>json<|message|>{\"query\":\"q\",\"exact\":false}",
                    call("search", json!({"query": "q", "exact": false})),
                ),
            ],
            vec![
                "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"town\":\"Paris\"}",
                "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}",
                "<|channel|>final<|message|>Paris",
            ],
        )
    }

    #[test]
    fn the_grammar_admits_the_calls_the_parser_reads_and_refuses_the_rest() {
        admits_and_refuses(&QWEN, ToolSyntax::Harmony, &cases());
    }

    #[test]
    fn the_parser_reads_every_call_the_grammar_lets_a_model_write() {
        random_replies_read_back(&QWEN, ToolSyntax::Harmony);
    }
}
