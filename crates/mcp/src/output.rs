//! A tool's result as the chat uses it: text and images, with the text cut to a size a model can
//! read.

use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The most text, in bytes, a tool result keeps; the rest is replaced by a note.
pub const MAX_RESULT_TEXT: usize = confab_limits::TOOL_RESULT_BYTES.as_usize();

/// What a tool returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub parts: Vec<OutputPart>,
    /// The tool reported a failure (`isError`); the parts say what happened.
    pub is_error: bool,
    /// Set when the text was cut to [`MAX_RESULT_TEXT`]: the note also ends the last text part.
    pub truncated_note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputPart {
    Text(String),
    Image { mime: String, data: Vec<u8> },
}

impl ToolOutput {
    /// All text parts, joined by blank lines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|part| match part {
                OutputPart::Text(text) => Some(text.as_str()),
                OutputPart::Image { .. } => None,
            })
            .collect();
        texts.join("\n\n")
    }

    /// The images, as (MIME type, bytes).
    pub fn images(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.parts.iter().filter_map(|part| match part {
            OutputPart::Image { mime, data } => Some((mime.as_str(), data.as_slice())),
            OutputPart::Text(_) => None,
        })
    }
}

/// The parts of an MCP result: text, images (decoded), embedded text resources as text; audio,
/// binary resources and links described in a line. Structured content stands in as JSON text
/// when there is no content at all.
pub(crate) fn tool_output(result: CallToolResult) -> ToolOutput {
    let mut parts = Vec::new();
    for block in result.content {
        parts.push(match block {
            ContentBlock::Text(text) => OutputPart::Text(text.text),
            ContentBlock::Image(image) => match base64::engine::general_purpose::STANDARD.decode(image.data.trim()) {
                Ok(data) => OutputPart::Image { mime: image.mime_type, data },
                Err(e) => OutputPart::Text(format!("[The tool returned an image ({}) that is not valid base64: {e}.]", image.mime_type)),
            },
            ContentBlock::Audio(audio) => OutputPart::Text(format!(
                "[The tool returned audio ({}, {}); Confab does not pass audio from tools to the model.]",
                audio.mime_type,
                size_words(audio.data.len() / 4 * 3)
            )),
            ContentBlock::Resource(embedded) => match embedded.resource {
                ResourceContents::TextResourceContents { text, .. } => OutputPart::Text(text),
                ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => {
                    let mime = mime_type.unwrap_or_else(|| "application/octet-stream".to_string());
                    match base64::engine::general_purpose::STANDARD.decode(blob.trim()) {
                        Ok(data) if mime.starts_with("image/") => OutputPart::Image { mime, data },
                        _ => OutputPart::Text(format!(
                            "[The tool returned the resource {uri} ({mime}, {}), which is not shown.]",
                            size_words(blob.len() / 4 * 3)
                        )),
                    }
                }
                other => OutputPart::Text(format!("[The tool returned a resource Confab does not know: {other:?}]")),
            },
            ContentBlock::ResourceLink(link) => {
                let about = link.description.map(|d| format!(": {d}")).unwrap_or_default();
                OutputPart::Text(format!("[Resource link {} ({}){about}]", link.uri, link.name))
            }
            other => OutputPart::Text(format!("[The tool returned content Confab does not know: {other:?}]")),
        });
    }
    if parts.is_empty() {
        if let Some(structured) = result.structured_content {
            parts.push(OutputPart::Text(structured.to_string()));
        }
    }
    let mut output = ToolOutput { parts, is_error: result.is_error.unwrap_or(false), truncated_note: None };
    truncate(&mut output, MAX_RESULT_TEXT);
    output
}

/// Keeps the first `limit` bytes of text across the parts (cut on a character boundary) and
/// appends a note saying how much there was.
fn truncate(output: &mut ToolOutput, limit: usize) {
    let total: usize = output.parts.iter().map(|p| if let OutputPart::Text(t) = p { t.len() } else { 0 }).sum();
    if total <= limit {
        return;
    }
    let note =
        format!("[Confab truncated this result: the tool returned {}; the first {} are shown.]", size_words(total), size_words(limit));
    let mut left = limit;
    let mut last_text = None;
    output.parts.retain_mut(|part| {
        let OutputPart::Text(text) = part else { return true };
        if left == 0 {
            return false;
        }
        if text.len() > left {
            let mut cut = left;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        left -= text.len();
        true
    });
    for (i, part) in output.parts.iter().enumerate() {
        if matches!(part, OutputPart::Text(_)) {
            last_text = Some(i);
        }
    }
    match last_text.map(|i| &mut output.parts[i]) {
        Some(OutputPart::Text(text)) => {
            text.push_str("\n\n");
            text.push_str(&note);
        }
        _ => output.parts.push(OutputPart::Text(note.clone())),
    }
    output.truncated_note = Some(note);
}

/// 512 bytes, 12 KB, 5.2 MB (decimal units, as file managers show).
fn size_words(bytes: usize) -> String {
    match bytes {
        0..1_000 => format!("{bytes} bytes"),
        1_000..1_000_000 => format!("{} KB", (bytes as f64 / 1e3).round()),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(parts: &[&str]) -> ToolOutput {
        ToolOutput { parts: parts.iter().map(|t| OutputPart::Text(t.to_string())).collect(), is_error: false, truncated_note: None }
    }

    #[test]
    fn short_text_is_untouched() {
        let mut output = texts(&["hello", "world"]);
        truncate(&mut output, 10);
        assert_eq!(output, texts(&["hello", "world"]));
    }

    #[test]
    fn long_text_is_cut_on_a_char_boundary_with_a_note() {
        // "é" is two bytes: a cut at 5 bytes would split the third one.
        let mut output = texts(&["éééééé"]);
        truncate(&mut output, 5);
        let note = "[Confab truncated this result: the tool returned 12 bytes; the first 5 bytes are shown.]";
        assert_eq!(output.parts, [OutputPart::Text(format!("éé\n\n{note}"))]);
        assert_eq!(output.truncated_note.as_deref(), Some(note));
        // Across parts: the budget runs on; parts past it go.
        let mut output = texts(&["abc", "defg", "hij"]);
        truncate(&mut output, 5);
        assert_eq!(output.text(), "abc\n\nde\n\n[Confab truncated this result: the tool returned 10 bytes; the first 5 bytes are shown.]");
    }

    #[test]
    fn images_survive_truncation() {
        let mut output = texts(&["abcdef"]);
        output.parts.push(OutputPart::Image { mime: "image/png".into(), data: vec![1, 2] });
        truncate(&mut output, 3);
        assert_eq!(output.images().count(), 1);
        assert!(output.text().starts_with("abc\n\n[Confab truncated"));
    }

    #[test]
    fn sizes_in_words() {
        assert_eq!(size_words(512), "512 bytes");
        assert_eq!(size_words(100_000), "100 KB");
        assert_eq!(size_words(5_200_000), "5.2 MB");
    }
}
