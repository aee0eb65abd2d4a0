//! Tool calls in a streamed reply: OpenAI sends each call in pieces (`delta.tool_calls`, one
//! entry per call with its `index`; the id and name usually come first, the arguments as
//! fragments of JSON text), which are put back together here until the stream ends.

use std::collections::BTreeMap;

use serde_json::Value;

/// A function call the model asked for, as sent back in an assistant message's `tool_calls`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RemoteToolCall {
    /// The provider's id for the call (`call_…`); one made up (`call_<index>`) when it sent none.
    /// A tool message answering the call names it.
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them: JSON text, or not (then the app tells the model).
    pub arguments: String,
}

/// The calls of a reply so far, by their index in the stream.
#[derive(Debug, Default)]
pub(crate) struct ToolCallDeltas {
    calls: BTreeMap<u64, RemoteToolCall>,
}

impl ToolCallDeltas {
    /// Adds one event's `delta.tool_calls` (an array). An entry without an `index` is taken as
    /// the call at its place in the array (servers that send whole calls at once omit it).
    pub(crate) fn add(&mut self, deltas: &Value) -> Result<(), String> {
        let Some(entries) = deltas.as_array() else {
            return Err(format!("`tool_calls` is not an array: {deltas}"));
        };
        for (place, entry) in entries.iter().enumerate() {
            let index = entry["index"].as_u64().unwrap_or(place as u64);
            let call = self.calls.entry(index).or_insert_with(|| RemoteToolCall {
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
            });
            if let Some(id) = entry["id"].as_str().filter(|id| !id.is_empty()) {
                call.id = id.to_string();
            }
            // The name comes whole in one piece; a server repeating it in later pieces sends the
            // same text again, which is not appended.
            if let Some(name) = entry["function"]["name"].as_str().filter(|name| !name.is_empty()) {
                if call.name != name {
                    call.name.push_str(name);
                }
            }
            match &entry["function"]["arguments"] {
                Value::String(piece) => call.arguments.push_str(piece),
                Value::Null => {}
                // A server that sends the arguments as an object rather than JSON text.
                other => call.arguments.push_str(&other.to_string()),
            }
        }
        Ok(())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The calls in index order; ids that never came are made up from the index.
    pub(crate) fn take(&mut self) -> Vec<RemoteToolCall> {
        std::mem::take(&mut self.calls)
            .into_iter()
            .map(|(index, mut call)| {
                if call.id.is_empty() {
                    call.id = format!("call_{index}");
                }
                call
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn summary(calls: &[RemoteToolCall]) -> Vec<(&str, &str, &str)> {
        calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str())).collect()
    }

    #[test]
    fn pieces_of_several_calls_are_put_back_together_by_index() {
        let mut deltas = ToolCallDeltas::default();
        for piece in [
            json!([{ "index": 0, "id": "call_a", "type": "function", "function": { "name": "forecast", "arguments": "" } }]),
            json!([{ "index": 0, "function": { "arguments": "{\"ci" } }]),
            json!([{ "index": 1, "id": "call_b", "type": "function", "function": { "name": "wind", "arguments": "{}" } }]),
            // A server repeating the name (and the id) with later pieces.
            json!([{ "index": 0, "id": "call_a", "function": { "name": "forecast", "arguments": "ty\": \"Zü" } }]),
            json!([{ "index": 0, "function": { "arguments": "rich\"}" } }, { "index": 2, "function": { "name": "no_id" } }]),
        ] {
            deltas.add(&piece).unwrap();
        }
        let calls = deltas.take();
        assert_eq!(summary(&calls), [("call_a", "forecast", "{\"city\": \"Zürich\"}"), ("call_b", "wind", "{}"), ("call_2", "no_id", "")]);
        assert!(deltas.is_empty());
    }

    #[test]
    fn whole_calls_without_index_and_object_arguments_are_taken_as_they_come() {
        let mut deltas = ToolCallDeltas::default();
        let whole = json!([
            { "id": "c1", "function": { "name": "a", "arguments": { "x": 1 } } },
            { "id": "c2", "function": { "name": "b", "arguments": "{\"y\":" } },
        ]);
        deltas.add(&whole).unwrap();
        assert_eq!(summary(&deltas.take()), [("c1", "a", "{\"x\":1}"), ("c2", "b", "{\"y\":")]);
        assert!(deltas.add(&json!({ "index": 0 })).is_err());
    }
}
