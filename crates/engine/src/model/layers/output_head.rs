//! The end of a decoder stack: the final norm and the output head (its own projection, or the
//! input embeddings read backwards), logits soft-capped where the model caps them; and what a
//! forward pass asked of it (`Compute`).

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, Array};

use crate::error::Result;
use crate::model::layers::{Embedding, Linear, RmsNorm};
use crate::model::pass::{Compute, Output, Positions};

pub struct OutputHead {
    pub norm: RmsNorm,
    /// `None` when the head is tied to the input embeddings.
    pub lm_head: Option<Linear>,
    /// Logits become cap · tanh(logits / cap) (Gemma's final-logit soft-capping).
    pub softcap: Option<f32>,
}

impl OutputHead {
    /// The hidden states after the last block [B, L, hidden] → what `compute` asks. Only the
    /// last position is normed where only its logits are asked.
    pub fn finish(&self, embed: &Embedding, h: &Array, compute: Compute) -> Result<Output> {
        let at = |x: &Array, positions: Positions| match positions {
            Positions::Last => x.index((.., -1, ..)),
            Positions::Every => x.clone(),
        };
        Ok(match compute {
            Compute::Logits(positions) => Output::Logits(self.logits(embed, &self.norm.forward(&at(h, positions))?)?),
            Compute::LogitsAndHidden(positions) => {
                let hidden = self.norm.forward(h)?;
                Output::LogitsAndHidden { logits: self.logits(embed, &at(&hidden, positions))?, hidden }
            }
            Compute::Hidden => Output::Hidden(self.norm.forward(h)?),
        })
    }

    /// Final hidden states (normed) [.., hidden] → float32 logits [.., vocab].
    pub fn logits(&self, embed: &Embedding, normed: &Array) -> Result<Array> {
        let logits = match &self.lm_head {
            Some(head) => head.forward_f32(normed)?,
            None => embed.as_logits(normed)?,
        };
        match self.softcap {
            Some(cap) => {
                let cap = Array::from_f32(cap);
                Ok(ops::multiply(&ops::tanh(&ops::divide(&logits, &cap)?)?, &cap)?)
            }
            None => Ok(logits),
        }
    }

    pub fn arrays(&self) -> Vec<&Array> {
        let mut all = vec![self.norm.weight()];
        all.extend(self.lm_head.iter().flat_map(Linear::arrays));
        all
    }
}
