//! RMS normalisation gated by a second input: `rms_norm(x) · weight · silu(gate)`, the output
//! norm of Gated DeltaNet layers (FLA's `FusedRMSNormGated`; the weight multiplies as it is).

use mlx_rs::{fast, nn, ops, Array, Dtype};

use crate::error::Result;

pub struct GatedRmsNorm {
    weight: Array,
    eps: f32,
}

impl GatedRmsNorm {
    pub fn new(weight: Array, eps: f32, dtype: Dtype) -> Result<Self> {
        Ok(Self { weight: weight.as_dtype(dtype)?, eps })
    }

    /// x and gate alike, normalised over the last axis.
    pub fn forward(&self, x: &Array, gate: &Array) -> Result<Array> {
        let normed = fast::rms_norm(x, Some(&self.weight), self.eps)?;
        Ok(ops::multiply(&normed, &nn::silu(gate)?)?)
    }

    pub fn weight(&self) -> &Array {
        &self.weight
    }
}
