//! Llama 3's JSON: a bare `{"name": ..., "parameters": {...}}` as the whole reply, or after
//! `<|python_tag|>`; several calls may be separated by `;`. Its grammar is the bare JSON under
//! the schema (`%json`).

use serde_json::Value;

use super::lark::{json_call_schema, Lark};
use super::{json_call, whole, CallFormat, ParsedCall};

pub(super) struct Llama3Json;

impl CallFormat for Llama3Json {
    fn written_by(&self, template: &str) -> bool {
        template.contains("<|python_tag|>") || (template.contains("<|eot_id|>") && template.contains("tools"))
    }

    fn call_markers(&self) -> (&'static str, Option<&'static str>) {
        ("<|python_tag|>", None)
    }

    fn any_call_opening(&self) -> &'static str {
        "{\"name\": \""
    }

    fn call_opening(&self, name: &str) -> String {
        let quoted = Value::from(name).to_string();
        format!("{{\"name\": {quoted}, \"parameters\": ")
    }

    fn parse_calls<'a>(&self, body: &'a str, _tools: &[Value]) -> Option<(Vec<ParsedCall>, &'a str)> {
        // Several calls may be separated by `;` (read as JSON: one in a string is text).
        let mut calls = Vec::new();
        let mut rest = body.trim();
        loop {
            let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
            calls.push(json_call(&values.next()?.ok()?)?);
            let after = rest[values.byte_offset()..].trim_start();
            if after.is_empty() {
                break whole(Some(calls));
            }
            rest = after.strip_prefix(';')?;
        }
    }

    fn bare_call_start(&self) -> Option<&'static str> {
        Some("{")
    }

    fn call_grammar(&self, lark: &mut Lark, tools: &[Value]) -> Option<String> {
        Some(lark.json(json_call_schema(tools, "parameters")))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{
        admits_and_refuses, call, every_step, format, random_replies_read_back, tools, weather, GrammarCases, QWEN,
    };
    use crate::text::{ReplyPart, ToolSyntax};

    #[test]
    fn llama3_calls_parse() {
        let llama = format("<|eot_id|>{{ tools }}");
        every_step(llama, false, tools(), " {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}", &[weather("Oslo", None)]);
        every_step(llama, false, tools(), "It is {\"a\": 1}", &[ReplyPart::Content("It is {\"a\": 1}".into())]);
        every_step(llama, false, tools(), "{not json", &[ReplyPart::Content("{not json".into())]);
        let two = "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"a; b\"}}; {\"name\": \"get_weather\", \"parameters\": {\"city\": \"c\"}}";
        every_step(llama, false, tools(), two, &[weather("a; b", None), weather("c", None)]);
    }

    #[test]
    fn the_opening_and_the_arguments_read_as_the_call() {
        let llama = format("<|eot_id|> tools");
        assert_eq!(llama.tools, ToolSyntax::Llama3Json);
        let text = format!("{}{{\"city\": \"Paris\"}}}}", llama.call_opening("get_weather"));
        every_step(llama, false, tools(), &text, &[weather("Paris", None)]);
    }

    fn cases() -> GrammarCases {
        GrammarCases::new(
            vec![("{\"name\":\"get_weather\",\"parameters\":{\"city\":\"Paris\"}}", call("get_weather", json!({"city": "Paris"})))],
            vec!["{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}"],
        )
    }

    #[test]
    fn the_grammar_admits_the_calls_the_parser_reads_and_refuses_the_rest() {
        admits_and_refuses(&QWEN, ToolSyntax::Llama3Json, &cases());
    }

    #[test]
    fn the_parser_reads_every_call_the_grammar_lets_a_model_write() {
        random_replies_read_back(&QWEN, ToolSyntax::Llama3Json);
    }
}
