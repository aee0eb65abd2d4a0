//! Routed experts: each token runs through its top-k gated MLPs, chosen by a router, and their
//! outputs are summed with the router's weights. Expert weights are stacked [experts, ..] and
//! gathered per token with `gather_mm`, so only the chosen experts' rows are multiplied.

use mlx_rs::ops::argpartition_axis;
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{nn, ops, Array};

use crate::error::Result;
use crate::model::config::Activation;

pub struct Experts {
    /// [experts, hidden, 2 × intermediate]: gate then up, stored transposed for `gather_mm`.
    pub gate_up: Array,
    /// [experts, intermediate, hidden], transposed likewise.
    pub down: Array,
    pub intermediate: i32,
    pub activation: Activation,
}

impl Experts {
    /// From transformers' layout: gate_up_proj [experts, 2 × intermediate, hidden] and
    /// down_proj [experts, hidden, intermediate].
    pub fn from_hf(gate_up_proj: Array, down_proj: Array, activation: Activation) -> Result<Self> {
        let intermediate = down_proj.dim(-1);
        Ok(Self { gate_up: gate_up_proj.swap_axes(-1, -2)?, down: down_proj.swap_axes(-1, -2)?, intermediate, activation })
    }

    /// From mlx-lm's `switch_glu` layout (dequantized): gate_proj and up_proj
    /// [experts, intermediate, hidden], down_proj [experts, hidden, intermediate].
    pub fn from_switch_glu(gate: Array, up: Array, down: Array, activation: Activation) -> Result<Self> {
        Self::from_hf(ops::concatenate(&[gate, up], 1)?, down, activation)
    }

    /// x [T, hidden], experts [T, k] (uint32), weights [T, k] → [T, hidden].
    pub fn forward(&self, x: &Array, experts: &Array, weights: &Array) -> Result<Array> {
        let x = x.expand_dims(-2)?.expand_dims(-2)?; // [T, 1, 1, hidden]
        let gate_up = ops::gather_mm(&x, &self.gate_up, None, experts, false)?; // [T, k, 1, 2I]
        let gate = gate_up.index((.., .., .., ..self.intermediate));
        let up = gate_up.index((.., .., .., self.intermediate..));
        let gate = match self.activation {
            Activation::Silu => nn::silu(&gate)?,
            Activation::GeluTanh => nn::gelu_approximate(&gate)?,
        };
        let h = ops::multiply(&gate, &up)?;
        let y = ops::gather_mm(&h, &self.down, None, experts, false)?.squeeze_axes(&[-2])?; // [T, k, hidden]
        Ok(ops::sum_axis(&ops::multiply(&y, &weights.expand_dims(-1)?)?, 1, false)?)
    }

    pub fn arrays(&self) -> Vec<&Array> {
        vec![&self.gate_up, &self.down]
    }
}

/// The `k` largest of `probs` [T, experts] along the last axis: (indices [T, k] uint32, values).
pub fn top_k(probs: &Array, k: i32) -> Result<(Array, Array)> {
    let idx = argpartition_axis(&ops::negative(probs)?, k - 1, -1)?.index((.., ..k));
    let values = probs.take_along_axis(&idx, -1)?;
    Ok((idx.as_dtype(mlx_rs::Dtype::Uint32)?, values))
}
