//! What a reply is read into (its parts, a call read from it, the markers of a block), and the
//! text handling that streaming readers share: `reply.rs` for reasoning and answers, the call
//! formats for their calls.

use serde_json::Value;

/// The texts that open and close a block of the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Markers {
    pub open: &'static str,
    pub close: &'static str,
}

/// A call of a tool, read from the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedCall {
    pub name: String,
    /// A JSON object.
    pub arguments: Value,
}

/// A piece of a reply, in the order the model wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyPart {
    Reasoning(String),
    Content(String),
    ToolCall(ParsedCall),
}

/// The first `at` bytes of `pending`, removed with the `marker` bytes after them.
pub(crate) fn take_through(pending: &mut String, at: usize, marker: usize) -> String {
    let mut taken: String = pending.drain(..at + marker).collect();
    taken.truncate(at);
    taken
}

/// Appends text to the last part when it is of the same kind, so callers get few, long parts.
pub(crate) fn push_text(parts: &mut Vec<ReplyPart>, text: &str, kind: fn(String) -> ReplyPart) {
    match (parts.last_mut(), kind(String::new())) {
        (Some(ReplyPart::Content(last)), ReplyPart::Content(_)) | (Some(ReplyPart::Reasoning(last)), ReplyPart::Reasoning(_)) => {
            last.push_str(text)
        }
        _ => parts.push(kind(text.to_string())),
    }
}

/// The length of the longest end of `text` that begins one of `markers` (to hold back).
pub(crate) fn partial_suffix<'a>(text: &str, markers: impl IntoIterator<Item = &'a str>) -> usize {
    markers
        .into_iter()
        .flat_map(|marker| (1..marker.len()).rev().filter(move |&n| marker.is_char_boundary(n)).map(move |n| &marker[..n]))
        .filter(|prefix| text.ends_with(prefix))
        .map(str::len)
        .max()
        .unwrap_or(0)
}
