//! Hermes: `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>` (Qwen2.5, Qwen3,
//! Hermes; and what the fallback prompt teaches models whose template has no tools). Its
//! grammar is the JSON under the schema (`%json`) between the tags.

use serde_json::Value;

use super::lark::{json_call_schema, Lark};
use super::{json_call, CallFormat, ParsedCall};

pub(super) struct Hermes;

impl CallFormat for Hermes {
    fn written_by(&self, template: &str) -> bool {
        template.contains("<tool_call>")
    }

    fn call_markers(&self) -> (&'static str, Option<&'static str>) {
        ("<tool_call>", Some("</tool_call>"))
    }

    fn any_call_opening(&self) -> &'static str {
        "<tool_call>\n{\"name\": \""
    }

    fn call_opening(&self, name: &str) -> String {
        let quoted = Value::from(name).to_string();
        format!("<tool_call>\n{{\"name\": {quoted}, \"arguments\": ")
    }

    fn parse_calls<'a>(&self, body: &'a str, _tools: &[Value]) -> Option<(Vec<ParsedCall>, &'a str)> {
        // A call cut short of its closing tag (a stop string, the end of the reply) may have
        // text after its JSON.
        let body = body.trim();
        let mut values = serde_json::Deserializer::from_str(body).into_iter::<Value>();
        let call = json_call(&values.next()?.ok()?)?;
        Some((vec![call], &body[values.byte_offset()..]))
    }

    fn call_grammar(&self, lark: &mut Lark, tools: &[Value]) -> Option<String> {
        let call = lark.json(json_call_schema(tools, "arguments"));
        Some(format!("{} \"\\n\" {call} \"\\n\" {}", lark.markup("<tool_call>"), lark.markup("</tool_call>")))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{
        admits_and_refuses, call, every_step, format, random_replies_read_back, tools, weather, GrammarCases, QWEN, QWEN_MARKUP,
    };
    use crate::text::{ReplyPart, ToolSyntax};

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
    fn a_closing_marker_inside_a_string_of_the_arguments_does_not_end_the_call() {
        let hermes = format("<tool_call>");
        let text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"a</tool_call>b\"}}\n</tool_call>";
        every_step(hermes, false, tools(), text, &[weather("a</tool_call>b", None)]);
    }

    #[test]
    fn the_opening_and_the_arguments_read_as_the_call() {
        let hermes = format("<tool_call>");
        assert_eq!(hermes.tools, ToolSyntax::Hermes);
        let text = format!("{}{{\"city\": \"Paris\"}}}}\n</tool_call>", hermes.call_opening("get_weather"));
        every_step(hermes, false, tools(), &text, &[weather("Paris", None)]);
        // A required call of any tool: the model writes the name.
        let text = format!("{}get_weather\", \"arguments\": {{\"city\": \"Paris\"}}}}", hermes.any_call_opening());
        every_step(hermes, false, tools(), &text, &[weather("Paris", None)]);
        // Cut at its closing tag by a stop string, with text after the JSON: the call, then the text.
        assert_eq!(hermes.call_close(), Some("</tool_call>"));
        let text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}} I hope";
        every_step(hermes, false, tools(), text, &[weather("Paris", None), ReplyPart::Content("I hope".into())]);
    }

    fn cases() -> GrammarCases {
        GrammarCases::new(
            vec![(
                "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}\n</tool_call>",
                call("get_weather", json!({"city": "Paris"})),
            )],
            vec!["<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{}}\n</tool_call>"],
        )
    }

    #[test]
    fn the_grammar_admits_the_calls_the_parser_reads_and_refuses_the_rest() {
        admits_and_refuses(&QWEN, ToolSyntax::Hermes, &cases());
        // With its tags as tokens, named by id.
        admits_and_refuses(&QWEN_MARKUP, ToolSyntax::Hermes, &cases());
    }

    #[test]
    fn the_parser_reads_every_call_the_grammar_lets_a_model_write() {
        random_replies_read_back(&QWEN, ToolSyntax::Hermes);
    }
}
