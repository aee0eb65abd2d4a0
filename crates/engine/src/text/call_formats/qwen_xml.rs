//! Qwen's XML (Qwen3.5, Qwen3-Coder):
//! `<tool_call>\n<function=name>\n<parameter=key>\nvalue\n</parameter>\n</function>\n</tool_call>`.
//!
//! A value is text or JSON by its parameter's schema (`value_is_text`), read and written by the
//! same rule. The grammar writes one `<parameter=key>` per argument in the schema's order
//! (required ones always, optional ones maybe); a text value is raw text without
//! `</parameter>` or `</tool_call>` in it (the parser ends a value, and the block, at the
//! first); any other value is compact JSON under its schema.

use serde_json::{Map, Value};

use super::lark::{each_tool, length_bounds, literal, required, string_choices, unsupported, Lark};
use super::{call, python_word, whole, CallFormat, ParsedCall};

pub(super) struct QwenXml;

impl CallFormat for QwenXml {
    fn written_by(&self, template: &str) -> bool {
        template.contains("<function=")
    }

    fn call_markers(&self) -> (&'static str, Option<&'static str>) {
        ("<tool_call>", Some("</tool_call>"))
    }

    fn any_call_opening(&self) -> &'static str {
        "<tool_call>\n<function="
    }

    fn call_opening(&self, name: &str) -> String {
        format!("<tool_call>\n<function={name}>\n")
    }

    fn parse_calls<'a>(&self, body: &'a str, tools: &[Value]) -> Option<(Vec<ParsedCall>, &'a str)> {
        whole(xml_call(body.trim(), tools).map(|c| vec![c]))
    }

    /// The XML reads leniently (a value that is not JSON is text): only a body its template
    /// would have ended counts.
    fn closes(&self, body: &str) -> bool {
        body.trim_end().ends_with("</function>")
    }

    fn call_grammar(&self, lark: &mut Lark, tools: &[Value]) -> Option<String> {
        let calls = each_tool(tools, |name, schema| grammar_call(lark, name, schema))?;
        Some(format!("{} \"\\n\" ({calls}) {}", lark.markup("<tool_call>"), lark.markup("</tool_call>")))
    }
}

/// `<function=name><parameter=p>value</parameter>...</function>`. Values are text unless the
/// tool's schema gives the parameter another type (`value_is_text`), as Qwen's own parsers
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
        let text = value_is_text(schema);
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

/// Whether the XML carries a parameter's value as plain text: a string parameter, or one its
/// tool does not describe (Qwen's parsers read those as strings), or one whose only values are
/// strings. Others are JSON. The grammar writes values by the same rule.
fn value_is_text(schema: Option<&Value>) -> bool {
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

/// The grammar of one call of `name`.
fn grammar_call(lark: &mut Lark, name: &str, schema: &Value) -> Option<String> {
    if unsupported(schema) {
        return None;
    }
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let required = required(schema);
    let mut parts = vec![literal(&format!("<function={name}>\n"))];
    for (key, property) in properties {
        // The parser reads a key up to its first `>`.
        if key.is_empty() || key.contains(['<', '>', '\n']) {
            return None;
        }
        let value = grammar_value(lark, property)?;
        let parameter = lark.rule(format!("{} {value}", literal(&format!("<parameter={key}>\n"))));
        parts.push(if required.contains(&key.as_str()) { parameter } else { format!("{parameter}?") });
    }
    parts.push(literal("</function>\n"));
    Some(format!("({})", parts.join(" ")))
}

/// A parameter's value, through the closing `\n</parameter>\n`.
fn grammar_value(lark: &mut Lark, schema: &Value) -> Option<String> {
    let close = literal("\n</parameter>\n");
    if !value_is_text(Some(schema)) {
        if unsupported(schema) {
            return None;
        }
        let value = lark.json(schema.clone());
        return Some(format!("{value} {close}"));
    }
    if let Some(choices) = string_choices(schema) {
        let choices: Vec<String> = choices.iter().map(|c| literal(c)).collect();
        return Some(format!("({}) {close}", choices.join(" | ")));
    }
    if schema.get("pattern").is_some() {
        return None;
    }
    // One terminal through `</parameter>`: the text, then the first `</parameter>`, with
    // nothing after it (a terminal followed by a literal it could also begin would be read
    // greedily into the terminal).
    let text = lark.terminal(format!(
        "/(?s:.{})\\n<\\/parameter>/ & ~/(?s:.*)<\\/parameter>(?s:.+)/ & ~/(?s:.*)<\\/tool_call>(?s:.*)/",
        length_bounds(schema)
    ));
    Some(format!("{text} \"\\n\""))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{
        admits_and_refuses, call, every_step, format, random_replies_read_back, tools, weather, GrammarCases, QWEN, QWEN_MARKUP,
    };
    use crate::text::{ParsedCall, ReplyPart, ToolSyntax};

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
    fn a_closing_marker_inside_a_string_of_the_arguments_does_not_end_the_call() {
        let tools = Some(vec![json!({"name": "f", "parameters": {"properties": {"o": {"type": "object"}}}})]);
        let text =
            "<tool_call>\n<function=f>\n<parameter=o>\n{\"s\": \"</parameter></tool_call>\"}\n</parameter>\n</function>\n</tool_call>";
        let expected = ParsedCall { name: "f".into(), arguments: json!({"o": {"s": "</parameter></tool_call>"}}) };
        every_step(format("<function="), false, tools, text, &[ReplyPart::ToolCall(expected)]);
    }

    #[test]
    fn the_opening_and_the_arguments_read_as_the_call() {
        let qwen = format("<function=");
        assert_eq!(qwen.tools, ToolSyntax::QwenXml);
        let text = format!("{}<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>", qwen.call_opening("get_weather"));
        every_step(qwen, false, tools(), &text, &[weather("Paris", None)]);
    }

    fn cases() -> GrammarCases {
        let paris = || call("get_weather", json!({"city": "Paris"}));
        GrammarCases::new(
            vec![
                ("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>", paris()),
                (
                    "<tool_call>\n<function=get_weather>\n<parameter=city>\nNew York,\nNY\n\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=unit>\ncelsius\n</parameter>\n</function>\n</tool_call>",
                    call("get_weather", json!({"city": "New York,\nNY\n", "days": 3, "unit": "celsius"})),
                ),
                (
                    "<tool_call>\n<function=search>\n<parameter=query>\n{\"not\": \"json\"} & <b>\n</parameter>\n<parameter=tags>\n[\"a\",\"b\"]\n</parameter>\n<parameter=filters>\n{\"site\":\"x.org\",\"max\":2.5}\n</parameter>\n<parameter=exact>\ntrue\n</parameter>\n</function>\n</tool_call>",
                    call("search", json!({"query": "{\"not\": \"json\"} & <b>", "tags": ["a", "b"], "filters": {"site": "x.org", "max": 2.5}, "exact": true})),
                ),
            ],
            vec![
                // No city; an empty one; a value past its schema; the parser's end of a value inside one.
                "<tool_call>\n<function=get_weather>\n</function>\n</tool_call>",
                "<tool_call>\n<function=get_weather>\n<parameter=city>\n\n</parameter>\n</function>\n</tool_call>",
                "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n30\n</parameter>\n</function>\n</tool_call>",
                "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=unit>\nkelvin\n</parameter>\n</function>\n</tool_call>",
                "<tool_call>\n<function=get_weather>\n<parameter=city>\na</parameter>b\n</parameter>\n</function>\n</tool_call>",
                "<tool_call>\n<function=get_weather>\n<parameter=city>\na</tool_call>\n</parameter>\n</function>\n</tool_call>",
                "<tool_call>\n<function=get_weather>\n<parameter=town>\nParis\n</parameter>\n</function>\n</tool_call>",
                "<tool_call>\n<function=search>\n<parameter=query>\nq\n</parameter>\n<parameter=exact>\nTrue\n</parameter>\n</function>\n</tool_call>",
                "<tool_call>\n<function=get_time>\n</function>\n</tool_call>",
            ],
        )
    }

    #[test]
    fn the_grammar_admits_the_calls_the_parser_reads_and_refuses_the_rest() {
        admits_and_refuses(&QWEN, ToolSyntax::QwenXml, &cases());
    }

    #[test]
    fn markup_the_vocabulary_has_as_tokens_is_named_by_id() {
        assert_eq!(QWEN_MARKUP.markup_tokens.len(), 2);
        let grammar = QWEN_MARKUP.grammar(ToolSyntax::QwenXml, &super::super::testing::grammar_tools());
        assert!(grammar.starts_with(&format!("start: <[{}]>", QWEN_MARKUP.markup_tokens[0].1)), "{grammar}");
        admits_and_refuses(&QWEN_MARKUP, ToolSyntax::QwenXml, &cases());
    }

    #[test]
    fn the_parser_reads_every_call_the_grammar_lets_a_model_write() {
        random_replies_read_back(&QWEN, ToolSyntax::QwenXml);
    }
}
