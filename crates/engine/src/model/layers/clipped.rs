//! A linear layer whose input and output may be clamped to stored bounds (some media towers:
//! `input_min`/`input_max`/`output_min`/`output_max` beside `linear.weight`).

use mlx_rs::{ops, Array};

use crate::error::Result;
use crate::model::layers::Linear;

pub struct ClippedLinear {
    pub linear: Linear,
    /// (min, max) applied to the input, then to the output; `None`: not clamped.
    pub input: Option<(Array, Array)>,
    pub output: Option<(Array, Array)>,
}

impl ClippedLinear {
    pub fn forward(&self, x: &Array) -> Result<Array> {
        let x = clamp(x, self.input.as_ref())?;
        clamp(&self.linear.forward(&x)?, self.output.as_ref())
    }

    pub fn arrays(&self) -> Vec<&Array> {
        let bounds = self.input.iter().chain(&self.output).flat_map(|(lo, hi)| [lo, hi]);
        self.linear.arrays().into_iter().chain(bounds).collect()
    }
}

fn clamp(x: &Array, bounds: Option<&(Array, Array)>) -> Result<Array> {
    Ok(match bounds {
        Some((lo, hi)) => ops::maximum(&ops::minimum(x, hi)?, lo)?,
        None => x.clone(),
    })
}
