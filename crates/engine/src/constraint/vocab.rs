//! The vocabulary as llguidance sees it: every token's bytes in a trie (`toktrie`), and a way
//! to tokenize the bytes a grammar forces the way the model's own tokenizer would.
//!
//! Built from our `Tokenizer` (tokenizer.json or a GGUF vocabulary converted to one), so the
//! same code serves every format. A token's bytes come from its spelling in the vocabulary:
//! byte-level BPE spells bytes in GPT-2's alphabet, SentencePiece writes a space as `▁` and
//! bytes as `<0xNN>`. Control tokens are marked special and never match grammar text.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use tokenizers::decoders::DecoderWrapper;
use tokenizers::normalizers::{self, NormalizerWrapper};
use tokenizers::pre_tokenizers::metaspace::PrependScheme;
use tokenizers::pre_tokenizers::{self, PreTokenizerWrapper};
use toktrie::{TokEnv, TokRxInfo, TokTrie, TokenId, TokenizerEnv};

use crate::error::{EngineError, Result};
use crate::text::Tokenizer;

/// How the vocabulary spells a token's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spelling {
    /// GPT-2's byte-to-character table (Llama 3, Qwen, SmolLM2...).
    ByteLevel,
    /// SentencePiece: text with `space` for a space, `<0xNN>` for raw bytes.
    Pieces { space: char },
}

/// The token environment of one model: its trie, and a tokenizer for forced bytes.
struct Vocab {
    trie: TokTrie,
    /// The model's tokenizer without the steps that add a leading space to every text it
    /// encodes (SentencePiece's prefix): forced bytes are a continuation, not a new text.
    continuation: tokenizers::Tokenizer,
}

impl TokenizerEnv for Vocab {
    fn tok_trie(&self) -> &TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, bytes: &[u8]) -> Vec<TokenId> {
        // The trie's greedy walk handles what is not UTF-8; the tokenizer the rest, as the
        // model would have written it (llguidance only forces tokens it agrees with).
        self.trie.tokenize_with_greedy_fallback(bytes, |text| match self.continuation.encode_fast(text, false) {
            Ok(encoding) => encoding.get_ids().to_vec(),
            Err(e) => {
                tracing::warn!("constraint: could not tokenize forced text ({e}); using the trie's greedy tokens");
                self.trie.greedy_tokenize(text.as_bytes())
            }
        })
    }
}

/// Builds the token environment for `tokenizer`, over `vocab_size` ids (the model's logits;
/// ids the tokenizer lacks are marked special, so a grammar never picks them). Every id in
/// `eos_ids` ends a reply where the grammar allows it to end.
pub(super) fn token_env(tokenizer: &Tokenizer, vocab_size: usize, eos_ids: &[u32]) -> Result<TokEnv> {
    let inner = tokenizer.inner();
    let spelling = spelling(inner.get_decoder()).ok_or_else(|| {
        EngineError::invalid(
            "constraint",
            "this model's vocabulary is neither byte-level BPE nor SentencePiece with byte fallback, so constrained decoding cannot map its tokens to bytes",
        )
    })?;
    let words = token_bytes(tokenizer, spelling, vocab_size);
    let eos = eos_ids.iter().copied().filter(|&id| (id as usize) < words.len()).collect::<Vec<_>>();
    let Some(&first_eos) = eos.first() else {
        return Err(EngineError::invalid(
            "constraint",
            "this model declares no end-of-sequence token, so a grammar could never end its reply",
        ));
    };
    let mut info = TokRxInfo::new(words.len() as u32, first_eos);
    info.tok_bos = tokenizer.bos_id();
    info.tok_pad = tokenizer.pad_id();
    info.tok_unk = tokenizer.unk_id();
    let mut trie = TokTrie::from(&info, &words);
    if eos.len() > 1 {
        trie = trie.with_eos_tokens(&eos);
    }
    Ok(Arc::new(Vocab { trie, continuation: continuation(inner) }))
}

fn spelling(decoder: Option<&DecoderWrapper>) -> Option<Spelling> {
    fn walk(d: &DecoderWrapper, byte_level: &mut bool, pieces: &mut bool, space: &mut char) {
        match d {
            DecoderWrapper::ByteLevel(_) => *byte_level = true,
            DecoderWrapper::ByteFallback(_) => *pieces = true,
            DecoderWrapper::Metaspace(m) => {
                *pieces = true;
                *space = m.get_replacement();
            }
            DecoderWrapper::Replace(r) if r.content == " " => {
                // The pattern is private; its serialized form is {"String": "▁"} or {"Regex": ..}.
                let pattern = serde_json::to_value(r).ok().and_then(|v| v["pattern"]["String"].as_str().map(str::to_owned));
                let mut chars = pattern.as_deref().unwrap_or("").chars();
                if let (Some(c), None) = (chars.next(), chars.next()) {
                    *space = c;
                }
            }
            DecoderWrapper::Sequence(seq) => seq.get_decoders().iter().for_each(|d| walk(d, byte_level, pieces, space)),
            _ => {}
        }
    }
    let (mut byte_level, mut pieces, mut space) = (false, false, '▁');
    walk(decoder?, &mut byte_level, &mut pieces, &mut space);
    match (byte_level, pieces) {
        (true, _) => Some(Spelling::ByteLevel),
        (false, true) => Some(Spelling::Pieces { space }),
        (false, false) => None,
    }
}

/// Every id's bytes; special ids get the trie's special marker before their name.
fn token_bytes(tokenizer: &Tokenizer, spelling: Spelling, vocab_size: usize) -> Vec<Vec<u8>> {
    let inner = tokenizer.inner();
    let count = vocab_size.max(tokenizer.vocab_size());
    let special = special_ids(tokenizer);
    let added_text: HashMap<u32, String> =
        inner.get_added_tokens_decoder().into_iter().filter(|(id, _)| !special.contains(id)).map(|(id, t)| (id, t.content)).collect();
    let byte_of_char = gpt2_chars();
    let marked = |name: &str| {
        let mut bytes = Vec::with_capacity(name.len() + 1);
        bytes.push(TokTrie::SPECIAL_TOKEN_MARKER);
        bytes.extend_from_slice(name.as_bytes());
        bytes
    };
    (0..count as u32)
        .map(|id| {
            let Some(name) = tokenizer.id_to_token(id) else {
                // Past the tokenizer (logits padded to a round size): never allowed.
                return marked(&format!("<[{id}]>"));
            };
            if special.contains(&id) {
                return marked(&name);
            }
            if let Some(text) = added_text.get(&id) {
                return text.clone().into_bytes();
            }
            match spelling {
                Spelling::ByteLevel => {
                    let bytes: Option<Vec<u8>> = name.chars().map(|c| byte_of_char.get(&c).copied()).collect();
                    // A spelling outside the alphabet cannot be text: keep it out of grammars.
                    bytes.unwrap_or_else(|| marked(&name))
                }
                Spelling::Pieces { space } => match byte_token(&name) {
                    Some(byte) => vec![byte],
                    None => name.replace(space, " ").into_bytes(),
                },
            }
        })
        .collect()
}

/// The ids grammar text never matches (a grammar names them as tokens, `<[id]>`): the
/// tokenizer's special tokens, and added tokens spelled `<...>`, which are markup (chat roles,
/// `<think>`, `<tool_call>`) even where the vocabulary does not flag them special.
pub(crate) fn special_ids(tokenizer: &Tokenizer) -> BTreeSet<u32> {
    let mut special: BTreeSet<u32> = tokenizer.special_ids().clone();
    for (id, token) in tokenizer.inner().get_added_tokens_decoder() {
        if token.special || (token.content.starts_with('<') && token.content.ends_with('>')) {
            special.insert(id);
        }
    }
    special
}

/// `<0xNN>`: SentencePiece's byte-fallback tokens.
fn byte_token(name: &str) -> Option<u8> {
    let hex = name.strip_prefix("<0x")?.strip_suffix('>')?;
    (hex.len() == 2).then(|| u8::from_str_radix(hex, 16).ok()).flatten()
}

/// GPT-2's table from the characters byte-level BPE spells tokens with to the bytes they stand for.
fn gpt2_chars() -> HashMap<char, u8> {
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let mut next = 0x100u32;
    (0..=255u8)
        .map(|b| {
            if printable(b) {
                (b as char, b)
            } else {
                let c = char::from_u32(next).expect("a valid code point");
                next += 1;
                (c, b)
            }
        })
        .collect()
}

/// A copy of the tokenizer that encodes a continuation: no prepended space (SentencePiece's
/// `Prepend` normalizer, Metaspace's `prepend_scheme`).
fn continuation(inner: &tokenizers::Tokenizer) -> tokenizers::Tokenizer {
    fn normalizer(n: NormalizerWrapper) -> Option<NormalizerWrapper> {
        match n {
            NormalizerWrapper::Prepend(_) => None,
            NormalizerWrapper::Sequence(seq) => {
                let kept: Vec<_> = seq.as_ref().iter().cloned().filter_map(normalizer).collect();
                (!kept.is_empty()).then(|| NormalizerWrapper::Sequence(normalizers::Sequence::new(kept)))
            }
            other => Some(other),
        }
    }
    fn pre_tokenizer(p: PreTokenizerWrapper) -> PreTokenizerWrapper {
        match p {
            PreTokenizerWrapper::Metaspace(mut m) => {
                m.set_prepend_scheme(PrependScheme::Never);
                PreTokenizerWrapper::Metaspace(m)
            }
            PreTokenizerWrapper::Sequence(seq) => PreTokenizerWrapper::Sequence(pre_tokenizers::sequence::Sequence::new(
                seq.as_ref().iter().cloned().map(pre_tokenizer).collect(),
            )),
            other => other,
        }
    }
    let mut copy = inner.clone();
    if let Some(n) = inner.get_normalizer().cloned() {
        copy.with_normalizer(normalizer(n));
    }
    if let Some(p) = inner.get_pre_tokenizer().cloned() {
        copy.with_pre_tokenizer(Some(pre_tokenizer(p)));
    }
    // Post-processing only adds BOS/EOS, which `encode_fast(.., false)` leaves out anyway.
    copy
}

#[cfg(test)]
mod tests {
    use super::{byte_token, gpt2_chars};

    #[test]
    fn gpt2_alphabet_covers_every_byte_once() {
        let table = gpt2_chars();
        assert_eq!(table.len(), 256);
        assert_eq!(table[&'Ġ'], b' ');
        assert_eq!(table[&'Ċ'], b'\n');
        assert_eq!(table[&'a'], b'a');
    }

    #[test]
    fn byte_fallback_tokens_are_read() {
        assert_eq!(byte_token("<0x0A>"), Some(b'\n'));
        assert_eq!(byte_token("<0xZZ>"), None);
        assert_eq!(byte_token("<0x0>"), None);
        assert_eq!(byte_token("hello"), None);
    }
}
