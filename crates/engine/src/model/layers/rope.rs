//! Rotary position embeddings, with the scaling variants checkpoints ask for.

use std::sync::OnceLock;

use mlx_rs::{fast, ops, Array};

use crate::error::Result;
use crate::model::config::{RopeConfig, RopeScaling};
use crate::model::layers::cpu_attention::RopeTable;

pub struct Rope {
    dims: i32,
    traditional: bool,
    base: Option<f32>,
    scale: f32,
    /// Per-pair periods, when the scaling is not a plain base (`llama3`, `proportional`, `yarn`).
    freqs: Option<Array>,
    /// Queries and keys multiplied by this before rotating (`yarn`'s attention factor, which
    /// transformers applies to cos and sin).
    mscale: f32,
    /// The same as the decode kernels take it, made on first use.
    table: OnceLock<Option<RopeTable>>,
}

impl Rope {
    pub fn new(dims: usize, config: &RopeConfig, traditional: bool) -> Self {
        let dims_i = dims as i32;
        let plain = |scale: f32| Self {
            dims: dims_i,
            traditional,
            base: Some(config.theta),
            scale,
            freqs: None,
            mscale: 1.0,
            table: OnceLock::new(),
        };
        // Scalings that give each dimension its own period.
        let with_periods = |freqs: Vec<f32>, mscale: f32| Self {
            dims: dims_i,
            traditional,
            base: None,
            scale: 1.0,
            freqs: Some(Array::from_slice(&freqs, &[freqs.len() as i32])),
            mscale,
            table: OnceLock::new(),
        };
        match config.scaling {
            RopeScaling::None => plain(1.0),
            RopeScaling::Linear { factor } => plain(1.0 / factor),
            RopeScaling::Llama3 { factor, low_freq_factor, high_freq_factor, original_max_position } => {
                with_periods(llama3_periods(dims, config.theta, factor, low_freq_factor, high_freq_factor, original_max_position), 1.0)
            }
            RopeScaling::Proportional { factor, partial_rotary_factor } => {
                with_periods(proportional_periods(dims, config.theta, factor, partial_rotary_factor), 1.0)
            }
            RopeScaling::Yarn { factor, beta_fast, beta_slow, original_max_position, truncate, attention_factor } => with_periods(
                yarn_periods(dims, config.theta, factor, beta_fast, beta_slow, original_max_position, truncate),
                attention_factor,
            ),
        }
    }

    /// x is [B, heads, L, head_dim]; `offset` is the position of its first token.
    pub fn forward(&self, x: &Array, offset: usize) -> Result<Array> {
        let scaled;
        let x = if self.mscale == 1.0 {
            x
        } else {
            scaled = ops::multiply(x, Array::from_f32(self.mscale).as_dtype(x.dtype())?)?;
            &scaled
        };
        Ok(fast::rope(x, self.dims, self.traditional, self.base, self.scale, offset as i32, self.freqs.as_ref())?)
    }

    /// These parameters for the CPU decode kernels, with the inverse frequencies computed as
    /// MLX's RoPE computes them (the same ops, so a kernel's rotation equals `forward`'s bit
    /// for bit); None if they could not be computed, or where the rotation also scales (the
    /// kernels do not).
    pub fn table(&self) -> Option<&RopeTable> {
        if self.mscale != 1.0 {
            return None;
        }
        self.table
            .get_or_init(|| {
                let inv_freq = self.inverse_frequencies().map_err(|e| tracing::warn!("RoPE table: {e}")).ok()?;
                Some(RopeTable { dims: self.dims as usize, traditional: self.traditional, scale: self.scale, inv_freq })
            })
            .as_ref()
    }

    /// MLX's fallback RoPE: 1 / freqs when given, else exp(-i · ln(base) / half) for pair i.
    fn inverse_frequencies(&self) -> Result<Vec<f32>> {
        let half = self.dims / 2;
        let inv = match (&self.freqs, self.base) {
            (Some(freqs), _) => ops::reciprocal(freqs)?,
            (None, Some(base)) => {
                let steps: Vec<f32> = (0..half).map(|i| -(i as f32)).collect();
                let steps = Array::from_slice(&steps, &[half]);
                ops::exp(&ops::multiply(&steps, Array::from_f32(base.ln() / half as f32))?)?
            }
            (None, None) => return Err(crate::error::EngineError::Internal("RoPE without a base or frequencies".into())),
        };
        inv.eval()?;
        Ok(inv.as_slice::<f32>().to_vec())
    }
}

/// The `llama3` rope type's frequency rescaling, expressed as periods (MLX's `freqs` convention): long
/// wavelengths are stretched by `factor`, short ones kept, and a smooth ramp joins them.
fn llama3_periods(dims: usize, theta: f32, factor: f32, low: f32, high: f32, original_max: f32) -> Vec<f32> {
    let low_freq_wavelen = original_max / low;
    let high_freq_wavelen = original_max / high;
    (0..dims)
        .step_by(2)
        .map(|i| {
            let period = theta.powf(i as f32 / dims as f32);
            let wavelen = 2.0 * std::f32::consts::PI * period;
            if wavelen > low_freq_wavelen {
                period * factor
            } else if wavelen < high_freq_wavelen {
                period
            } else {
                let smooth = (original_max / wavelen - low) / (high - low);
                period / ((1.0 - smooth) / factor + smooth)
            }
        })
        .collect()
}

/// YaRN's frequencies as periods, as transformers' `_compute_yarn_parameters` makes them: pair i
/// blends the unchanged frequency and the one slowed by `factor`, wholly slowed below the
/// dimension where a wavelength fits `beta_slow` times into `original_max`, unchanged above the
/// one where it fits `beta_fast` times, a linear ramp between.
fn yarn_periods(dims: usize, theta: f32, factor: f32, beta_fast: f32, beta_slow: f32, original_max: f32, truncate: bool) -> Vec<f32> {
    let d = dims as f64;
    let correction =
        |rotations: f32| d * (original_max as f64 / (rotations as f64 * 2.0 * std::f64::consts::PI)).ln() / (2.0 * (theta as f64).ln());
    let (mut low, mut high) = (correction(beta_fast), correction(beta_slow));
    if truncate {
        (low, high) = (low.floor(), high.ceil());
    }
    let (low, mut high) = (low.max(0.0) as f32, high.min(d - 1.0) as f32);
    if low == high {
        high += 0.001;
    }
    (0..dims / 2)
        .map(|i| {
            let pos_freq = theta.powf((2 * i) as f32 / dims as f32);
            let (extrapolation, interpolation) = (1.0 / pos_freq, 1.0 / (factor * pos_freq));
            let extrapolation_share = 1.0 - ((i as f32 - low) / (high - low)).clamp(0.0, 1.0);
            1.0 / (interpolation * (1.0 - extrapolation_share) + extrapolation * extrapolation_share)
        })
        .collect()
}

/// Proportional RoPE as periods over the whole head: the first
/// `partial × dims / 2` pairs have the usual periods `theta^(2i/dims) × factor`, the others an
/// infinite period (frequency 0: cos 1, sin 0), so they pass through unrotated. Pairs are
/// (i, i + dims/2) as in transformers' rotate_half, which is why this is not `dims` = the
/// rotated width.
fn proportional_periods(dims: usize, theta: f32, factor: f32, partial: f32) -> Vec<f32> {
    let rotated = (partial * dims as f32 / 2.0) as usize;
    (0..dims / 2).map(|i| if i < rotated { theta.powf((2 * i) as f32 / dims as f32) * factor } else { f32::INFINITY }).collect()
}
