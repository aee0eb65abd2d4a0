//! A causal depthwise 1-D convolution with its state: each channel mixes its own last `kernel`
//! inputs (the short convolution in front of linear-attention layers such as Gated DeltaNet).
//! Between calls the layer keeps its last `kernel - 1` inputs, so a sequence fed in pieces gives
//! what one pass gives.

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, Array};

use crate::error::Result;

pub struct CausalConv1d {
    /// [kernel, channels]: row j weighs the input j - (kernel - 1) positions back.
    weight: Array,
    kernel: i32,
}

impl CausalConv1d {
    /// From a [channels, kernel] weight (PyTorch's depthwise `[C, 1, K]` without its middle axis).
    pub fn new(weight: &Array) -> Result<Self> {
        let kernel = weight.dim(1);
        Ok(Self { weight: weight.t().contiguous()?, kernel })
    }

    pub fn kernel(&self) -> usize {
        self.kernel as usize
    }

    /// x [B, L, C] and the previous inputs [B, kernel - 1, C] (None: a fresh sequence, zeros)
    /// → (outputs [B, L, C], the inputs to keep for the next call).
    pub fn forward(&self, x: &Array, state: Option<&Array>) -> Result<(Array, Array)> {
        let (b, l, c) = (x.dim(0), x.dim(1), x.dim(2));
        let keep = self.kernel - 1;
        let padded = match state {
            _ if keep == 0 => x.clone(),
            Some(s) => ops::concatenate(&[s, x], 1)?,
            None => ops::concatenate(&[&ops::zeros_dtype(&[b, keep, c], x.dtype())?, x], 1)?,
        };
        let mut out: Option<Array> = None;
        for j in 0..self.kernel {
            let term = ops::multiply(padded.index((.., j..j + l, ..)), self.weight.index(j))?;
            out = Some(match out {
                None => term,
                Some(acc) => ops::add(&acc, &term)?,
            });
        }
        let tail = padded.index((.., l.., ..));
        // After a long chunk the tail is a small view of a large buffer: copy it, so what the
        // layer keeps between calls is kernel-sized.
        let tail = if l > keep { crate::state::own_copy(&tail)? } else { tail };
        Ok((out.expect("kernel ≥ 1"), tail))
    }

    pub fn arrays(&self) -> Vec<&Array> {
        vec![&self.weight]
    }
}
