//! The audio tower's front end: two 3×3 stride-2 convolutions over (time, mel) — each input
//! masked by the frame mask, each followed by a channel LayerNorm (no bias) and ReLU — then
//! (mel/4 × channels) flattened per frame and projected to the tower's hidden size. Time and
//! mask shrink 4×.

use mlx_rs::{fast, nn, ops, Array};

use crate::error::Result;
use crate::model::families::gemma4::towers::config::AudioConfig;
use crate::model::layers::Linear;
use crate::model::media::towers::TowerLoader;

struct ConvLayer {
    /// [out, 3, 3, in] (channels last).
    weight: Array,
    norm: Array,
}

pub struct Subsample {
    layers: [ConvLayer; 2],
    input_proj: Linear,
    eps: f32,
}

impl Subsample {
    pub fn load(l: &mut TowerLoader, c: &AudioConfig) -> Result<Self> {
        // `AudioConfig::validate` has checked there are two.
        let (first, second) = (c.subsampling_conv_channels[0] as i32, c.subsampling_conv_channels[1] as i32);
        let p = "audio_tower.subsample_conv_projection";
        let mut layer = |i: usize, input: i32, output: i32| -> Result<ConvLayer> {
            Ok(ConvLayer {
                weight: l.conv_shaped(&format!("{p}.layer{i}.conv.weight"), input, &[output, 3, 3, input])?,
                norm: l.take_shaped(&format!("{p}.layer{i}.norm.weight"), &[output])?,
            })
        };
        let layers = [layer(0, 1, first)?, layer(1, first, second)?];
        let projected = c.subsampled_bins() as i32 * second;
        let input_proj = l.linear_shaped(&format!("{p}.input_proj_linear"), c.hidden_size as i32, projected)?;
        Ok(Self { layers, input_proj, eps: c.rms_norm_eps })
    }

    /// features [1, T, mel], `mask` per frame (true = real) → ([1, T/4, hidden], its mask).
    pub fn forward(&self, features: &Array, mask: &[bool]) -> Result<(Array, Vec<bool>)> {
        let mut x = features.expand_dims(-1)?;
        let mut mask = mask.to_vec();
        for layer in &self.layers {
            let keep = Array::from_slice(&mask, &[1, mask.len() as i32, 1, 1]).as_dtype(x.dtype())?;
            x = ops::conv2d(&ops::multiply(&x, &keep)?, &layer.weight, (2, 2), (1, 1), None, None)?;
            x = nn::relu(&fast::layer_norm(&x, Some(&layer.norm), None, self.eps)?)?;
            mask = mask.into_iter().step_by(2).collect();
        }
        let (t, f, ch) = (x.dim(1), x.dim(2), x.dim(3));
        Ok((self.input_proj.forward(&x.reshape(&[1, t, f * ch])?)?, mask))
    }

    pub fn arrays(&self) -> Vec<&Array> {
        self.layers.iter().flat_map(|l| [&l.weight, &l.norm]).chain(self.input_proj.arrays()).collect()
    }
}
