//! What a forward pass is asked to compute and what it gives: kept apart from `text_model`, so
//! that the shared layers that finish a pass (`layers::OutputHead`) read these without
//! importing the trait's module, which imports the layers.

use mlx_rs::Array;

use crate::error::{EngineError, Result};

/// What a forward pass computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compute {
    /// Logits (float32): [B, vocab] of the last position, or [B, L, vocab] of every one.
    Logits(Positions),
    /// Those logits and the final hidden states [B, L, hidden] of every position (after the
    /// final norm, before the output head): what a multi-token-prediction head drafts from.
    LogitsAndHidden(Positions),
    /// The final hidden states [B, L, hidden] only: what embedding models pool.
    Hidden,
}

/// Which positions' logits a pass gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Positions {
    Last,
    Every,
}

/// What a forward pass gave, as `Compute` asked.
pub enum Output {
    Logits(Array),
    LogitsAndHidden { logits: Array, hidden: Array },
    Hidden(Array),
}

impl Output {
    pub fn into_logits(self) -> Result<Array> {
        match self {
            Output::Logits(logits) | Output::LogitsAndHidden { logits, .. } => Ok(logits),
            Output::Hidden(_) => Err(EngineError::Internal("a pass that computed no logits was read for them".into())),
        }
    }

    pub fn into_hidden(self) -> Result<Array> {
        match self {
            Output::Hidden(hidden) | Output::LogitsAndHidden { hidden, .. } => Ok(hidden),
            Output::Logits(_) => Err(EngineError::Internal("a pass that kept no hidden states was read for them".into())),
        }
    }

    pub fn into_logits_and_hidden(self) -> Result<(Array, Array)> {
        match self {
            Output::LogitsAndHidden { logits, hidden } => Ok((logits, hidden)),
            _ => Err(EngineError::Internal("a pass was read for logits and hidden states it did not compute together".into())),
        }
    }
}
