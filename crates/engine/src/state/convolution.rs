//! A short convolution's window: a gated-convolution layer (LFM2's `conv` layers) mixes each
//! channel's last `kernel` inputs, so between calls it keeps only its last `kernel - 1` inputs.
//! Fixed size, whatever the sequence length; the inputs it dropped are gone, so it cannot be
//! trimmed: prefix reuse restores it from a checkpoint.

use mlx_rs::Array;

#[derive(Clone, Default)]
pub struct ConvolutionWindow {
    /// The last inputs, [B, kernel - 1, channels]; None before the first call (zeros).
    pub inputs: Option<Array>,
    /// Positions absorbed.
    len: usize,
}

impl ConvolutionWindow {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Records that the layer absorbed `positions` more (after updating `inputs`).
    pub fn advance(&mut self, positions: usize) {
        self.len += positions;
    }

    pub fn arrays(&self) -> impl Iterator<Item = &Array> {
        self.inputs.iter()
    }

    pub fn from_array(inputs: Array, len: usize) -> Self {
        Self { inputs: Some(inputs), len }
    }

    pub fn nbytes(&self) -> usize {
        self.arrays().map(Array::nbytes).sum()
    }
}
