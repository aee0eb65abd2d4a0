//! Mistral: `[TOOL_CALLS]name[ARGS]{...}` (with `[CALL_ID]id` before `[ARGS]` in some
//! versions), or `[TOOL_CALLS][{"name": ..., "arguments": {...}}]`. Its grammar is the first,
//! the arguments JSON under the schema.

use serde_json::Value;

use super::lark::{each_tool, literal, Lark};
use super::{call, json_call, whole, CallFormat, ParsedCall};

pub(super) struct Mistral;

impl CallFormat for Mistral {
    fn written_by(&self, template: &str) -> bool {
        template.contains("[TOOL_CALLS]")
    }

    fn call_markers(&self) -> (&'static str, Option<&'static str>) {
        ("[TOOL_CALLS]", None)
    }

    fn markup(&self) -> Vec<&'static str> {
        vec!["[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"]
    }

    fn any_call_opening(&self) -> &'static str {
        "[TOOL_CALLS]"
    }

    fn call_opening(&self, name: &str) -> String {
        format!("[TOOL_CALLS]{name}[ARGS]")
    }

    fn parse_calls<'a>(&self, body: &'a str, _tools: &[Value]) -> Option<(Vec<ParsedCall>, &'a str)> {
        let body = body.trim();
        if body.starts_with('[') {
            let list: Vec<Value> = serde_json::from_str(body).ok()?;
            return whole(list.iter().map(json_call).collect());
        }
        let (head, arguments) = body.split_once("[ARGS]")?;
        let name = head.split_once("[CALL_ID]").map_or(head, |(name, _)| name).trim();
        whole(call(name, serde_json::from_str(arguments.trim()).ok()?))
    }

    fn call_grammar(&self, lark: &mut Lark, tools: &[Value]) -> Option<String> {
        let calls = each_tool(tools, |name, schema| {
            let arguments = lark.json(schema.clone());
            Some(format!("{} {} {arguments}", literal(name), lark.markup("[ARGS]")))
        })?;
        Some(format!("{} ({calls})", lark.markup("[TOOL_CALLS]")))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{
        admits_and_refuses, call, every_step, format, random_replies_read_back, tools, weather, GrammarCases, QWEN,
    };
    use crate::text::ToolSyntax;

    #[test]
    fn mistral_calls_parse() {
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
    }

    #[test]
    fn the_opening_and_the_arguments_read_as_the_call() {
        let mistral = format("[TOOL_CALLS] [ARGS]");
        assert_eq!(mistral.tools, ToolSyntax::Mistral);
        let text = format!("{}{{\"city\": \"Paris\"}}", mistral.call_opening("get_weather"));
        every_step(mistral, false, tools(), &text, &[weather("Paris", None)]);
    }

    fn cases() -> GrammarCases {
        GrammarCases::new(
            vec![
                ("[TOOL_CALLS]get_weather[ARGS]{\"city\":\"Paris\"}", call("get_weather", json!({"city": "Paris"}))),
                ("[TOOL_CALLS]search[ARGS]{\"query\":\"q\",\"exact\":false}", call("search", json!({"query": "q", "exact": false}))),
            ],
            vec![
                "[TOOL_CALLS]get_weather[ARGS]{\"town\":\"Paris\"}",
                "[TOOL_CALLS]get_time[ARGS]{}",
                "[TOOL_CALLS][{\"name\":\"get_weather\"}]",
            ],
        )
    }

    #[test]
    fn the_grammar_admits_the_calls_the_parser_reads_and_refuses_the_rest() {
        admits_and_refuses(&QWEN, ToolSyntax::Mistral, &cases());
    }

    #[test]
    fn the_parser_reads_every_call_the_grammar_lets_a_model_write() {
        random_replies_read_back(&QWEN, ToolSyntax::Mistral);
    }
}
