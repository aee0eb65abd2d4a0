//! What a family's text model is to the runtime: one forward pass, told what it reads (token ids,
//! or input embeddings with media rows), whose rows it continues (one sequence's state, several
//! sequences' states, or none: sequences read whole) and what to compute (logits of the last
//! position or of every one, the final hidden states, or both), as mlx-lm's models have one
//! `__call__`. The wiring every family needs around its own layers is here once: the attention
//! of a layer for whichever rows (`Rows::attend`), the states a pass continues (`Rows::states`),
//! the input embeddings (`Input::embeddings`); the output side is `layers::OutputHead`.

use mlx_rs::Array;

use crate::error::{EngineError, Result};
use crate::model::layers::Attention;
pub use crate::model::pass::{Compute, Output, Positions};
use crate::model::{AttentionMode, Denoiser, TextConfig};
use crate::state::{SequenceState, StateKind};

/// A decoder-only language model.
pub trait TextModel {
    fn config(&self) -> &TextConfig;
    /// Every weight, so loading can evaluate them once.
    fn arrays(&self) -> Vec<&Array>;

    /// What `forward` takes beyond what every model takes (`Accepts::TOKENS`); callers ask
    /// before they pass anything more. The default, several rows in one pass and the logits of
    /// every position, is what a family gives whose pass is built on `Rows` and `OutputHead`.
    fn accepts(&self) -> Accepts {
        Accepts::BATCHES_EVERY_POSITION
    }

    /// The forward pass: `input` ([B, L] positions) read as `rows` say, giving what `compute`
    /// asks. Every state in `rows` grows by L.
    fn forward(&self, input: Input, rows: Rows, compute: Compute) -> Result<Output>;

    /// tokens [1, L] → the input embeddings [1, L, hidden] the model's own `forward` starts
    /// from (scaled where the model scales them), for splicing media rows into
    /// (`Input::Embeddings`). Models that take media only (see `Accepts::media_pad_id`).
    fn embed(&self, _tokens: &Array) -> Result<Array> {
        Err(EngineError::invalid("input", format!("{} takes token ids only", self.config().arch)))
    }

    /// The model's multi-token-prediction head, where its checkpoint carries one; it drafts
    /// from the hidden states `Compute::LogitsAndHidden` gives.
    fn mtp(&self) -> Option<&dyn MultiTokenPredictor> {
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

impl dyn TextModel + '_ {
    /// The common pass: one sequence's token ids [1, L] → the logits [1, vocab] (float32) of
    /// its last position; the state grows by L.
    pub fn logits(&self, tokens: &Array, state: &mut SequenceState) -> Result<Array> {
        self.forward(Input::Tokens(tokens), Rows::One(state), Compute::Logits(Positions::Last))?.into_logits()
    }
}

/// What a model's `forward` takes beyond one sequence's token ids and the logits of its last
/// position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepts {
    /// `Rows::Batch`: several sequences in one pass (the runtime steps the rows of a model
    /// without it one at a time).
    pub batches: bool,
    /// `Positions::Every`: the logits of every position fed, each as feeding the tokens one at
    /// a time would give it (what verifying speculative proposals needs).
    pub every_position: bool,
    /// `Rows::Whole` with `Compute::Hidden`, one sequence or several padded: what an embedding
    /// model needs of its transformer.
    pub whole_sequences: bool,
    /// `Input::Embeddings`, with the id to put in `EmbeddingsInput::ids` at media positions (a
    /// pad id, say): models that read media.
    pub media_pad_id: Option<u32>,
}

impl Accepts {
    /// One sequence's token ids, the logits of its last position: what every model takes.
    pub const TOKENS: Accepts = Accepts { batches: false, every_position: false, whole_sequences: false, media_pad_id: None };
    /// Several rows in one pass and the logits of every position: what batched decoding and
    /// verifying speculative proposals ask of a model, and what most families give.
    pub const BATCHES_EVERY_POSITION: Accepts = Accepts { batches: true, every_position: true, whole_sequences: false, media_pad_id: None };
}

/// What a forward pass reads.
pub enum Input<'a> {
    /// Token ids [B, L] (int32).
    Tokens(&'a Array),
    /// One sequence's input embeddings with media rows spliced in (`Rows::One`).
    Embeddings(EmbeddingsInput<'a>),
}

impl Input<'_> {
    /// The input embeddings [B, L, hidden]: token ids through `embed`, or those given.
    pub fn embeddings(&self, embed: impl FnOnce(&Array) -> Result<Array>) -> Result<Array> {
        match self {
            Input::Tokens(tokens) => embed(tokens),
            Input::Embeddings(input) => Ok(input.embeds.clone()),
        }
    }
}

/// Whose rows a pass continues.
pub enum Rows<'r, 's> {
    /// One sequence: input [1, L] continuing the state, whatever its length.
    One(&'s mut SequenceState),
    /// Several sequences: input [B, L], row i continuing `states[i]`, whatever its length. Rows
    /// with fewer tokens are padded at the end, which no earlier position sees.
    Batch(&'r mut [&'s mut SequenceState]),
    /// Sequences read whole from position 0, keeping nothing, each position attending as `mode`
    /// says. `lengths`: the input is [B, L] right-padded, sequence b's first `lengths[b]` ids
    /// real, the padding neither attending nor attended to (its rows of the output are
    /// meaningless); `None`: one sequence [1, L], all real.
    Whole { mode: AttentionMode, lengths: Option<&'r [usize]> },
}

impl<'s> Rows<'_, 's> {
    /// The states the rows continue (one for `One`). A model that keeps state in other layers
    /// than attention cannot read sequences whole: `arch` names it in the error.
    pub fn states(&mut self, arch: &str) -> Result<&mut [&'s mut SequenceState]> {
        match self {
            Rows::One(state) => Ok(std::slice::from_mut(state)),
            Rows::Batch(states) => Ok(states),
            Rows::Whole { .. } => Err(EngineError::invalid("input", format!("{arch} reads sequences only into a state"))),
        }
    }

    /// `states`, checked against a model whose state has `layers` layers, for `rows` rows of
    /// input.
    pub fn states_for(&mut self, arch: &str, layers: usize, rows: i32) -> Result<&mut [&'s mut SequenceState]> {
        let states = self.states(arch)?;
        if let Some(state) = states.iter().find(|s| s.layers.len() != layers) {
            return Err(EngineError::Internal(format!("the state has {} layers but the model {layers}", state.layers.len())));
        }
        if rows as usize != states.len() {
            return Err(EngineError::Internal(format!("{rows} rows for {} sequences", states.len())));
        }
        Ok(states)
    }

    /// Layer `layer`'s attention over x [B, L, hidden] for these rows: against the sequence's
    /// keys and values, each row's own (the projections once for the batch), or the sequences
    /// read whole.
    pub fn attend(&mut self, layer: usize, attention: &Attention, x: &Array) -> Result<Array> {
        match self {
            Rows::One(state) => attention.forward(x, state.layer_mut(layer)?),
            Rows::Batch(states) => {
                let mut layers = states.iter_mut().map(|s| s.layer_mut(layer)).collect::<Result<Vec<_>>>()?;
                attention.forward_rows(x, &mut layers)
            }
            Rows::Whole { mode, lengths: None } => attention.forward_whole(x, *mode),
            Rows::Whole { mode, lengths: Some(lengths) } => attention.forward_whole_padded(x, *mode, lengths),
        }
    }
}

/// A multi-token-prediction head (Qwen3.5's `mtp.*`): from the model's final hidden state at a
/// position and the embedding of the token that follows it, the hidden state whose logits
/// predict the token after that; fed its own output and its own choice, it drafts further. It
/// keeps keys and values of its own (`mtp_state`), one entry per position it read.
pub trait MultiTokenPredictor {
    /// tokens [1, L] (int32) and hidden [1, L, hidden]: hidden[i] is the model's final hidden
    /// state (`Compute::LogitsAndHidden`) at the position before token i, or the head's own
    /// output there → the head's hidden states [1, L, hidden]; the state grows by L, placed at
    /// its length plus its position shift.
    fn mtp_forward(&self, tokens: &Array, hidden: &Array, state: &mut SequenceState) -> Result<Array>;
    /// The head's hidden states [.., hidden] → logits [.., vocab] (float32), through the model's
    /// output head.
    fn mtp_logits(&self, hidden: &Array) -> Result<Array>;
    /// A fresh state for the head.
    fn mtp_state(&self) -> SequenceState;
}

/// A chunk of a prompt as embeddings, for `Input::Embeddings`.
pub struct EmbeddingsInput<'a> {
    /// [1, L, hidden] in the compute dtype: `embed(ids)` with media rows replaced by the
    /// towers' outputs (already projected to the text hidden size).
    pub embeds: &'a Array,
    /// [1, L] int32: the ids behind the rows, with every media placeholder replaced by
    /// `Accepts::media_pad_id`, for models that look more up by id than the input embeddings
    /// (per-layer inputs, say), as transformers does.
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

impl EmbeddingsInput<'_> {
    /// After a chunk placed at explicit multimodal `positions`, the next token goes one past
    /// the furthest position so far (transformers' rope delta), kept with the state.
    pub fn continue_past_positions(&self, state: &mut SequenceState) -> Result<()> {
        if let Some(positions) = self.positions {
            let furthest =
                positions.max(None)?.try_item_cast::<i32>().map_err(|e| EngineError::Internal(format!("positions: {e}")))? as i64;
            state.set_position_shift(furthest + 1 - state.len() as i64);
        }
        Ok(())
    }
}
