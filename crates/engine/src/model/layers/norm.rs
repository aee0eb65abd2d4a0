//! RMS normalisation, with the `(1 + weight)` convention of some checkpoints folded in at load.

use mlx_rs::{fast, ops, Array, Dtype};

use crate::error::Result;

pub struct RmsNorm {
    weight: Array,
    eps: f32,
}

impl RmsNorm {
    /// `offset` is 1.0 for checkpoints that store `weight - 1`.
    pub fn new(weight: Array, eps: f32, offset: f32, dtype: Dtype) -> Result<Self> {
        let weight = weight.as_dtype(Dtype::Float32)?;
        let weight = if offset != 0.0 { ops::add(&weight, Array::from_f32(offset))? } else { weight };
        Ok(Self { weight: weight.as_dtype(dtype)?, eps })
    }

    pub fn forward(&self, x: &Array) -> Result<Array> {
        Ok(fast::rms_norm(x, Some(&self.weight), self.eps)?)
    }

    pub fn weight(&self) -> &Array {
        &self.weight
    }
}
