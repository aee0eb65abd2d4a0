//! Token embeddings, which tied models also use as the output projection.

use mlx_rs::{ops, Array, Dtype};

use crate::error::Result;
use crate::model::layers::Linear;

/// The table is a [vocab, hidden] `Linear`, so tied output heads reuse it as it is.
pub struct Embedding {
    pub table: Linear,
}

impl Embedding {
    /// tokens [B, L] (int32) → [B, L, hidden].
    pub fn forward(&self, tokens: &Array) -> Result<Array> {
        Ok(match &self.table {
            Linear::Dense { weight, .. } => weight.take_axis(tokens, 0)?,
            Linear::Quantized { weight, scales, biases, group_size, bits, .. } => {
                let rows = |a: &Array| a.take_axis(tokens, 0);
                let biases = biases.as_ref().map(rows).transpose()?;
                ops::dequantize(rows(weight)?, rows(scales)?, biases.as_ref(), *group_size, *bits)?
            }
        })
    }

    /// hidden [.., hidden] → float32 logits [.., vocab], for tied embeddings.
    pub fn as_logits(&self, hidden: &Array) -> Result<Array> {
        self.table.forward_f32(hidden)
    }

    pub fn into_dtype(self, dtype: Dtype, dequantize: bool) -> Result<Self> {
        Ok(Self { table: self.table.into_dtype(dtype, dequantize)? })
    }
}
