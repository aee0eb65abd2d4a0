//! `StopMatcher`: ends a generation at a stop string, which never reaches the output.
//!
//! Text arrives in deltas, and a stop string can straddle them ("<|us" + "er|>"). So the tail
//! of the text that could still grow into a stop string is held back; it is released when the
//! next delta rules that out, dropped when the stop string completes, and released by `finish`
//! when the generation ends some other way.

use crate::error::{EngineError, Result};

#[derive(Debug, Clone)]
pub struct StopMatcher {
    stops: Vec<String>,
    held: String,
    stopped: Option<usize>,
}

/// What one delta produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StopStep {
    /// Text that is safe to show now.
    pub text: String,
    /// The index (in the list given to `new`) of the stop string that just completed; the
    /// generation should end. Text after the stop string is discarded.
    pub stopped: Option<usize>,
}

impl StopMatcher {
    /// An empty list is fine (everything passes through); an empty stop string is not.
    pub fn new<I, S>(stops: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let stops: Vec<String> = stops.into_iter().map(Into::into).collect();
        if stops.iter().any(String::is_empty) {
            return Err(EngineError::invalid("stop", "a stop string is empty; remove it or give it some text"));
        }
        Ok(Self { stops, held: String::new(), stopped: None })
    }

    pub fn stops(&self) -> &[String] {
        &self.stops
    }

    /// Feeds the next piece of generated text.
    pub fn push(&mut self, delta: &str) -> StopStep {
        if self.stopped.is_some() {
            return StopStep::default();
        }
        self.held.push_str(delta);

        // The earliest stop string wins; at the same place, the one listed first.
        let hit = self.stops.iter().enumerate().filter_map(|(i, stop)| self.held.find(stop.as_str()).map(|at| (at, i))).min();
        if let Some((at, index)) = hit {
            self.held.truncate(at);
            self.stopped = Some(index);
            return StopStep { text: std::mem::take(&mut self.held), stopped: Some(index) };
        }

        let keep = self.stops.iter().map(|stop| partial_suffix(&self.held, stop)).max().unwrap_or(0);
        let text = self.held[..self.held.len() - keep].to_string();
        self.held.drain(..self.held.len() - keep);
        StopStep { text, stopped: None }
    }

    /// The generation ended without a stop string: the held tail is ordinary text after all.
    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.held)
    }

    /// The index of the stop string that ended the generation, if one did.
    pub fn stopped(&self) -> Option<usize> {
        self.stopped
    }

    /// Ready for a new generation with the same stop strings.
    pub fn reset(&mut self) {
        self.held.clear();
        self.stopped = None;
    }
}

/// The length of the longest tail of `text` that is a proper beginning of `stop`.
fn partial_suffix(text: &str, stop: &str) -> usize {
    stop.char_indices().map(|(at, _)| at).skip(1).filter(|&len| text.ends_with(&stop[..len])).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds all deltas, then finishes; returns the output and the stop hit.
    fn run(stops: &[&str], deltas: &[&str]) -> (String, Option<usize>) {
        let mut matcher = StopMatcher::new(stops.iter().copied()).unwrap();
        let mut out = String::new();
        for delta in deltas {
            let step = matcher.push(delta);
            out.push_str(&step.text);
            if let Some(i) = step.stopped {
                return (out, Some(i));
            }
        }
        out.push_str(&matcher.finish());
        (out, None)
    }

    #[test]
    fn no_stops_passes_everything_at_once() {
        let mut matcher = StopMatcher::new(Vec::<String>::new()).unwrap();
        assert_eq!(matcher.push("hello").text, "hello");
        assert_eq!(matcher.finish(), "");
    }

    #[test]
    fn stop_in_one_delta_cuts_it() {
        assert_eq!(run(&["</s>"], &["Hi there</s>and more"]), ("Hi there".into(), Some(0)));
    }

    #[test]
    fn stop_split_across_deltas_is_never_emitted() {
        let deltas = ["Hello", " wor", "ld<", "|us", "er", "|>", "ignored"];
        assert_eq!(run(&["<|user|>"], &deltas), ("Hello world".into(), Some(0)));
    }

    #[test]
    fn held_prefix_is_released_when_it_does_not_complete() {
        let mut matcher = StopMatcher::new(["<|user|>"]).unwrap();
        assert_eq!(matcher.push("a <|u").text, "a ");
        assert_eq!(matcher.push("nicorn").text, "<|unicorn");
        assert_eq!(matcher.finish(), "");
    }

    #[test]
    fn held_prefix_is_released_at_the_end() {
        assert_eq!(run(&["STOP"], &["go ST"]), ("go ST".into(), None));
    }

    #[test]
    fn earliest_stop_wins_then_first_listed() {
        assert_eq!(run(&["bb", "a"], &["xxabb"]), ("xx".into(), Some(1)));
        assert_eq!(run(&["ab", "abc"], &["zabc"]), ("z".into(), Some(0)));
    }

    #[test]
    fn overlapping_prefixes_hold_the_longest() {
        // "aab" could start at the first or the second 'a'.
        assert_eq!(run(&["aab"], &["xa", "a", "a", "b!"]), ("xa".into(), Some(0)));
    }

    #[test]
    fn multibyte_stops_and_text_stay_whole() {
        assert_eq!(run(&["🛑end"], &["héllo 🛑", "en", "d"]), ("héllo ".into(), Some(0)));
        assert_eq!(run(&["日本"], &["日", "曜日本当"]), ("日曜".into(), Some(0)));
    }

    #[test]
    fn after_a_stop_nothing_more_comes_out() {
        let mut matcher = StopMatcher::new(["."]).unwrap();
        assert_eq!(matcher.push("one. two").stopped, Some(0));
        assert_eq!(matcher.push("three"), StopStep::default());
        assert_eq!(matcher.stopped(), Some(0));
        matcher.reset();
        assert_eq!(matcher.push("again").text, "again");
    }

    #[test]
    fn empty_stop_string_is_an_error() {
        let err = StopMatcher::new(["ok", ""]).unwrap_err().to_string();
        assert!(err.contains("stop string is empty"), "{err}");
    }
}
