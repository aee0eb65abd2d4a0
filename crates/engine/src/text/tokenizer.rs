//! `Tokenizer`: text to token ids and back, whatever file the vocabulary came from.
//!
//! A thin layer over the `tokenizers` crate that adds what the engine needs beyond it: the
//! special-token ids (BOS, EOS, the set to hide from output), whether prompts start with BOS,
//! and the chat template that came with the vocabulary. Cloning is cheap (the vocabulary is
//! shared), so a generation can hold its own copy.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::error::{EngineError, Result};
use crate::text::prompt_memo::PromptMemo;

#[derive(Clone)]
pub struct Tokenizer {
    inner: Arc<tokenizers::Tokenizer>,
    specials: Arc<Specials>,
    chat_template: Option<Arc<str>>,
    add_bos: bool,
    /// Recent prompts, so a conversation's next turn tokenizes only what it adds (None where
    /// this vocabulary cannot cut a prompt at its special tokens).
    memo: Option<Arc<PromptMemo>>,
}

/// The ids a model gives roles to, and every id that is not text.
#[derive(Debug, Default, Clone)]
pub(crate) struct Specials {
    pub bos: Option<u32>,
    pub eos: Option<u32>,
    pub pad: Option<u32>,
    pub unk: Option<u32>,
    /// Control tokens: skipped by `decode(.., skip_special = true)`.
    pub ids: BTreeSet<u32>,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("vocab_size", &self.vocab_size())
            .field("bos", &self.specials.bos)
            .field("eos", &self.specials.eos)
            .field("add_bos", &self.add_bos)
            .field("chat_template", &self.chat_template.is_some())
            .finish_non_exhaustive()
    }
}

impl Tokenizer {
    /// Joins a built `tokenizers::Tokenizer` with what the loaders found around it. Every id the
    /// inner tokenizer marks special is added to `specials.ids`, and so are BOS, EOS, PAD, UNK.
    pub(crate) fn assemble(inner: tokenizers::Tokenizer, mut specials: Specials, chat_template: Option<String>, add_bos: bool) -> Self {
        let marked = inner.get_added_tokens_decoder().into_iter().filter(|(_, t)| t.special).map(|(id, _)| id);
        specials.ids.extend(marked);
        specials.ids.extend([specials.bos, specials.eos, specials.pad, specials.unk].into_iter().flatten());
        let memo = PromptMemo::for_tokenizer(&inner).map(Arc::new);
        Self {
            inner: Arc::new(inner),
            memo,
            specials: Arc::new(specials),
            chat_template: chat_template.filter(|t| !t.trim().is_empty()).map(Arc::from),
            add_bos,
        }
    }

    /// Token ids for `text`. With `add_special_tokens`, the model's BOS (and EOS, for the few
    /// vocabularies that ask for it) is added as the model's own tokenizer would.
    pub fn encode(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>> {
        let encoding = self
            .inner
            .encode_fast(text, add_special_tokens)
            .map_err(|e| EngineError::Tokenizer(format!("could not encode the text: {e}")))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// Token ids for a prompt that a chat template has already rendered: BOS is added only when
    /// the vocabulary wants it and the template did not already write it, so it is never doubled.
    /// A prompt that starts like one of the last few (the conversation's previous turn) reuses
    /// their ids up to the last special token they share (`PromptMemo`).
    pub fn encode_prompt(&self, rendered: &str) -> Result<Vec<u32>> {
        let mut ids = match &self.memo {
            Some(memo) => memo.encode(&self.inner, rendered)?,
            None => self.encode(rendered, false)?,
        };
        if let (true, Some(bos)) = (self.add_bos, self.specials.bos) {
            if ids.first() != Some(&bos) {
                ids.insert(0, bos);
            }
        }
        Ok(ids)
    }

    /// Text for `ids`. Ids outside the vocabulary are ignored; bytes that do not form UTF-8
    /// (a character cut off mid-way) come out as U+FFFD.
    pub fn decode(&self, ids: &[u32], skip_special: bool) -> Result<String> {
        self.inner.decode(ids, skip_special).map_err(|e| EngineError::Tokenizer(format!("could not decode token ids: {e}")))
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// The token as the vocabulary spells it (byte-level vocabularies write a space as `Ġ`).
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    pub fn bos_id(&self) -> Option<u32> {
        self.specials.bos
    }

    pub fn eos_id(&self) -> Option<u32> {
        self.specials.eos
    }

    pub fn pad_id(&self) -> Option<u32> {
        self.specials.pad
    }

    pub fn unk_id(&self) -> Option<u32> {
        self.specials.unk
    }

    pub fn bos_token(&self) -> Option<String> {
        self.specials.bos.and_then(|id| self.id_to_token(id))
    }

    pub fn eos_token(&self) -> Option<String> {
        self.specials.eos.and_then(|id| self.id_to_token(id))
    }

    /// Every id, added tokens included.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// The Jinja chat template that came with the vocabulary, if any.
    pub fn chat_template(&self) -> Option<&str> {
        self.chat_template.as_deref()
    }

    /// Whether prompts start with BOS (`encode(.., true)` and `encode_prompt` add it).
    pub fn add_bos(&self) -> bool {
        self.add_bos
    }

    /// Ids that are not text: control tokens, BOS, EOS, PAD, UNK.
    pub fn special_ids(&self) -> &BTreeSet<u32> {
        &self.specials.ids
    }

    pub fn is_special(&self, id: u32) -> bool {
        self.specials.ids.contains(&id)
    }

    /// The underlying `tokenizers` tokenizer, for what this type does not cover.
    pub fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }
}
