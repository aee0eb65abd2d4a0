//! Axial (2-D) rotary embeddings for image patches (vision towers): the head splits in
//! two halves, the first rotated by the patch's x, the second by its y, each half with the
//! usual rotate-half pairing and the same frequencies `theta^(-2i / (head_dim / 2))`.

use mlx_rs::{ops, Array};

use crate::error::Result;

pub struct AxialRope {
    head_dim: usize,
    inv_freq: Vec<f32>,
}

/// Per-position cos and sin, [N, head_dim] each, to broadcast over heads.
pub struct AxialTables {
    cos: Array,
    sin: Array,
}

impl AxialRope {
    pub fn new(head_dim: usize, theta: f32) -> Self {
        let spatial = head_dim / 2;
        let inv_freq = (0..spatial).step_by(2).map(|i| 1.0 / theta.powf(i as f32 / spatial as f32)).collect();
        Self { head_dim, inv_freq }
    }

    /// Tables for patches at `positions` ((x, y) each; padding patches may carry anything).
    pub fn tables(&self, positions: &[[i32; 2]]) -> AxialTables {
        let n = positions.len();
        let mut cos = Vec::with_capacity(n * self.head_dim);
        let mut sin = Vec::with_capacity(n * self.head_dim);
        for p in positions {
            // Layout per position: [x freqs, x freqs, y freqs, y freqs].
            for axis in [p[0], p[0], p[1], p[1]] {
                for f in &self.inv_freq {
                    let angle = axis as f32 * f;
                    cos.push(angle.cos());
                    sin.push(angle.sin());
                }
            }
        }
        let shape = [n as i32, self.head_dim as i32];
        AxialTables { cos: Array::from_slice(&cos, &shape), sin: Array::from_slice(&sin, &shape) }
    }
}

impl AxialTables {
    /// x is [B, N, heads, head_dim]; the tables broadcast over B and heads.
    pub fn apply(&self, x: &Array) -> Result<Array> {
        let d = x.dim(-1);
        let q = x.split_equal(4, -1)?;
        let rotated = ops::concatenate(&[ops::negative(&q[1])?, q[0].clone(), ops::negative(&q[3])?, q[2].clone()], -1)?;
        let n = self.cos.dim(0);
        let cos = self.cos.reshape(&[1, n, 1, d])?.as_dtype(x.dtype())?;
        let sin = self.sin.reshape(&[1, n, 1, d])?.as_dtype(x.dtype())?;
        Ok(ops::add(&ops::multiply(x, &cos)?, &ops::multiply(&rotated, &sin)?)?)
    }
}
