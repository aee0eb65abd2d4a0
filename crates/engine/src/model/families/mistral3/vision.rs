//! The Pixtral vision tower and Mistral 3's projector, as transformers 5.25's
//! `PixtralVisionModel` and `Mistral3MultiModalProjector` compute them for one image:
//!
//! 1. `patch_conv`: a convolution whose kernel is its stride (no bias), so a linear layer over
//!    each flattened patch (channel, row, column), patches row by row;
//! 2. `ln_pre`: RMS norm (ε 1e-5);
//! 3. layers: RMS-normed attention (`attention_norm`, 2-D RoPE: of each head's first half, the
//!    first quarter of the dimensions turns with the patch's row through the even frequencies,
//!    the second with its column through the odd ones; the second half repeats it, paired
//!    rotate-half) and RMS-normed gated MLP (`ffn_norm`; silu or gelu), both residual. One
//!    image's patches attend to each other only (transformers' block-diagonal mask over a
//!    batch);
//! 4. `vision_feature_layer` picks a hidden state (0: `ln_pre`'s output, k: layer k's);
//! 5. the projector: RMS norm (the text model's ε), the patch merger (each merge × merge block
//!    of patches, as `unfold` lays it out: channel-major, then the block's rows and columns,
//!    blocks row by row; then `merging_layer`), `linear_1`, the activation, `linear_2`.

use mlx_rs::{fast, nn, ops, Array, Dtype};

use crate::error::{EngineError, Result};
use crate::model::layers::{Linear, RmsNorm};
use crate::model::media::towers::TowerLoader;

use super::config::{Mistral3Args, VisionConfig};

/// Pixtral's RMS norms (`ln_pre`, `attention_norm`, `ffn_norm`) have a fixed ε.
const TOWER_EPS: f32 = 1e-5;

/// Queries attended at a time: a large image's scores ([heads, patches, patches]: 9 GB for
/// Mistral Small's 110 × 110 patches) would otherwise be held at once where attention is not
/// fused (the CPU). Each query's row is the same either way.
const QUERY_CHUNK: i32 = 2048;

/// Full attention of q [1, heads, n, d] over k and v, `chunk` queries at a time.
fn attend_in_chunks(q: &Array, k: &Array, v: &Array, scale: f32, chunk: i32) -> Result<Array> {
    let n = q.dim(2);
    if n <= chunk {
        return Ok(fast::scaled_dot_product_attention(q, k, v, scale, None, None)?);
    }
    let bounds: Vec<i32> = (chunk..n).step_by(chunk as usize).collect();
    let parts = q
        .split_at_indices(&bounds, 2)?
        .iter()
        .map(|part| Ok(fast::scaled_dot_product_attention(part, k, v, scale, None, None)?))
        .collect::<Result<Vec<_>>>()?;
    Ok(ops::concatenate(&parts, 2)?)
}

struct Layer {
    attention_norm: RmsNorm,
    q: Linear,
    k: Linear,
    v: Linear,
    o: Linear,
    ffn_norm: RmsNorm,
    gate: Linear,
    up: Linear,
    down: Linear,
}

struct Projector {
    norm: RmsNorm,
    merging: Linear,
    linear_1: Linear,
    linear_2: Linear,
    gelu: bool,
}

pub struct PixtralTower {
    config: VisionConfig,
    patch_conv: Linear,
    ln_pre: RmsNorm,
    /// Only the layers up to the selected hidden state.
    layers: Vec<Layer>,
    projector: Projector,
    merge: usize,
    /// `head_dim / 2` float32 frequencies, even ones first then odd ones (transformers' order).
    inv_freq: Vec<f32>,
    dtype: Dtype,
}

impl PixtralTower {
    /// The tower under `prefix` (transformers' `vision_tower.`, mlx-vlm's
    /// `vision_tower.vision_model.`) and `multi_modal_projector.*` from the checkpoint; the
    /// layers past the selected hidden state are dropped unread.
    pub fn load(l: &mut TowerLoader, prefix: &str, config: &VisionConfig, args: &Mistral3Args, text_hidden: usize) -> Result<Self> {
        let (d, p) = (config.hidden_size as i32, config.patch_size as i32);
        let total = config.num_hidden_layers as i64;
        let selected = if args.vision_feature_layer < 0 { total + 1 + args.vision_feature_layer } else { args.vision_feature_layer };
        if !(0..=total).contains(&selected) {
            return Err(l.corrupt(format!(
                "vision_feature_layer {} is outside the tower's {} hidden states",
                args.vision_feature_layer,
                total + 1
            )));
        }
        let patch_dim = 3 * p * p;
        // Channels-last ([out, row, column, in], whichever way it was stored), then back to
        // transformers' [out, in, row, column] to flatten each patch as (channel, row, column).
        let weight = l.conv_shaped(&format!("{prefix}patch_conv.weight"), 3, &[d, p, p, 3])?;
        let patch_conv = Linear::Dense { weight: weight.transpose_axes(&[0, 3, 1, 2])?.reshape(&[d, patch_dim])?, bias: None };
        let ln_pre = l.norm_shaped(&format!("{prefix}ln_pre.weight"), TOWER_EPS, d)?;
        let width = config.intermediate_size as i32;
        let mut layers = Vec::with_capacity(selected as usize);
        for i in 0..total as usize {
            let pre = format!("{prefix}transformer.layers.{i}");
            if i as i64 >= selected {
                l.weights.drop_prefixed(&[&format!("{pre}.")]);
                continue;
            }
            let a = format!("{pre}.attention");
            let f = format!("{pre}.feed_forward");
            layers.push(Layer {
                attention_norm: l.norm_shaped(&format!("{pre}.attention_norm.weight"), TOWER_EPS, d)?,
                q: l.linear_shaped(&format!("{a}.q_proj"), d, d)?,
                k: l.linear_shaped(&format!("{a}.k_proj"), d, d)?,
                v: l.linear_shaped(&format!("{a}.v_proj"), d, d)?,
                o: l.linear_shaped(&format!("{a}.o_proj"), d, d)?,
                ffn_norm: l.norm_shaped(&format!("{pre}.ffn_norm.weight"), TOWER_EPS, d)?,
                gate: l.linear_shaped(&format!("{f}.gate_proj"), width, d)?,
                up: l.linear_shaped(&format!("{f}.up_proj"), width, d)?,
                down: l.linear_shaped(&format!("{f}.down_proj"), d, width)?,
            });
        }
        let m = args.spatial_merge_size as i32;
        let text = text_hidden as i32;
        let pm = "multi_modal_projector";
        let projector = Projector {
            norm: l.norm_shaped(&format!("{pm}.norm.weight"), args.text_rms_norm_eps, d)?,
            merging: l.linear_shaped(&format!("{pm}.patch_merger.merging_layer"), d, d * m * m)?,
            linear_1: l.linear_shaped(&format!("{pm}.linear_1"), text, d)?,
            linear_2: l.linear_shaped(&format!("{pm}.linear_2"), text, text)?,
            gelu: args.projector_hidden_act == "gelu",
        };
        let head_dim = config.head_dim();
        let theta = config.rope_theta() as f64;
        let freqs: Vec<f32> = (0..head_dim).step_by(2).map(|i| (1.0 / theta.powf(i as f64 / head_dim as f64)) as f32).collect();
        let inv_freq = freqs.iter().step_by(2).chain(freqs.iter().skip(1).step_by(2)).copied().collect();
        Ok(Self { config: config.clone(), patch_conv, ln_pre, layers, projector, merge: args.spatial_merge_size, inv_freq, dtype: l.dtype })
    }

    pub fn arrays(&self) -> Vec<&Array> {
        let mut all: Vec<&Array> = self.patch_conv.arrays();
        all.push(self.ln_pre.weight());
        for b in &self.layers {
            all.extend([b.attention_norm.weight(), b.ffn_norm.weight()]);
            all.extend([&b.q, &b.k, &b.v, &b.o, &b.gate, &b.up, &b.down].into_iter().flat_map(|l| l.arrays()));
        }
        let p = &self.projector;
        all.push(p.norm.weight());
        all.extend([&p.merging, &p.linear_1, &p.linear_2].into_iter().flat_map(|l| l.arrays()));
        all
    }

    /// One image [3, height, width] (the processor's, sides whole multiples of patch × merge) →
    /// its soft tokens' rows [rows × columns, text hidden], merged blocks row by row.
    pub fn forward(&self, pixels: &Array) -> Result<Array> {
        let (p, m) = (self.config.patch_size as i32, self.merge as i32);
        let [c, h, w] = pixels.shape() else {
            return Err(EngineError::Internal(format!("pixels of shape {:?}; the tower reads [3, height, width]", pixels.shape())));
        };
        let (c, h, w) = (*c, *h, *w);
        if c != 3 || h % (p * m) != 0 || w % (p * m) != 0 || h == 0 || w == 0 {
            return Err(EngineError::Internal(format!("pixels of shape {:?} are not whole {}-pixel blocks", pixels.shape(), p * m)));
        }
        let (rows, cols) = (h / p, w / p);
        let patches = pixels
            .as_dtype(self.dtype)?
            .reshape(&[3, rows, p, cols, p])?
            .transpose_axes(&[1, 3, 0, 2, 4])?
            .reshape(&[rows * cols, 3 * p * p])?;
        let mut x = self.ln_pre.forward(&self.patch_conv.forward(&patches)?)?;
        let (cos, sin) = self.rotation(rows as usize, cols as usize)?;
        for layer in &self.layers {
            x = self.layer(layer, &x, &cos, &sin)?;
        }
        self.project(&x, rows, cols)
    }

    /// cos and sin [patches, head_dim] in the compute dtype.
    fn rotation(&self, rows: usize, cols: usize) -> Result<(Array, Array)> {
        let quarter = self.inv_freq.len() / 2;
        let head_dim = self.config.head_dim();
        let mut angles = Vec::with_capacity(rows * cols * head_dim);
        for r in 0..rows {
            for c in 0..cols {
                let half: Vec<f32> =
                    self.inv_freq.iter().enumerate().map(|(k, f)| if k < quarter { r as f32 * f } else { c as f32 * f }).collect();
                angles.extend_from_slice(&half);
                angles.extend_from_slice(&half);
            }
        }
        let angles = Array::from_slice(&angles, &[(rows * cols) as i32, head_dim as i32]);
        Ok((ops::cos(&angles)?.as_dtype(self.dtype)?, ops::sin(&angles)?.as_dtype(self.dtype)?))
    }

    fn layer(&self, b: &Layer, x: &Array, cos: &Array, sin: &Array) -> Result<Array> {
        let n = x.dim(0);
        let heads = self.config.num_attention_heads as i32;
        let d = self.config.head_dim() as i32;
        let normed = b.attention_norm.forward(x)?;
        // [n, d] heads-major → [1, heads, n, head_dim]; the rotation broadcasts over heads.
        let split = |a: Array| -> Result<Array> { Ok(a.reshape(&[1, n, heads, d])?.transpose_axes(&[0, 2, 1, 3])?) };
        let rope = |a: Array| -> Result<Array> {
            let mut halves = a.split_at_indices(&[d / 2], -1)?.into_iter();
            let (a1, a2) = (halves.next().expect("first half"), halves.next().expect("second half"));
            let rotated = ops::concatenate(&[ops::negative(&a2)?, a1], -1)?;
            Ok(ops::add(&ops::multiply(&a, cos)?, &ops::multiply(&rotated, sin)?)?)
        };
        let q = rope(split(b.q.forward(&normed)?)?)?;
        let k = rope(split(b.k.forward(&normed)?)?)?;
        let v = split(b.v.forward(&normed)?)?;
        let out = attend_in_chunks(&q, &k, &v, (d as f32).powf(-0.5), QUERY_CHUNK)?;
        let out = out.transpose_axes(&[0, 2, 1, 3])?.reshape(&[n, heads * d])?;
        let x = ops::add(x, &b.o.forward(&out)?)?;
        let normed = b.ffn_norm.forward(&x)?;
        let gate = b.gate.forward(&normed)?;
        let gate = if self.config.hidden_act == "silu" { nn::silu(&gate)? } else { nn::gelu(&gate)? };
        let hidden = ops::multiply(&gate, &b.up.forward(&normed)?)?;
        Ok(ops::add(&x, &b.down.forward(&hidden)?)?)
    }

    /// The projector over one image's patch rows [rows × cols, hidden].
    fn project(&self, x: &Array, rows: i32, cols: i32) -> Result<Array> {
        let p = &self.projector;
        let m = self.merge as i32;
        let dim = self.config.hidden_size as i32;
        let x = p.norm.forward(x)?;
        // unfold's layout: for each block (row-major), channel-major then the block's row, column.
        let blocks = x
            .reshape(&[rows / m, m, cols / m, m, dim])?
            .transpose_axes(&[0, 2, 4, 1, 3])?
            .reshape(&[(rows / m) * (cols / m), dim * m * m])?;
        let merged = p.merging.forward(&blocks)?;
        let hidden = p.linear_1.forward(&merged)?;
        let hidden = if p.gelu { nn::gelu(&hidden)? } else { nn::silu(&hidden)? };
        p.linear_2.forward(&hidden)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attention_in_chunks_equals_attention_at_once() {
        let random = |seed: u64| {
            let key = mlx_rs::random::key(seed).unwrap();
            mlx_rs::random::normal::<f32>(&[1, 2, 37, 8], None, None, &key).unwrap()
        };
        let (q, k, v) = (random(1), random(2), random(3));
        let whole = attend_in_chunks(&q, &k, &v, 0.35, 64).unwrap();
        let chunked = attend_in_chunks(&q, &k, &v, 0.35, 10).unwrap();
        assert_eq!(chunked.shape(), whole.shape());
        let diff = ops::abs(ops::subtract(&whole, &chunked).unwrap()).unwrap().max(None).unwrap().item_cast::<f32>();
        assert!(diff < 1e-6, "chunked attention differs by {diff}");
    }
}
