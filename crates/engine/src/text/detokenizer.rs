//! `StreamDecoder`: token ids in, one at a time; text out, as soon as it is certain.
//!
//! Decoding each token alone goes wrong two ways: byte-level tokens can carry part of a
//! multi-byte character (an emoji is often 2-4 tokens), and SentencePiece decoders treat a
//! token's leading space differently at the start of a text. So, as Hugging Face's TextStreamer
//! and mlx-lm's detokenizers do, we decode a short window of recent tokens: the text of the
//! window minus the text of its already-emitted part is the new text, and it is emitted only
//! when it does not end in a cut-off character (U+FFFD). The window then slides forward.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::tokenizer::Tokenizer;
use crate::error::Result;

const REPLACEMENT: char = '\u{FFFD}';

pub struct StreamDecoder {
    tokenizer: Tokenizer,
    skip_special: bool,
    /// Special tokens that still give their text (a reply format's markup).
    kept: Arc<BTreeSet<u32>>,
    /// Ids from the start of the window on; older ones are dropped.
    ids: Vec<u32>,
    /// `ids[..read]` has been emitted; `ids[..read]` decodes to `emitted`.
    read: usize,
    emitted_len: usize,
}

impl StreamDecoder {
    /// With `skip_special`, control tokens (`<|im_end|>`, ...) produce no text.
    pub fn new(tokenizer: Tokenizer, skip_special: bool) -> Self {
        Self { tokenizer, skip_special, kept: Arc::default(), ids: Vec::new(), read: 0, emitted_len: 0 }
    }

    /// The same decoder, but these special tokens give their text even when others are skipped.
    pub fn keeping(mut self, kept: Arc<BTreeSet<u32>>) -> Self {
        self.kept = kept;
        self
    }

    /// Adds one token; returns the text it completes, often empty (a partial character, or a
    /// skipped special token), sometimes more than the token's own (the end of a held character).
    pub fn push(&mut self, id: u32) -> Result<String> {
        if self.skip_special && self.kept.contains(&id) {
            // A kept token is whole text of its own: what is held, then the token.
            let mut text = self.finish()?;
            text.push_str(&self.tokenizer.id_to_token(id).unwrap_or_default());
            return Ok(text);
        }
        self.ids.push(id);
        let text = self.tokenizer.decode(&self.ids, self.skip_special)?;
        if text.len() <= self.emitted_len || text.ends_with(REPLACEMENT) {
            return Ok(String::new());
        }
        let Some(new) = text.get(self.emitted_len..) else {
            // The window's text no longer starts with what was emitted (a decoder that rewrites
            // earlier text); wait for more tokens rather than emit something inconsistent.
            return Ok(String::new());
        };
        let new = new.to_string();
        // Slide: the new window starts at the first token not yet emitted before this call.
        self.ids.drain(..self.read);
        self.read = self.ids.len();
        self.emitted_len = self.tokenizer.decode(&self.ids, self.skip_special)?.len();
        Ok(new)
    }

    /// Whatever is held back (a character the generation cut off shows as U+FFFD). Call once at
    /// the end; the decoder is then empty and ready for a new text.
    pub fn finish(&mut self) -> Result<String> {
        let text = self.tokenizer.decode(&self.ids, self.skip_special)?;
        let rest = text.get(self.emitted_len..).unwrap_or_default().to_string();
        self.reset();
        Ok(rest)
    }

    /// Forgets everything held, for a new text.
    pub fn reset(&mut self) {
        self.ids.clear();
        self.read = 0;
        self.emitted_len = 0;
    }

    /// Whether tokens are held that have not produced text yet.
    pub fn is_holding(&self) -> bool {
        self.read < self.ids.len()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::text::gguf_build::fixtures::{tiny_byte_level, tiny_sentencepiece};

    /// Streams `ids` through a decoder; returns every delta, the last one from `finish`.
    fn stream(tokenizer: &Tokenizer, ids: &[u32], skip_special: bool) -> Vec<String> {
        let mut decoder = StreamDecoder::new(tokenizer.clone(), skip_special);
        let mut deltas: Vec<String> = ids.iter().map(|&id| decoder.push(id).unwrap()).collect();
        deltas.push(decoder.finish().unwrap());
        deltas
    }

    #[test]
    fn byte_level_deltas_join_to_the_full_decode_and_never_split_a_character() {
        let tok = tiny_byte_level().build(Path::new("tiny.gguf")).unwrap();
        let texts = ["the 🦀 crab", "  leading spaces", "日本語のテキスト", "é\u{301} combining", "mixed 👩‍👩‍👧 family"];
        for text in texts {
            let ids = tok.encode(text, false).unwrap();
            let deltas = stream(&tok, &ids, false);
            assert_eq!(deltas.concat(), tok.decode(&ids, false).unwrap(), "{text}");
            assert!(deltas.iter().all(|d| !d.contains('\u{FFFD}')), "{text}: {deltas:?}");
        }
    }

    #[test]
    fn an_emoji_arrives_whole_on_its_last_byte() {
        let tok = tiny_byte_level().build(Path::new("tiny.gguf")).unwrap();
        let ids = tok.encode("🦀", false).unwrap();
        assert_eq!(ids.len(), 4, "one token per byte in the tiny vocabulary");
        let mut decoder = StreamDecoder::new(tok, false);
        for &id in &ids[..3] {
            assert_eq!(decoder.push(id).unwrap(), "");
            assert!(decoder.is_holding());
        }
        assert_eq!(decoder.push(ids[3]).unwrap(), "🦀");
        assert!(!decoder.is_holding());
    }

    #[test]
    fn a_cut_off_character_comes_out_at_finish() {
        let tok = tiny_byte_level().build(Path::new("tiny.gguf")).unwrap();
        let ids = tok.encode("a🦀", false).unwrap();
        let deltas = stream(&tok, &ids[..3], false);
        assert_eq!(deltas.concat(), "a\u{FFFD}");
    }

    #[test]
    fn skipped_special_tokens_produce_nothing() {
        let tok = tiny_byte_level().build(Path::new("tiny.gguf")).unwrap();
        let ids = tok.encode("<|im_start|> the<|im_end|>", false).unwrap();
        assert_eq!(stream(&tok, &ids, true).concat(), " the");
        assert_eq!(stream(&tok, &ids, false).concat(), "<|im_start|> the<|im_end|>");
    }

    #[test]
    fn sentencepiece_spaces_are_neither_dropped_nor_doubled() {
        let tok = tiny_sentencepiece().build(Path::new("spm.gguf")).unwrap();
        for text in ["hello world", "hello  hello world", "héllo wörld"] {
            let ids = tok.encode(text, true).unwrap();
            let deltas = stream(&tok, &ids, true);
            assert_eq!(deltas.concat(), text, "{deltas:?}");
            assert_eq!(deltas.concat(), tok.decode(&ids, true).unwrap());
        }
    }

    #[test]
    fn reset_starts_a_new_text() {
        let tok = tiny_sentencepiece().build(Path::new("spm.gguf")).unwrap();
        let ids = tok.encode("hello world", false).unwrap();
        let mut decoder = StreamDecoder::new(tok, false);
        decoder.push(ids[0]).unwrap();
        decoder.reset();
        // The first token of a text loses its SentencePiece prefix space again.
        assert_eq!(decoder.push(ids[0]).unwrap(), "hello");
    }
}
