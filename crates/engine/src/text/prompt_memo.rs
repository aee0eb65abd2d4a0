//! The last few prompts a tokenizer encoded, so that the next turn of a conversation (whose
//! prompt repeats the last one and adds to it) tokenizes only what it adds.
//!
//! A chat template writes every message between special tokens (`<|im_start|>`, `<|im_end|>`,
//! …), and a tokenizer splits its input at those before anything else: the text up to the end
//! of one of them encodes to the same ids on its own as inside the whole prompt. The memo keeps,
//! for each prompt, where those tokens end (a byte offset, and how many ids come before it); a
//! new prompt that starts like a kept one reuses the ids up to the last such point the two
//! share and encodes only the rest. That holds for vocabularies whose pieces between special
//! tokens are encoded independently (byte-level BPE: SmolLM2, Llama 3, Qwen). One that treats
//! the start of the whole text specially (a SentencePiece space added only at the very start)
//! does not; probes at load find that, and such a tokenizer never uses the memo.

use std::collections::{HashSet, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::error::{EngineError, Result};

/// Prompts kept: a few conversations' latest turns (the app's chat, the context meter's count
/// of it, a server's clients).
const KEPT: usize = 4;

/// Where a piece of a prompt ends: just after a special token, `ids` ids in.
#[derive(Debug, Clone, Copy)]
struct Cut {
    byte: usize,
    ids: usize,
}

struct Encoded {
    text: String,
    ids: Vec<u32>,
    cuts: Vec<Cut>,
}

pub(crate) struct PromptMemo {
    /// Special tokens that end a piece: ones that strip no whitespace around them.
    cut_ids: HashSet<u32>,
    recent: Mutex<VecDeque<Encoded>>,
}

impl PromptMemo {
    /// A memo for `inner`, or None when its pieces between special tokens do not encode
    /// independently (or it has no special tokens to cut at).
    pub(crate) fn for_tokenizer(inner: &tokenizers::Tokenizer) -> Option<Self> {
        let cuts: Vec<(u32, String)> = inner
            .get_added_tokens_decoder()
            .into_iter()
            .filter(|(_, t)| t.special && !t.lstrip && !t.rstrip && !t.single_word)
            .map(|(id, t)| (id, t.content))
            .collect();
        if cuts.is_empty() {
            return None;
        }
        let encode = |text: &str| inner.encode_fast(text, false).ok().map(|e| e.get_ids().to_vec());
        // Text around the cut as templates write it: a newline or a word right after it, a
        // space, a leading space in the piece that follows.
        let probes = ["\nHello  world", "Hello", " leading space", "\n\n x"];
        for (_, token) in &cuts {
            for after in probes {
                let before = format!("x: {token}");
                let whole = encode(&format!("{before}{after}"))?;
                let mut apart = encode(&before)?;
                apart.extend(encode(after)?);
                if whole != apart {
                    tracing::debug!(token, "prompts are tokenized whole: pieces after this token do not encode alone");
                    return None;
                }
            }
        }
        Some(Self { cut_ids: cuts.into_iter().map(|(id, _)| id).collect(), recent: Mutex::new(VecDeque::new()) })
    }

    /// `text`'s ids, as `inner.encode(text, false)` gives them, reusing a kept prompt's ids up
    /// to the last cut the two share.
    pub(crate) fn encode(&self, inner: &tokenizers::Tokenizer, text: &str) -> Result<Vec<u32>> {
        let (mut ids, mut cuts, start) = self.reusable(text);
        let encoding =
            inner.encode(&text[start..], false).map_err(|e| EngineError::Tokenizer(format!("could not encode the text: {e}")))?;
        let before = ids.len();
        for (i, (&id, &(_, end))) in encoding.get_ids().iter().zip(encoding.get_offsets()).enumerate() {
            if self.cut_ids.contains(&id) {
                cuts.push(Cut { byte: start + end, ids: before + i + 1 });
            }
        }
        ids.extend_from_slice(encoding.get_ids());
        self.keep(Encoded { text: text.to_owned(), ids: ids.clone(), cuts });
        Ok(ids)
    }

    /// The ids and cuts of the longest kept prefix of `text` that ends at a cut, and where
    /// it ends (0 with nothing).
    fn reusable(&self, text: &str) -> (Vec<u32>, Vec<Cut>, usize) {
        let recent = self.lock();
        let best = recent
            .iter()
            .filter_map(|kept| {
                let shared = shared_bytes(&kept.text, text);
                let last = kept.cuts.iter().rposition(|c| c.byte <= shared)?;
                Some((kept, last))
            })
            .max_by_key(|(kept, last)| kept.cuts[*last].byte);
        match best {
            Some((kept, last)) => {
                let cut = kept.cuts[last];
                (kept.ids[..cut.ids].to_vec(), kept.cuts[..=last].to_vec(), cut.byte)
            }
            None => (vec![], vec![], 0),
        }
    }

    /// Keeps the newest prompts; one that the new prompt extends goes (the new one covers it),
    /// and a new one that a kept one extends adds nothing (a message boundary's prefix, say).
    fn keep(&self, encoded: Encoded) {
        let mut recent = self.lock();
        if recent.iter().any(|kept| kept.text.starts_with(&encoded.text)) {
            return;
        }
        recent.retain(|kept| !encoded.text.starts_with(&kept.text));
        recent.push_front(encoded);
        recent.truncate(KEPT);
    }

    /// The kept prompts (a panic elsewhere leaves them whole: each change is one push or retain).
    fn lock(&self) -> MutexGuard<'_, VecDeque<Encoded>> {
        self.recent.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Bytes `a` and `b` share from the start.
fn shared_bytes(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}
