//! Tools for templates that do not render them. Many small models' templates (SmolLM2's among
//! them) know nothing of `tools`; for those the definitions go into the system message, and
//! earlier calls and results into the messages' text, in the fallback format the reply parser
//! reads (`ToolSyntax::Hermes`): `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`.

use serde_json::{json, Value};

use super::pyjson::PyJson;

/// The system text that teaches the fallback format.
pub fn fallback_prompt(tools: &[Value]) -> String {
    let mut text = String::from(
        "# Tools\n\nYou may call one or more functions to help with the user's request. \
         The functions are described in JSON Schema within <tools></tools> tags:\n<tools>",
    );
    for tool in tools {
        text.push('\n');
        text.push_str(&dumps(tool));
    }
    text.push_str(
        "\n</tools>\n\nTo call a function, reply with a JSON object holding its name and arguments \
         within <tool_call></tool_call> tags, one per call:\n<tool_call>\n{\"name\": <function-name>, \
         \"arguments\": <arguments-object>}\n</tool_call>",
    );
    text
}

/// One call as the fallback format writes it.
pub fn fallback_call(name: &str, arguments: &Value) -> String {
    format!("<tool_call>\n{}\n</tool_call>", dumps(&json!({ "name": name, "arguments": arguments })))
}

/// The messages (as the template would see them) rewritten for a template without tools: the
/// definitions in the system message, calls in the assistant's text, and each run of tool
/// results as one user message of `<tool_response>` blocks.
pub(crate) fn fallback_messages(messages: Vec<Value>, tools: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len() + 1);
    let mut previous_was_tool = false;
    for mut message in messages {
        let role = message.get("role").and_then(Value::as_str).unwrap_or_default().to_string();
        if role == "tool" {
            let block = format!("<tool_response>\n{}\n</tool_response>", text_of(&message));
            match out.last_mut() {
                Some(last) if previous_was_tool => append_text(last, &block, "\n"),
                _ => out.push(json!({ "role": "user", "content": block })),
            }
            previous_was_tool = true;
            continue;
        }
        previous_was_tool = false;
        if let Some(calls) = message.as_object_mut().and_then(|m| m.remove("tool_calls")) {
            let written: Vec<String> = calls
                .as_array()
                .into_iter()
                .flatten()
                .map(|call| {
                    let function = call.get("function").unwrap_or(call);
                    let name = function.get("name").and_then(Value::as_str).unwrap_or_default();
                    fallback_call(name, function.get("arguments").unwrap_or(&Value::Null))
                })
                .collect();
            append_text(&mut message, &written.join("\n"), "\n");
        }
        if let Some(m) = message.as_object_mut() {
            m.remove("tool_call_id");
            m.remove("reasoning_content");
        }
        out.push(message);
    }
    if !tools.is_empty() {
        let prompt = fallback_prompt(tools);
        match out.first_mut() {
            Some(first) if first.get("role").and_then(Value::as_str) == Some("system") => append_text(first, &prompt, "\n\n"),
            _ => out.insert(0, json!({ "role": "system", "content": prompt })),
        }
    }
    out
}

/// A message's text, whether its content is a string or a list of parts.
fn text_of(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// Adds `text` to the end of a message's content (a string, or a list of parts).
fn append_text(message: &mut Value, text: &str, separator: &str) {
    match message.get_mut("content") {
        Some(Value::String(s)) if !s.is_empty() => {
            s.push_str(separator);
            s.push_str(text);
        }
        Some(Value::Array(parts)) => parts.push(json!({ "type": "text", "text": text })),
        _ => message["content"] = Value::String(text.to_string()),
    }
}

/// JSON as Python's `json.dumps` writes it (what templates write with `tojson`).
fn dumps(value: &Value) -> String {
    let mut json = PyJson::new(None);
    json.ensure_ascii = false;
    json.dumps(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_calls_and_results_are_written_into_the_messages() {
        let tools = vec![json!({"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}})];
        let messages = vec![
            json!({"role": "user", "content": "What time is it?"}),
            json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_time", "arguments": {"zone": "UTC"}}}]}),
            json!({"role": "tool", "content": "12:00", "tool_call_id": "c1"}),
            json!({"role": "tool", "content": "noon", "tool_call_id": "c2"}),
        ];
        let out = fallback_messages(messages, &tools);
        assert_eq!(out.len(), 4);
        assert_eq!(out[0]["role"], "system");
        assert!(out[0]["content"].as_str().unwrap().contains("{\"type\": \"function\", \"function\": {\"name\": \"get_time\""));
        assert_eq!(out[2]["content"], "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"UTC\"}}\n</tool_call>");
        assert!(out[2].get("tool_calls").is_none());
        assert_eq!(
            out[3],
            json!({"role": "user", "content": "<tool_response>\n12:00\n</tool_response>\n<tool_response>\nnoon\n</tool_response>"})
        );
    }

    #[test]
    fn an_existing_system_message_gets_the_tools() {
        let out = fallback_messages(vec![json!({"role": "system", "content": "Be brief."})], &[json!({"name": "f"})]);
        assert_eq!(out.len(), 1);
        assert!(out[0]["content"].as_str().unwrap().starts_with("Be brief.\n\n# Tools"));
    }
}
