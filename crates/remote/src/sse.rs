//! Server-sent events as OpenAI streams them: `data:` lines, a blank line after each event,
//! `:` comments (keep-alives), and `data: [DONE]` at the end. Bytes arrive in arbitrary pieces.

#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of a line not yet ended.
    line: Vec<u8>,
    /// The `data:` lines of the event being read.
    data: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseEvent {
    Data(String),
    /// A line that is not valid UTF-8 (the stream is then not an event stream we can read).
    NotText,
}

impl SseDecoder {
    /// Feeds a piece of the body; returns the events it completed.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        for &byte in bytes {
            if byte != b'\n' {
                self.line.push(byte);
                continue;
            }
            let mut line = std::mem::take(&mut self.line);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            match String::from_utf8(line) {
                Ok(line) => self.line_ended(&line, &mut events),
                Err(_) => events.push(SseEvent::NotText),
            }
        }
        events
    }

    /// At the end of the body: an event left without its blank line still counts.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut events = Vec::new();
        if !self.line.is_empty() {
            match String::from_utf8(std::mem::take(&mut self.line)) {
                Ok(line) => self.line_ended(&line, &mut events),
                Err(_) => events.push(SseEvent::NotText),
            }
        }
        self.line_ended("", &mut events);
        events
    }

    fn line_ended(&mut self, line: &str, events: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if !self.data.is_empty() {
                events.push(SseEvent::Data(std::mem::take(&mut self.data).join("\n")));
            }
            return;
        }
        if line.starts_with(':') {
            return; // a comment: keep-alive
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        if field == "data" {
            self.data.push(value.strip_prefix(' ').unwrap_or(value).to_string());
        }
        // `event:`, `id:`, `retry:` carry nothing an OpenAI chat stream needs.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(s: &str) -> SseEvent {
        SseEvent::Data(s.into())
    }

    #[test]
    fn events_split_anywhere_are_put_back_together() {
        let body = b"data: {\"a\":1}\n\n: keep-alive\n\ndata:{\"b\":2}\r\n\r\nevent: x\ndata: [DONE]\n\n";
        let whole = SseDecoder::default().feed(body);
        assert_eq!(whole, [data("{\"a\":1}"), data("{\"b\":2}"), data("[DONE]")]);
        for cut in 0..body.len() {
            let mut decoder = SseDecoder::default();
            let mut events = decoder.feed(&body[..cut]);
            events.extend(decoder.feed(&body[cut..]));
            events.extend(decoder.finish());
            assert_eq!(events, whole, "cut at {cut}");
        }
    }

    #[test]
    fn multi_line_data_joins_and_a_last_event_without_blank_line_counts() {
        let mut decoder = SseDecoder::default();
        assert_eq!(decoder.feed(b"data: a\ndata: b\n\ndata: c"), [data("a\nb")]);
        assert_eq!(decoder.finish(), [data("c")]);
        assert_eq!(SseDecoder::default().feed(b"data: \xff\xfe\n\n"), [SseEvent::NotText]);
    }
}
