//! What a family's text model is to the runtime: token ids (or embeddings) in, logits out,
//! with its per-layer state.

use mlx_rs::Array;

use crate::error::{EngineError, Result};
use crate::model::{AttentionMode, Denoiser, TextConfig};
use crate::state::{SequenceState, StateKind};

/// A decoder-only language model.
pub trait TextModel {
    fn config(&self) -> &TextConfig;
    /// tokens [1, L] (int32) → logits [1, vocab] (float32) of the last position; the state
    /// grows by L.
    fn forward(&self, tokens: &Array, state: &mut SequenceState) -> Result<Array>;
    /// Every weight, so loading can evaluate them once.
    fn arrays(&self) -> Vec<&Array>;

    /// Whether `forward_every` works: the logits of every position fed, not only the last
    /// (what verifying speculative proposals needs).
    fn scores_every_position(&self) -> bool {
        false
    }

    /// As `forward`, but tokens [1, L] → logits [L, vocab] (float32) of every position, each
    /// as `forward` would give it had the tokens been fed one at a time; the state grows by L.
    fn forward_every(&self, _tokens: &Array, _state: &mut SequenceState) -> Result<Array> {
        Err(EngineError::invalid("input", format!("{} gives the logits of the last position only", self.config().arch)))
    }

    /// As `forward_batch`, but tokens [B, L] (row i continuing `states[i]`) → logits
    /// [B, L, vocab] (float32) of every position; each state grows by L. Works where both
    /// `batches` and `scores_every_position` do (verifying several rows' proposals in one
    /// pass; rows with fewer are padded at the end, which no earlier position sees).
    fn forward_batch_every(&self, _tokens: &Array, _states: &mut [&mut SequenceState]) -> Result<Array> {
        Err(EngineError::invalid("input", format!("{} cannot score every position of several sequences at once", self.config().arch)))
    }

    /// As `forward_batch` (`every`: `forward_batch_every`), with the final hidden states
    /// [B, L, hidden] of every position (after the final norm, before the output head) besides
    /// the logits: what a multi-token-prediction head drafts from. Works where `mtp` is `Some`.
    fn forward_hidden(&self, _tokens: &Array, _states: &mut [&mut SequenceState], _every: bool) -> Result<(Array, Array)> {
        Err(EngineError::invalid("input", format!("{} gives no hidden states with its logits", self.config().arch)))
    }

    /// The model's multi-token-prediction head, where its checkpoint carries one.
    fn mtp(&self) -> Option<&dyn MultiTokenPredictor> {
        None
    }

    /// Whether `forward_batch` works: several sequences decoded in one forward pass.
    fn batches(&self) -> bool {
        false
    }

    /// One decode step for several sequences at once: tokens [B, 1] (row i continues
    /// `states[i]`, whatever its length) → logits [B, vocab] (float32); each state grows by 1.
    /// Models that cannot (see `batches`) have their rows stepped one at a time instead.
    fn forward_batch(&self, _tokens: &Array, _states: &mut [&mut SequenceState]) -> Result<Array> {
        Err(EngineError::invalid("input", format!("{} decodes one sequence at a time", self.config().arch)))
    }

    /// tokens [1, L] → the input embeddings [1, L, hidden] the model's own `forward` starts
    /// from (scaled where the model scales them), for splicing media rows into.
    fn embed(&self, _tokens: &Array) -> Result<Array> {
        Err(EngineError::invalid("input", format!("{} takes token ids only", self.config().arch)))
    }

    /// `forward` from embeddings: multimodal prompts, whose media rows come from a vision or
    /// audio tower. Logits of the last position; the state grows by L.
    fn forward_embeddings(&self, _input: EmbeddingsInput, _state: &mut SequenceState) -> Result<Array> {
        Err(EngineError::invalid("input", format!("{} takes token ids only", self.config().arch)))
    }

    /// Whether `hidden_states` works (what an embedding model needs of its transformer).
    fn gives_hidden_states(&self) -> bool {
        false
    }

    /// tokens [1, L] → the final hidden states [1, L, hidden] (after the final norm, before any
    /// output head), the sequence read whole from position 0 with nothing kept, attending as
    /// `mode` says: what embedding models pool.
    fn hidden_states(&self, _tokens: &Array, _mode: AttentionMode) -> Result<Array> {
        Err(EngineError::invalid("input", format!("{} gives no hidden states (it cannot be an embedding model)", self.config().arch)))
    }

    /// Whether `hidden_states_padded` works: several sequences in one pass, padded.
    fn pads_hidden_states(&self) -> bool {
        false
    }

    /// tokens [B, L]: B sequences right-padded to L, sequence b's first `lengths[b]` ids real →
    /// [B, L, hidden], each sequence's real positions as `hidden_states` gives them for it alone
    /// (padding neither attends nor is attended to); the padding positions' rows are meaningless.
    fn hidden_states_padded(&self, _tokens: &Array, _lengths: &[usize], _mode: AttentionMode) -> Result<Array> {
        Err(EngineError::invalid("input", format!("{} reads one sequence at a time for its hidden states", self.config().arch)))
    }

    /// The id to put in `EmbeddingsInput::ids` at media positions (a pad id, say).
    fn media_pad_id(&self) -> Option<u32> {
        None
    }

    /// The state each layer keeps between calls, in the order `forward` reads them
    /// (default: full keys and values for every layer).
    fn state_kinds(&self) -> Vec<StateKind> {
        vec![StateKind::KeysValues; self.config().num_layers]
    }

    /// The model's denoising side, for models that write canvases by denoising rather than one
    /// token per forward pass (their `forward` reads prompts and finished canvases into the
    /// state; the runtime then runs its denoising method).
    fn denoiser(&self) -> Option<&dyn Denoiser> {
        None
    }

    /// A fresh sequence's state.
    fn new_state(&self) -> SequenceState {
        SequenceState::new(&self.state_kinds())
    }
}

/// A multi-token-prediction head (Qwen3.5's `mtp.*`): from the model's final hidden state at a
/// position and the embedding of the token that follows it, the hidden state whose logits
/// predict the token after that; fed its own output and its own choice, it drafts further. It
/// keeps keys and values of its own (`mtp_state`), one entry per position it read.
pub trait MultiTokenPredictor {
    /// tokens [1, L] (int32) and hidden [1, L, hidden]: hidden[i] is the model's final hidden
    /// state (`TextModel::forward_hidden`) at the position before token i, or the head's own
    /// output there → the head's hidden states [1, L, hidden]; the state grows by L, placed at
    /// its length plus its position shift.
    fn mtp_forward(&self, tokens: &Array, hidden: &Array, state: &mut SequenceState) -> Result<Array>;
    /// The head's hidden states [.., hidden] → logits [.., vocab] (float32), through the model's
    /// output head.
    fn mtp_logits(&self, hidden: &Array) -> Result<Array>;
    /// A fresh state for the head.
    fn mtp_state(&self) -> SequenceState;
}

/// A chunk of a prompt as embeddings, for `TextModel::forward_embeddings`.
pub struct EmbeddingsInput<'a> {
    /// [1, L, hidden] in the compute dtype: `embed(ids)` with media rows replaced by the
    /// towers' outputs (already projected to the text hidden size).
    pub embeds: &'a Array,
    /// [1, L] int32: the ids behind the rows, with every media placeholder replaced by
    /// `media_pad_id()`, for models that look more up by id than the input embeddings (per-layer
    /// inputs, say), as transformers does.
    pub ids: &'a Array,
    /// Per position of this chunk, which media item it belongs to (0, 1, … in order), or -1
    /// for text and for media the model attends to causally. A model may let the positions of
    /// one item (an image, say) see each other both ways; media it reads causally (audio, say)
    /// are labelled -1. An item must not be split across chunks.
    pub media_blocks: Option<&'a [i32]>,
    /// [axes, L] int32: each position's place along several axes (multimodal RoPE), for models
    /// whose processor gives `TokenPositions`; `None`: position i of the sequence is i (plus the
    /// state's position shift).
    pub positions: Option<&'a Array>,
    /// [k, 1, L, hidden]: rows added to the hidden states after decoder layer j (j < k), zero at
    /// positions that have none (text); from towers that give several sets of rows (deepstack).
    pub layer_additions: Option<&'a Array>,
}
