//! Building a `tokenizers` pipeline from a GGUF vocabulary, the way llama.cpp reads it.
//!
//! - `gpt2`: byte-level BPE. The file's tokens are already spelled in GPT-2's byte alphabet
//!   (`Ġ` for a space) and its merges are given; the split before BPE is named by
//!   `tokenizer.ggml.pre` (see `gguf_pre.rs`).
//! - `llama`: SentencePiece-style BPE over characters with `▁` for spaces and `<0xXX>` byte
//!   tokens as fallback. The file gives scores, not merges; merges are recovered from them as
//!   transformers does (a pair merges with the score of the token it makes).
//! - `gemma4`: Gemma 4's BPE over characters, as transformers' `GemmaTokenizer` (and llama.cpp's
//!   `gemma4` pre-type): every space written `▁` first, no split, the file's merges over the whole
//!   text, `<0xXX>` byte tokens for what no token spells, no space prefix. (llama.cpp also cuts the
//!   text at runs of newlines, which changes nothing unless a merge joins a newline to another
//!   character; we follow the Hugging Face tokenizer.json.)
//!
//! Control tokens (and `<|...|>` tokens the file forgot to mark) become special added tokens, so
//! `<|im_start|>` in text is one id and `decode(.., skip_special = true)` hides it; user-defined
//! tokens (like `<think>`) are matched whole but kept in output.

use std::path::Path;

use tokenizers::decoders::byte_fallback::ByteFallback;
use tokenizers::decoders::fuse::Fuse;
use tokenizers::decoders::sequence::Sequence as DecoderSequence;
use tokenizers::decoders::strip::Strip;
use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::bpe::BPE;
use tokenizers::normalizers::replace::Replace;
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
use tokenizers::pre_tokenizers::sequence::Sequence as PreSequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::processors::PostProcessorWrapper;
use tokenizers::{AddedToken, SplitDelimiterBehavior};

use super::gguf_pre::pre_split;
use super::gguf_vocab::{token_type, GgufVocab};
use super::tokenizer::{Specials, Tokenizer};
use crate::error::{EngineError, Result};

fn tk_err(what: &str) -> impl Fn(tokenizers::Error) -> EngineError + '_ {
    move |e| EngineError::Tokenizer(format!("could not build the GGUF's tokenizer ({what}): {e}"))
}

/// The `tokenizer.ggml.model` values [`GgufVocab::build`] reads.
pub(crate) const VOCABULARY_TYPES: &[&str] = &["gpt2", "llama", "gemma4"];

impl GgufVocab {
    pub fn build(mut self, path: &Path) -> Result<Tokenizer> {
        // A role id outside the vocabulary (some converters write one) is no role at all.
        let n = self.tokens.len();
        for id in [&mut self.bos, &mut self.eos, &mut self.unk, &mut self.pad] {
            *id = id.filter(|&i| (i as usize) < n);
        }
        let (mut inner, add_bos_default) = match self.model.as_str() {
            "gpt2" => self.byte_level()?,
            "llama" => (self.sentencepiece()?, true),
            "gemma4" => (self.spaces_as_metaspace()?, true),
            other => {
                return Err(EngineError::MissingTokenizer {
                    path: path.to_path_buf(),
                    reason: format!(
                        "its vocabulary type `{other}` (tokenizer.ggml.model) is not supported; \
                         supported: {}. Use the model's Hugging Face folder instead",
                        VOCABULARY_TYPES.join(", ")
                    ),
                })
            }
        };
        let add_bos = self.add_bos.unwrap_or(add_bos_default) && self.bos.is_some();
        let add_eos = self.add_eos.unwrap_or(false) && self.eos.is_some();

        let specials = self.special_ids();
        let special_tokens: Vec<AddedToken> = specials
            .iter()
            .filter_map(|&id| self.tokens.get(id as usize))
            .map(|t| AddedToken::from(t.clone(), true).normalized(false))
            .collect();
        inner.add_special_tokens(&special_tokens);
        let user_defined: Vec<AddedToken> = self
            .of_type(token_type::USER_DEFINED)
            .filter(|&id| !specials.contains(&id))
            // `get`: a damaged file may list more types than tokens.
            .filter_map(|id| self.tokens.get(id as usize))
            .map(|t| AddedToken::from(t.clone(), false).normalized(false))
            .collect();
        inner.add_tokens(&user_defined);
        if add_bos || add_eos {
            inner.with_post_processor(Some(self.bos_eos_processor(add_bos, add_eos)?));
        }

        let specials = Specials { bos: self.bos, eos: self.eos, pad: self.pad, unk: self.unk, ids: specials };
        Ok(Tokenizer::assemble(inner, specials, self.chat_template, add_bos))
    }

    fn of_type(&self, wanted: i32) -> impl Iterator<Item = u32> + '_ {
        self.token_types.iter().enumerate().filter(move |(_, &t)| t == wanted).map(|(i, _)| i as u32)
    }

    /// Control and unknown tokens, `<|...|>` tokens, and BOS/EOS/PAD/UNK.
    fn special_ids(&self) -> std::collections::BTreeSet<u32> {
        let marked = self.of_type(token_type::CONTROL).chain(self.of_type(token_type::UNKNOWN));
        let bracketed = self.tokens.iter().enumerate().filter(|(_, t)| is_bracketed(t)).map(|(i, _)| i as u32);
        let roles = [self.bos, self.eos, self.pad, self.unk].into_iter().flatten();
        marked.chain(bracketed).chain(roles).filter(|&id| (id as usize) < self.tokens.len()).collect()
    }

    fn byte_level(&self) -> Result<(tokenizers::Tokenizer, bool)> {
        let split = pre_split(self.pre.as_deref())?;
        let model = BPE::builder()
            .vocab_and_merges(self.vocab(), self.parsed_merges()?)
            .ignore_merges(split.ignore_merges)
            .build()
            .map_err(tk_err("merges"))?;

        let mut steps = Vec::with_capacity(split.regexes.len() + 1);
        for regex in &split.regexes {
            let pattern = SplitPattern::Regex((*regex).to_string());
            let split = Split::new(pattern, SplitDelimiterBehavior::Isolated, false).map_err(tk_err(regex))?;
            steps.push(PreTokenizerWrapper::Split(split));
        }
        // Bytes to GPT-2's alphabet only: the regexes above did the splitting.
        steps.push(PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, false)));

        let mut inner = tokenizers::Tokenizer::new(model);
        inner.with_pre_tokenizer(Some(PreSequence::new(steps)));
        inner.with_decoder(Some(ByteLevel::default()));
        Ok((inner, split.add_bos_default))
    }

    fn sentencepiece(&self) -> Result<tokenizers::Tokenizer> {
        if self.scores.len() != self.tokens.len() {
            return Err(EngineError::Tokenizer(format!(
                "the GGUF's SentencePiece vocabulary has {} tokens but {} scores; the file is damaged",
                self.tokens.len(),
                self.scores.len()
            )));
        }
        let mut builder = BPE::builder()
            .vocab_and_merges(self.vocab(), merges_from_scores(&self.tokens, &self.scores))
            .byte_fallback(true)
            .fuse_unk(true);
        if let Some(unk) = self.unk.and_then(|id| self.tokens.get(id as usize)) {
            builder = builder.unk_token(unk.clone());
        }
        let model = builder.build().map_err(tk_err("vocabulary"))?;

        let prefix_space = self.add_space_prefix.unwrap_or(true);
        let scheme = if prefix_space { PrependScheme::First } else { PrependScheme::Never };
        let mut decoders = vec![
            DecoderWrapper::Replace(Replace::new("▁", " ").map_err(tk_err("decoder"))?),
            DecoderWrapper::ByteFallback(ByteFallback::new()),
            DecoderWrapper::Fuse(Fuse::new()),
        ];
        if prefix_space {
            decoders.push(DecoderWrapper::Strip(Strip::new(' ', 1, 0)));
        }
        let mut inner = tokenizers::Tokenizer::new(model);
        inner.with_pre_tokenizer(Some(Metaspace::new('▁', scheme, false)));
        inner.with_decoder(Some(DecoderSequence::new(decoders)));
        Ok(inner)
    }

    /// Gemma 4's: spaces as `▁` before BPE (a normalizer, so added tokens, matched first, keep
    /// theirs), the file's merges over characters, byte fallback, nothing prepended.
    fn spaces_as_metaspace(&self) -> Result<tokenizers::Tokenizer> {
        let mut builder = BPE::builder().vocab_and_merges(self.vocab(), self.parsed_merges()?).byte_fallback(true).fuse_unk(true);
        if let Some(unk) = self.unk.and_then(|id| self.tokens.get(id as usize)) {
            builder = builder.unk_token(unk.clone());
        }
        let model = builder.build().map_err(tk_err("merges"))?;
        let mut inner = tokenizers::Tokenizer::new(model);
        let spaces = Replace::new(" ", "▁").map_err(tk_err("normalizer"))?;
        inner.with_normalizer(Some(NormalizerWrapper::Replace(spaces)));
        inner.with_decoder(Some(DecoderSequence::new(vec![
            DecoderWrapper::Replace(Replace::new("▁", " ").map_err(tk_err("decoder"))?),
            DecoderWrapper::ByteFallback(ByteFallback::new()),
            DecoderWrapper::Fuse(Fuse::new()),
        ])));
        Ok(inner)
    }

    fn parsed_merges(&self) -> Result<Vec<(String, String)>> {
        self.merges.iter().enumerate().map(|(i, m)| split_merge(m).ok_or_else(|| bad_merge(i, m))).collect()
    }

    fn vocab(&self) -> tokenizers::models::bpe::Vocab {
        self.tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect()
    }

    /// BOS (and EOS) around every encoded text, as `encode(.., add_special_tokens = true)` does.
    fn bos_eos_processor(&self, add_bos: bool, add_eos: bool) -> Result<PostProcessorWrapper> {
        let name = |id: Option<u32>| id.and_then(|id| self.tokens.get(id as usize).cloned()).unwrap_or_default();
        let (bos, eos) = (name(self.bos), name(self.eos));
        let piece = |token: &str| serde_json::json!({"SpecialToken": {"id": token, "type_id": 0}});
        let template = |seq: &str| {
            let mut pieces = Vec::new();
            if add_bos {
                pieces.push(piece(&bos));
            }
            pieces.push(serde_json::json!({"Sequence": {"id": seq, "type_id": 0}}));
            if add_eos {
                pieces.push(piece(&eos));
            }
            pieces
        };
        let mut special_tokens = serde_json::Map::new();
        for (on, token, id) in [(add_bos, &bos, self.bos), (add_eos, &eos, self.eos)] {
            if let (true, Some(id)) = (on, id) {
                let entry = serde_json::json!({"id": token, "ids": [id], "tokens": [token]});
                special_tokens.insert(token.clone(), entry);
            }
        }
        let pair = [template("A"), template("B")].concat();
        let json = serde_json::json!({
            "type": "TemplateProcessing",
            "single": template("A"),
            "pair": pair,
            "special_tokens": special_tokens,
        });
        serde_json::from_value(json).map_err(|e| EngineError::Tokenizer(format!("could not set up BOS/EOS for the GGUF's tokenizer: {e}")))
    }
}

/// `<|im_start|>` and the like: special in every vocabulary that has them, marked or not.
fn is_bracketed(token: &str) -> bool {
    token.len() > 4 && token.starts_with("<|") && token.ends_with("|>")
}

/// llama.cpp splits a merge at the first space after its first character, so a merge of a
/// lone space token (`"  x"` in non-byte-level files) still parses.
fn split_merge(merge: &str) -> Option<(String, String)> {
    let first = merge.chars().next()?.len_utf8();
    let at = merge[first..].find(' ')? + first;
    let (left, right) = (&merge[..at], &merge[at + 1..]);
    (!right.is_empty()).then(|| (left.to_string(), right.to_string()))
}

fn bad_merge(index: usize, merge: &str) -> EngineError {
    EngineError::Tokenizer(format!("merge {index} of the GGUF (`{merge}`) is not two tokens; the file is damaged"))
}

/// Merges implied by a scored vocabulary, as transformers' `generate_merges`: every way to cut a
/// token into two tokens is a merge ranked by the whole token's score (best first), ties broken
/// by longer left then longer right piece, then by the ids of the pieces.
fn merges_from_scores(tokens: &[String], scores: &[f32]) -> Vec<(String, String)> {
    let ids: std::collections::HashMap<&str, usize> = tokens.iter().enumerate().map(|(i, t)| (t.as_str(), i)).collect();
    let mut found = Vec::new();
    for (token, &score) in tokens.iter().zip(scores) {
        let mut local = Vec::new();
        for (at, _) in token.char_indices().skip(1) {
            let (left, right) = token.split_at(at);
            if let (Some(&l), Some(&r)) = (ids.get(left), ids.get(right)) {
                local.push((l, r));
            }
        }
        local.sort_unstable();
        found.extend(local.into_iter().map(|(l, r)| (score, l, r)));
    }
    let chars = |id: usize| tokens[id].chars().count();
    // Stable, so equal keys keep the order above, as Python's sorted(reverse=True) does.
    found.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| chars(b.1).cmp(&chars(a.1))).then_with(|| chars(b.2).cmp(&chars(a.2))));
    found.into_iter().map(|(_, l, r)| (tokens[l].clone(), tokens[r].clone())).collect()
}

/// Small vocabularies for tests that need a real tokenizer but no model file.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    /// A byte-level vocabulary: the 256 byte symbols, `Ġt`, `he`, `Ġthe`, and two control tokens.
    pub fn tiny_byte_level() -> GgufVocab {
        let mut tokens: Vec<String> = byte_alphabet();
        let types = |n| vec![1; n];
        tokens.extend(["Ġt", "he", "Ġthe", "<|im_start|>", "<|im_end|>"].map(String::from));
        let n = tokens.len();
        let mut token_types = types(n);
        token_types[n - 2] = token_type::CONTROL;
        token_types[n - 1] = token_type::CONTROL;
        GgufVocab {
            model: "gpt2".into(),
            pre: Some("smollm".into()),
            tokens,
            token_types,
            merges: vec!["Ġ t".into(), "h e".into(), "Ġt he".into()],
            bos: Some(n as u32 - 2),
            eos: Some(n as u32 - 1),
            chat_template: Some("{{ messages[0].content }}".into()),
            ..Default::default()
        }
    }

    /// GPT-2's 256 byte symbols, in byte order.
    fn byte_alphabet() -> Vec<String> {
        let printable = |b: u8| (b'!'..=b'~').contains(&b) || (0xA1..=0xAC).contains(&b) || b >= 0xAE;
        let mut next = 256u32;
        (0..=255u8)
            .map(|b| {
                if printable(b) {
                    char::from(b).to_string()
                } else {
                    let c = char::from_u32(next).unwrap();
                    next += 1;
                    c.to_string()
                }
            })
            .collect()
    }

    /// A SentencePiece vocabulary: `<unk> <s> </s>`, 256 byte tokens, a few pieces of "hello world".
    pub fn tiny_sentencepiece() -> GgufVocab {
        let mut tokens: Vec<String> = ["<unk>", "<s>", "</s>"].map(String::from).to_vec();
        tokens.extend((0..=255u8).map(|b| format!("<0x{b:02X}>")));
        let words = ["▁", "h", "e", "l", "o", "w", "r", "d", "▁h", "he", "ll", "llo", "▁he", "▁hello", "▁w", "or"];
        tokens.extend(words.map(String::from));
        let n = tokens.len();
        let mut token_types = vec![1; n];
        token_types[0] = token_type::UNKNOWN;
        token_types[1] = token_type::CONTROL;
        token_types[2] = token_type::CONTROL;
        for t in &mut token_types[3..259] {
            *t = 6;
        }
        // Longer pieces score higher, so they merge first.
        let scores = tokens.iter().map(|t| t.chars().count() as f32).collect();
        GgufVocab { model: "llama".into(), tokens, token_types, scores, bos: Some(1), eos: Some(2), unk: Some(0), ..Default::default() }
    }

    /// A Gemma 4 vocabulary: `<pad> <eos> <bos>`, 256 byte tokens, the pieces of "hello" and `▁hello`.
    pub fn tiny_gemma4() -> GgufVocab {
        let mut tokens: Vec<String> = ["<pad>", "<eos>", "<bos>"].map(String::from).to_vec();
        tokens.extend((0..=255u8).map(|b| format!("<0x{b:02X}>")));
        tokens.extend(["▁", "h", "e", "l", "o", "he", "ll", "hell", "hello", "▁hello"].map(String::from));
        let mut token_types = vec![1; tokens.len()];
        token_types[..3].fill(token_type::CONTROL);
        token_types[3..259].fill(6);
        let merges = ["h e", "l l", "he ll", "hell o", "▁ hello"].map(String::from).to_vec();
        GgufVocab { model: "gemma4".into(), tokens, token_types, merges, bos: Some(2), eos: Some(1), pad: Some(0), ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::*;

    #[test]
    fn byte_level_merges_and_specials() {
        let tok = tiny_byte_level().build(Path::new("tiny.gguf")).unwrap();
        let the = tok.token_to_id("Ġthe").unwrap();
        let start = tok.token_to_id("<|im_start|>").unwrap();
        assert_eq!(tok.encode(" the", false).unwrap(), vec![the]);
        assert_eq!(tok.encode("<|im_start|> the", false).unwrap(), vec![start, the]);
        assert_eq!(tok.decode(&[start, the], false).unwrap(), "<|im_start|> the");
        assert_eq!(tok.decode(&[start, the], true).unwrap(), " the");
        assert!(tok.is_special(start) && !tok.is_special(the));
        assert!(!tok.add_bos());
        assert_eq!(tok.chat_template(), Some("{{ messages[0].content }}"));
    }

    #[test]
    fn byte_level_round_trips_any_text() {
        let tok = tiny_byte_level().build(Path::new("tiny.gguf")).unwrap();
        for text in ["héllo wörld", "日本語 テキスト", "emoji 🦀🎉 ok", "tabs\tand\nnewlines  ", "123 456"] {
            let ids = tok.encode(text, false).unwrap();
            assert_eq!(tok.decode(&ids, false).unwrap(), text);
        }
        // smollm splits digits before anything else: no digit ever shares a token.
        assert_eq!(tok.encode("123", false).unwrap().len(), 3);
    }

    #[test]
    fn add_bos_token_adds_bos_once() {
        let mut vocab = tiny_byte_level();
        vocab.add_bos = Some(true);
        let tok = vocab.build(Path::new("tiny.gguf")).unwrap();
        let bos = tok.bos_id().unwrap();
        assert!(tok.add_bos());
        assert_eq!(tok.encode(" the", true).unwrap()[0], bos);
        assert_eq!(tok.encode(" the", false).unwrap().len(), 1);
        let ids = tok.encode_prompt("<|im_start|> the").unwrap();
        assert_eq!(ids.iter().filter(|&&i| i == bos).count(), 1, "{ids:?}");
    }

    #[test]
    fn unknown_model_and_bad_merge_are_errors() {
        let mut vocab = tiny_byte_level();
        vocab.model = "rwkv".into();
        let err = vocab.build(Path::new("x.gguf")).unwrap_err().to_string();
        assert!(err.contains("`rwkv`") && err.contains("x.gguf"), "{err}");

        let mut vocab = tiny_byte_level();
        vocab.merges.push("nospace".into());
        assert!(vocab.build(Path::new("x.gguf")).unwrap_err().to_string().contains("nospace"));

        let mut vocab = tiny_byte_level();
        vocab.merges.push("zz qq".into());
        assert!(vocab.build(Path::new("x.gguf")).is_err());
    }

    #[test]
    fn damaged_ids_and_types_are_not_a_panic() {
        let mut vocab = tiny_byte_level();
        vocab.token_types.extend([token_type::USER_DEFINED, token_type::CONTROL]);
        assert!(vocab.build(Path::new("x.gguf")).is_ok());

        let mut vocab = tiny_byte_level();
        vocab.bos = Some(1_000_000);
        vocab.add_bos = Some(true);
        let tok = vocab.build(Path::new("x.gguf")).unwrap();
        assert_eq!((tok.bos_id(), tok.add_bos()), (None, false));
    }

    #[test]
    fn merge_lines_split_like_llama_cpp() {
        assert_eq!(split_merge("Ġ t"), Some(("Ġ".into(), "t".into())));
        assert_eq!(split_merge("  x"), Some((" ".into(), "x".into())));
        assert_eq!(split_merge("ab"), None);
        assert_eq!(split_merge("a "), None);
        assert_eq!(split_merge(""), None);
    }

    #[test]
    fn sentencepiece_prefixes_space_adds_bos_and_falls_back_to_bytes() {
        let tok = tiny_sentencepiece().build(Path::new("spm.gguf")).unwrap();
        assert!(tok.add_bos());
        let ids = tok.encode("hello world", true).unwrap();
        assert_eq!(ids[0], 1);
        assert_eq!(tok.id_to_token(ids[1]).as_deref(), Some("▁hello"));
        assert_eq!(tok.decode(&ids, true).unwrap(), "hello world");
        // "é" is not in the vocabulary: its two UTF-8 bytes come out as byte tokens and back.
        let ids = tok.encode("hé", false).unwrap();
        assert!(ids.iter().any(|&i| tok.id_to_token(i).as_deref() == Some("<0xC3>")), "{ids:?}");
        assert_eq!(tok.decode(&ids, false).unwrap(), "hé");
    }

    #[test]
    fn gemma4_writes_spaces_as_metaspace_prefixes_nothing_and_falls_back_to_bytes() {
        let tok = tiny_gemma4().build(Path::new("gemma4.gguf")).unwrap();
        assert!(tok.add_bos());
        let id = |t: &str| tok.token_to_id(t).unwrap();
        assert_eq!(tok.encode("hello hello", true).unwrap(), vec![2, id("hello"), id("▁hello")]);
        // Two spaces: a lone `▁`, then `▁hello`; no space put before the text.
        assert_eq!(tok.encode("hello  hello", false).unwrap(), vec![id("hello"), id("▁"), id("▁hello")]);
        let ids = tok.encode("<bos>hé", false).unwrap();
        assert_eq!(ids, vec![2, id("h"), id("<0xC3>"), id("<0xA9>")]);
        assert_eq!(tok.decode(&ids, true).unwrap(), "hé");
        assert_eq!(tok.decode(&tok.encode(" hello ", false).unwrap(), false).unwrap(), " hello ");
    }

    #[test]
    fn merges_from_scores_rank_by_score_then_length() {
        let tokens: Vec<String> = ["a", "b", "ab", "c", "abc", "bc"].map(String::from).to_vec();
        let scores = [0.0, 0.0, -1.0, 0.0, -0.5, -2.0];
        let merges = merges_from_scores(&tokens, &scores);
        let pairs: Vec<(&str, &str)> = merges.iter().map(|(l, r)| (l.as_str(), r.as_str())).collect();
        assert_eq!(pairs, vec![("ab", "c"), ("a", "bc"), ("a", "b"), ("b", "c")]);
    }
}
