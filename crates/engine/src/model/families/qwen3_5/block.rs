//! One decoder layer of the hybrid stack (a pre-norm mixer, Gated DeltaNet or gated attention,
//! then a pre-norm dense or MoE feed-forward, both residual), shared by the model and its
//! multi-token-prediction head.

use mlx_rs::{ops, Array};

use crate::error::Result;
use crate::model::layers::mrope::Rotation;
use crate::model::layers::{Mlp, RmsNorm};
use crate::state::{LayerState, SequenceState, StateKind};

use super::attention::{GatedAttention, Placement};
use super::delta_net::DeltaNet;
use super::moe::SparseMoe;

pub enum Mixing {
    Linear(DeltaNet),
    Attention(GatedAttention),
}

impl Mixing {
    pub fn state_kind(&self) -> StateKind {
        match self {
            Mixing::Linear(_) => StateKind::Recurrent,
            Mixing::Attention(_) => StateKind::KeysValues,
        }
    }
}

pub enum FeedForward {
    Dense(Mlp),
    Moe(Box<SparseMoe>),
}

pub struct Block {
    pub input_norm: RmsNorm,
    pub mixing: Mixing,
    pub post_attention_norm: RmsNorm,
    pub feed_forward: FeedForward,
}

impl Block {
    /// h [B, L, hidden] → h after the block (pre-norm mixer, pre-norm feed-forward, both
    /// residual), row i continuing `states[i]`'s layer `layer`.
    pub fn forward(&self, h: &Array, states: &mut [&mut SequenceState], layer: usize, placements: &[Placement]) -> Result<Array> {
        let x = self.input_norm.forward(h)?;
        let mixed = match &self.mixing {
            Mixing::Linear(m) => {
                let mut layers = states.iter_mut().map(|s| s.layers[layer].recurrent_mut()).collect::<Result<Vec<_>>>()?;
                m.forward_rows(&x, &mut layers)?
            }
            Mixing::Attention(a) => {
                let mut layers: Vec<&mut LayerState> = states.iter_mut().map(|s| &mut s.layers[layer]).collect();
                a.forward_rows(&x, &mut layers, placements)?
            }
        };
        let h = ops::add(h, &mixed)?;
        let x = self.post_attention_norm.forward(&h)?;
        let ff = match &self.feed_forward {
            FeedForward::Dense(mlp) => mlp.forward(&x)?,
            FeedForward::Moe(moe) => moe.forward(&x)?,
        };
        Ok(ops::add(&h, &ff)?)
    }

    pub fn arrays(&self) -> Vec<&Array> {
        let mut all = match &self.mixing {
            Mixing::Linear(m) => m.arrays(),
            Mixing::Attention(a) => a.arrays(),
        };
        all.extend(match &self.feed_forward {
            FeedForward::Dense(mlp) => mlp.arrays(),
            FeedForward::Moe(moe) => moe.arrays(),
        });
        all.extend([self.input_norm.weight(), self.post_attention_norm.weight()]);
        all
    }
}

/// Where each row's tokens go: at explicit multimodal positions, or at their index plus the
/// row's shift.
pub fn placements<'a>(states: &[&mut SequenceState], rotation: Option<&'a Rotation>) -> Vec<Placement<'a>> {
    states
        .iter()
        .map(|s| match rotation {
            Some(r) => Placement::Explicit(r),
            None => Placement::Shifted(s.position_shift()),
        })
        .collect()
}
