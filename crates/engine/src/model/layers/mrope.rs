//! Multimodal RoPE (Qwen2-VL and after): each token has a position on three axes (time, height,
//! width). Of the rotated width's frequencies, every third from 1 (below 3 × the height
//! section) follows height, every third from 2 (below 3 × the width section) follows width, and
//! the rest time, as transformers 5 interleaves them (`mrope_interleaved`). Channels pair as in
//! `rotate_half` (i with i + rotated/2); channels past the rotated width pass through.
//! Text has the same position on every axis, where this is plain 1-D RoPE.

use mlx_rs::{ops, Array, Dtype};

use crate::error::Result;

pub struct MultiAxisRope {
    /// Per frequency: which position axis (0 time, 1 height, 2 width) it follows.
    axis_of_frequency: Vec<i32>,
    /// [rotated / 2] float32: θ^(-2j / rotated), as transformers computes it.
    inv_freq: Array,
}

/// cos and sin [L, rotated] for one forward pass's positions.
pub struct Rotation {
    cos: Array,
    sin: Array,
}

impl MultiAxisRope {
    /// `rotated` leading channels of each head rotate; `section` is `mrope_section` (time,
    /// height, width frequencies).
    pub fn new(rotated: usize, theta: f32, section: [usize; 3]) -> Self {
        let frequencies = rotated / 2;
        let [_, h, w] = section;
        let axis_of_frequency = (0..frequencies)
            .map(|j| match j % 3 {
                1 if j < 3 * h => 1,
                2 if j < 3 * w => 2,
                _ => 0,
            })
            .collect();
        let inv_freq: Vec<f32> = (0..frequencies).map(|j| 1.0 / theta.powf((2 * j) as f32 / rotated as f32)).collect();
        Self { axis_of_frequency, inv_freq: Array::from_slice(&inv_freq, &[frequencies as i32]) }
    }

    /// The rotation for positions [3, L].
    pub fn rotation(&self, positions: &Array) -> Result<Rotation> {
        let axes = Array::from_slice(&self.axis_of_frequency, &[self.axis_of_frequency.len() as i32]);
        // [frequencies, L]: each frequency's axis row, then × its inverse frequency.
        let per_frequency = positions.as_dtype(Dtype::Float32)?.take_axis(&axes, 0)?;
        let angles = ops::multiply(&per_frequency.transpose()?, &self.inv_freq)?;
        let doubled = ops::concatenate(&[angles.clone(), angles], -1)?;
        Ok(Rotation { cos: ops::cos(&doubled)?, sin: ops::sin(&doubled)? })
    }

    /// Positions [3, len] of text tokens from `start` on.
    pub fn text_positions(start: i64, len: i32) -> Result<Array> {
        let row = ops::add(Array::from_iter(0..len, &[len]), Array::from_int(start as i32))?;
        Ok(ops::broadcast_to(&row.expand_dims(0)?, &[3, len])?)
    }
}

impl Rotation {
    /// x [B, heads, L, head_dim] with its first `rotated` channels rotated.
    pub fn apply(&self, x: &Array) -> Result<Array> {
        let rotated = self.cos.dim(-1);
        let head = x.dim(-1);
        let (part, pass) = if rotated == head {
            (x.clone(), None)
        } else {
            let mut parts = x.split_at_indices(&[rotated], -1)?.into_iter();
            (parts.next().expect("rotated channels"), parts.next())
        };
        let mut halves = part.split_at_indices(&[rotated / 2], -1)?.into_iter();
        let (x1, x2) = (halves.next().expect("first half"), halves.next().expect("second half"));
        let turned = ops::concatenate(&[ops::negative(&x2)?, x1], -1)?;
        let cos = self.cos.as_dtype(x.dtype())?;
        let sin = self.sin.as_dtype(x.dtype())?;
        let out = ops::add(&ops::multiply(&part, &cos)?, &ops::multiply(&turned, &sin)?)?;
        Ok(match pass {
            Some(pass) => ops::concatenate(&[out, pass], -1)?,
            None => out,
        })
    }
}
