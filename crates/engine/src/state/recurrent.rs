//! Recurrent state (linear attention, e.g. Gated DeltaNet): a short convolution's last inputs
//! and the recurrent matrix. Fixed size, whatever the sequence length; it summarises every
//! position seen, so it cannot be trimmed: prefix reuse restores it from a checkpoint.

use mlx_rs::Array;

#[derive(Clone, Default)]
pub struct Recurrent {
    /// The convolution's input window, [B, kernel - 1, channels].
    pub conv: Option<Array>,
    /// The recurrent state, [B, heads, key_dim, value_dim].
    pub state: Option<Array>,
    /// Positions absorbed.
    len: usize,
}

impl Recurrent {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Records that the layer absorbed `positions` more (after updating `conv` and `state`).
    pub fn advance(&mut self, positions: usize) {
        self.len += positions;
    }

    pub fn arrays(&self) -> impl Iterator<Item = &Array> {
        self.conv.iter().chain(self.state.iter())
    }

    pub fn from_arrays(conv: Array, state: Array, len: usize) -> Self {
        Self { conv: Some(conv), state: Some(state), len }
    }

    pub fn nbytes(&self) -> usize {
        self.arrays().map(Array::nbytes).sum()
    }
}
