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
        let l = x.dim(1);
        let padded = self.with_previous(x, state)?;
        Ok((self.mix(&padded, l)?, self.tail(&padded, l)?))
    }

    /// Several sequences at once, each with its own previous inputs: x [B, L, C], `states[i]`
    /// row i's [1, kernel - 1, C] (None: fresh) → (outputs [B, L, C], each row's inputs to
    /// keep). The products run once for the batch; what a row keeps lies in a buffer of its
    /// own (not a view of a batch-sized one, which a finished row would keep alive). Row i's
    /// results are what `forward` gives for it alone.
    pub fn forward_rows(&self, x: &Array, states: &[Option<&Array>]) -> Result<(Array, Vec<Array>)> {
        if states.len() == 1 {
            let (out, kept) = self.forward(x, states[0])?;
            return Ok((out, vec![kept]));
        }
        let l = x.dim(1);
        let padded = states
            .iter()
            .enumerate()
            .map(|(i, state)| self.with_previous(&x.index((i as i32..i as i32 + 1, .., ..)), *state))
            .collect::<Result<Vec<_>>>()?;
        let out = self.mix(&ops::concatenate(&padded, 0)?, l)?;
        let kept = padded.iter().map(|p| self.tail(p, l)).collect::<Result<Vec<_>>>()?;
        Ok((out, kept))
    }

    /// The previous inputs (zeros for a fresh sequence) followed by the new ones x [B, L, C]:
    /// [B, kernel - 1 + L, C].
    fn with_previous(&self, x: &Array, state: Option<&Array>) -> Result<Array> {
        let keep = self.kernel - 1;
        Ok(match state {
            _ if keep == 0 => x.clone(),
            Some(s) => ops::concatenate(&[s, x], 1)?,
            None => ops::concatenate(&[&ops::zeros_dtype(&[x.dim(0), keep, x.dim(2)], x.dtype())?, x], 1)?,
        })
    }

    /// The outputs of the last `l` positions of `padded` [B, kernel - 1 + l, C].
    fn mix(&self, padded: &Array, l: i32) -> Result<Array> {
        let mut out: Option<Array> = None;
        for j in 0..self.kernel {
            let term = ops::multiply(padded.index((.., j..j + l, ..)), self.weight.index(j))?;
            out = Some(match out {
                None => term,
                Some(acc) => ops::add(&acc, &term)?,
            });
        }
        Ok(out.expect("kernel ≥ 1"))
    }

    /// The last `kernel - 1` inputs of `padded`, to keep.
    fn tail(&self, padded: &Array, l: i32) -> Result<Array> {
        let tail = padded.index((.., l.., ..));
        // After a long chunk the tail is a small view of a large buffer: copy it, so what the
        // layer keeps between calls is kernel-sized.
        Ok(if l > self.kernel - 1 { crate::state::own_copy(&tail)? } else { tail })
    }

    pub fn arrays(&self) -> Vec<&Array> {
        vec![&self.weight]
    }
}
