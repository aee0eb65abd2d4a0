//! One conformer block of the audio tower: half-step feed-forward, chunked local attention,
//! a causal depthwise light convolution, another half-step feed-forward, a final norm.
//! Activations are clamped to ±`gradient_clipping` before each norm, as transformers does.

use mlx_rs::{nn, ops, Array};

use crate::error::Result;
use crate::model::families::gemma4::towers::audio_attention::AudioAttention;
use crate::model::families::gemma4::towers::config::AudioConfig;
use crate::model::layers::{ClippedLinear, RmsNorm};
use crate::model::media::towers::TowerLoader;

/// transformers' Gemma4RMSNorm default, used where the audio tower doesn't pass its config's.
const DEFAULT_EPS: f32 = 1e-6;

struct FeedForward {
    pre_norm: RmsNorm,
    up: ClippedLinear,
    down: ClippedLinear,
    post_norm: RmsNorm,
    residual_weight: Array,
}

struct LightConv {
    pre_norm: RmsNorm,
    start: ClippedLinear,
    /// Depthwise [hidden, kernel, 1] (channels last).
    conv: Array,
    kernel: i32,
    conv_norm: RmsNorm,
    end: ClippedLinear,
}

pub struct ConformerLayer {
    ff1: FeedForward,
    pre_attention_norm: RmsNorm,
    attention: AudioAttention,
    post_attention_norm: RmsNorm,
    conv: LightConv,
    ff2: FeedForward,
    out_norm: RmsNorm,
    clip: f32,
}

impl ConformerLayer {
    pub fn load(l: &mut TowerLoader, p: &str, c: &AudioConfig) -> Result<Self> {
        let clip = c.use_clipped_linears;
        let h = c.hidden_size as i32;
        let mut ff = |name: &str| -> Result<FeedForward> {
            let f = format!("{p}.{name}");
            Ok(FeedForward {
                pre_norm: l.norm_shaped(&format!("{f}.pre_layer_norm.weight"), DEFAULT_EPS, h)?,
                up: l.clipped_shaped(&format!("{f}.ffw_layer_1"), clip, 4 * h, h)?,
                down: l.clipped_shaped(&format!("{f}.ffw_layer_2"), clip, h, 4 * h)?,
                post_norm: l.norm_shaped(&format!("{f}.post_layer_norm.weight"), DEFAULT_EPS, h)?,
                residual_weight: Array::from_f32(c.residual_weight).as_dtype(l.dtype)?,
            })
        };
        let (ff1, ff2) = (ff("feed_forward1")?, ff("feed_forward2")?);
        let lc = format!("{p}.lconv1d");
        let conv = LightConv {
            pre_norm: l.norm_shaped(&format!("{lc}.pre_layer_norm.weight"), c.rms_norm_eps, h)?,
            start: l.clipped_shaped(&format!("{lc}.linear_start"), clip, 2 * h, h)?,
            conv: l.conv_shaped(&format!("{lc}.depthwise_conv1d.weight"), 1, &[h, c.conv_kernel_size as i32, 1])?,
            kernel: c.conv_kernel_size as i32,
            conv_norm: l.norm_shaped(&format!("{lc}.conv_norm.weight"), c.rms_norm_eps, h)?,
            end: l.clipped_shaped(&format!("{lc}.linear_end"), clip, h, h)?,
        };
        Ok(Self {
            ff1,
            pre_attention_norm: l.norm_shaped(&format!("{p}.norm_pre_attn.weight"), DEFAULT_EPS, h)?,
            attention: AudioAttention::load(l, &format!("{p}.self_attn"), c)?,
            post_attention_norm: l.norm_shaped(&format!("{p}.norm_post_attn.weight"), DEFAULT_EPS, h)?,
            conv,
            ff2,
            out_norm: l.norm_shaped(&format!("{p}.norm_out.weight"), DEFAULT_EPS, h)?,
            clip: c.clip(),
        })
    }

    pub fn attention(&self) -> &AudioAttention {
        &self.attention
    }

    /// x [1, T, hidden]; `positions` and `allowed` as `AudioAttention::forward` takes them.
    pub fn forward(&self, x: &Array, positions: &Array, allowed: &Array) -> Result<Array> {
        let h = self.ff1.forward(x, self.clip)?;
        let a = self.pre_attention_norm.forward(&clamp(&h, self.clip)?)?;
        let a = self.attention.forward(&a, positions, allowed)?;
        let h = ops::add(&self.post_attention_norm.forward(&clamp(&a, self.clip)?)?, &h)?;
        let h = self.conv.forward(&h, self.clip)?;
        let h = self.ff2.forward(&h, self.clip)?;
        self.out_norm.forward(&clamp(&h, self.clip)?)
    }

    pub fn arrays(&self) -> Vec<&Array> {
        let mut all = self.ff1.arrays();
        all.extend(self.ff2.arrays());
        all.extend(self.attention.arrays());
        all.extend(self.conv.arrays());
        all.extend([&self.pre_attention_norm, &self.post_attention_norm, &self.out_norm].map(RmsNorm::weight));
        all
    }
}

/// Clamps to ±`bound` (in x's dtype, where a bound past its range becomes infinite: no clamp).
fn clamp(x: &Array, bound: f32) -> Result<Array> {
    let limit = |v: f32| Array::from_f32(v).as_dtype(x.dtype());
    Ok(ops::maximum(&ops::minimum(x, limit(bound)?)?, limit(-bound)?)?)
}

impl FeedForward {
    fn forward(&self, x: &Array, clip: f32) -> Result<Array> {
        let h = self.pre_norm.forward(&clamp(x, clip)?)?;
        let h = self.down.forward(&nn::silu(&self.up.forward(&h)?)?)?;
        let h = self.post_norm.forward(&clamp(&h, clip)?)?;
        Ok(ops::add(&ops::multiply(&h, &self.residual_weight)?, x)?)
    }

    fn arrays(&self) -> Vec<&Array> {
        let mut all = self.up.arrays();
        all.extend(self.down.arrays());
        all.extend([self.pre_norm.weight(), self.post_norm.weight(), &self.residual_weight]);
        all
    }
}

impl LightConv {
    fn forward(&self, x: &Array, clip: f32) -> Result<Array> {
        let h = nn::glu(&self.start.forward(&self.pre_norm.forward(x)?)?, -1)?;
        // Causal: pad kernel - 1 frames before, none after.
        let h = ops::pad(&h, &[(0, 0), (self.kernel - 1, 0), (0, 0)], None, None)?;
        let h = ops::conv1d(&h, &self.conv, None, None, None, h.dim(-1))?;
        let h = nn::silu(&self.conv_norm.forward(&clamp(&h, clip)?)?)?;
        Ok(ops::add(&self.end.forward(&h)?, x)?)
    }

    fn arrays(&self) -> Vec<&Array> {
        let mut all = self.start.arrays();
        all.extend(self.end.arrays());
        all.extend([&self.conv, self.pre_norm.weight(), self.conv_norm.weight()]);
        all
    }
}
