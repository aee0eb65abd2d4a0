//! The Qwen3-VL vision tower, as transformers 5.24's `Qwen3VLVisionModel` computes it:
//!
//! 1. patch embedding: a 3-D convolution whose kernel is its stride (temporal patch × patch ×
//!    patch), so a linear layer over each flattened patch (channel, time, row, column);
//! 2. plus the learned position embedding of a square grid, resampled bilinearly (corners
//!    aligned) to the item's patch grid: each patch takes four table rows with weights;
//! 3. blocks: pre-LayerNorm attention (2-D RoPE: the first half of each head's frequencies
//!    follows the patch's row, the second its column; every frame attends within itself) and
//!    pre-LayerNorm MLP (gelu tanh, or exact where the config says `gelu`), both residual;
//! 4. the merger: LayerNorm per patch, then each 2 × 2 block of patches (adjacent in the
//!    processor's order) concatenated, linear, exact GELU, linear to the text hidden size;
//!    after the `deepstack_visual_indexes` blocks, a deepstack merger does the same with the
//!    LayerNorm over the concatenated block instead.
//!
//! Patches come in the processor's order: merge blocks row by row, and within a block its
//! patches row by row.

use mlx_rs::fast;
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{nn, ops, Array, Dtype};

use crate::error::{EngineError, Result};
use crate::model::layers::Linear;
use crate::model::media::towers::TowerLoader;

use super::config::VisionConfig;

struct LayerNorm {
    weight: Array,
    bias: Array,
    eps: f32,
}

impl LayerNorm {
    fn load(l: &mut TowerLoader, prefix: &str) -> Result<Self> {
        Ok(Self { weight: l.take(&format!("{prefix}.weight"))?, bias: l.take(&format!("{prefix}.bias"))?, eps: 1e-6 })
    }

    fn forward(&self, x: &Array) -> Result<Array> {
        Ok(fast::layer_norm(x, &self.weight, &self.bias, self.eps)?)
    }
}

struct Block {
    norm1: LayerNorm,
    qkv: Linear,
    proj: Linear,
    norm2: LayerNorm,
    fc1: Linear,
    fc2: Linear,
}

struct Merger {
    norm: LayerNorm,
    /// The norm runs over the concatenated 2 × 2 block (deepstack) rather than each patch.
    after_shuffle: bool,
    fc1: Linear,
    fc2: Linear,
}

pub struct VisionTower {
    config: VisionConfig,
    patch_embed: Linear,
    pos_embed: Array,
    blocks: Vec<Block>,
    merger: Merger,
    deepstack: Vec<Merger>,
    /// [head_dim / 4] float32.
    inv_freq: Array,
    dtype: Dtype,
}

/// A preprocessed item: patches in the processor's order and its grid in patches.
pub struct VisionInput<'a> {
    /// [t × h × w, channels × temporal patch × patch²].
    pub patches: &'a Array,
    pub grid: [usize; 3],
}

impl VisionTower {
    /// `visual.*` from the checkpoint.
    pub fn load(l: &mut TowerLoader, config: &VisionConfig) -> Result<Self> {
        let weight = l.take("visual.patch_embed.proj.weight")?;
        let patch_dim = (config.in_channels * config.temporal_patch_size * config.patch_size * config.patch_size) as i32;
        if weight.size() as i32 != config.hidden_size as i32 * patch_dim {
            return Err(l.corrupt(format!(
                "`visual.patch_embed.proj.weight` has shape {:?}; the config's patches need {} × {patch_dim}",
                weight.shape(),
                config.hidden_size
            )));
        }
        let patch_embed = Linear::Dense {
            weight: weight.reshape(&[config.hidden_size as i32, patch_dim])?,
            bias: Some(l.take("visual.patch_embed.proj.bias")?),
        };
        let pos_embed = l.take("visual.pos_embed.weight")?;
        if pos_embed.shape() != [config.num_position_embeddings as i32, config.hidden_size as i32] {
            return Err(l.corrupt(format!("`visual.pos_embed.weight` has shape {:?}", pos_embed.shape())));
        }
        let mut blocks = Vec::with_capacity(config.depth);
        for i in 0..config.depth {
            let p = format!("visual.blocks.{i}");
            blocks.push(Block {
                norm1: LayerNorm::load(l, &format!("{p}.norm1"))?,
                qkv: l.linear(&format!("{p}.attn.qkv"))?,
                proj: l.linear(&format!("{p}.attn.proj"))?,
                norm2: LayerNorm::load(l, &format!("{p}.norm2"))?,
                fc1: l.linear(&format!("{p}.mlp.linear_fc1"))?,
                fc2: l.linear(&format!("{p}.mlp.linear_fc2"))?,
            });
        }
        let merger = |l: &mut TowerLoader, p: &str, after_shuffle: bool| -> Result<Merger> {
            Ok(Merger {
                norm: LayerNorm::load(l, &format!("{p}.norm"))?,
                after_shuffle,
                fc1: l.linear(&format!("{p}.linear_fc1"))?,
                fc2: l.linear(&format!("{p}.linear_fc2"))?,
            })
        };
        let main = merger(l, "visual.merger", false)?;
        let deepstack = (0..config.deepstack_visual_indexes.len())
            .map(|k| merger(l, &format!("visual.deepstack_merger_list.{k}"), true))
            .collect::<Result<Vec<_>>>()?;
        let spatial = config.head_dim() / 2;
        let theta = config.rope_theta();
        let inv_freq: Vec<f32> = (0..spatial).step_by(2).map(|i| 1.0 / theta.powf(i as f32 / spatial as f32)).collect();
        Ok(Self {
            config: config.clone(),
            patch_embed,
            pos_embed,
            blocks,
            merger: main,
            deepstack,
            inv_freq: Array::from_slice(&inv_freq, &[inv_freq.len() as i32]),
            dtype: l.dtype,
        })
    }

    pub fn arrays(&self) -> Vec<&Array> {
        fn norm(n: &LayerNorm) -> [&Array; 2] {
            [&n.weight, &n.bias]
        }
        fn merger(m: &Merger) -> Vec<&Array> {
            norm(&m.norm).into_iter().chain(m.fc1.arrays()).chain(m.fc2.arrays()).collect()
        }
        let mut all: Vec<&Array> = self.patch_embed.arrays();
        all.push(&self.pos_embed);
        for b in &self.blocks {
            all.extend(norm(&b.norm1).into_iter().chain(norm(&b.norm2)));
            all.extend([&b.qkv, &b.proj, &b.fc1, &b.fc2].into_iter().flat_map(|l| l.arrays()));
        }
        all.extend(merger(&self.merger));
        for m in &self.deepstack {
            all.extend(merger(m));
        }
        all
    }

    /// Soft tokens of a grid (t × h × w patches): one per 2 × 2 block (merge²).
    pub fn tokens(&self, grid: [usize; 3]) -> usize {
        grid.iter().product::<usize>() / (self.config.spatial_merge_size * self.config.spatial_merge_size)
    }

    /// An item → `[1 + deepstack, tokens, out_hidden]`: the merger's rows, then each deepstack
    /// merger's.
    pub fn forward(&self, input: VisionInput) -> Result<Array> {
        let [t, h, w] = input.grid;
        let m = self.config.spatial_merge_size;
        let n = t * h * w;
        if n == 0 || h % m != 0 || w % m != 0 || input.patches.dim(0) as usize != n {
            return Err(EngineError::Internal(format!(
                "the vision tower got {} patches for a {t} × {h} × {w} grid (merge {m})",
                input.patches.dim(0)
            )));
        }
        let (rows, cols) = patch_coordinates(h, w, m);
        let x = self.patch_embed.forward(&input.patches.as_dtype(self.dtype)?)?;
        let x = ops::add(&x, &self.position_embedding(&rows, &cols, t)?)?;
        let (cos, sin) = self.rotation(&rows, &cols, t)?;

        let mut x = x;
        let mut deep = Vec::with_capacity(self.deepstack.len());
        for (i, block) in self.blocks.iter().enumerate() {
            x = self.block(block, &x, &cos, &sin, t)?;
            if let Some(k) = self.config.deepstack_visual_indexes.iter().position(|&j| j == i) {
                deep.push((k, self.merge(&self.deepstack[k], &x)?));
            }
        }
        deep.sort_by_key(|(k, _)| *k);
        let mut out = vec![self.merge(&self.merger, &x)?];
        out.extend(deep.into_iter().map(|(_, a)| a));
        Ok(ops::stack(&out, 0)?)
    }

    /// The learned grid resampled to this item's: `[t × h × w, hidden]`.
    fn position_embedding(&self, rows: &[i32], cols: &[i32], t: usize) -> Result<Array> {
        let side = self.config.grid_side();
        let (h, w) = (rows.iter().max().map_or(0, |&r| r + 1) as usize, cols.iter().max().map_or(0, |&c| c + 1) as usize);
        let mut indices = Vec::with_capacity(rows.len() * 4);
        let mut weights = Vec::with_capacity(rows.len() * 4);
        for (&r, &c) in rows.iter().zip(cols) {
            let (hr, hw) = taps(r, h, side);
            let (wr, ww) = taps(c, w, side);
            for (a, wa) in hr.iter().zip(hw) {
                for (b, wb) in wr.iter().zip(ww) {
                    indices.push(a * side as i32 + b);
                    weights.push(wa * wb);
                }
            }
        }
        let count = rows.len() as i32;
        let idx = Array::from_slice(&indices, &[count * 4]);
        let wts = Array::from_slice(&weights, &[count, 4, 1]).as_dtype(self.dtype)?;
        let taken = self.pos_embed.take_axis(&idx, 0)?.reshape(&[count, 4, -1])?;
        let one_frame = ops::multiply(&taken, &wts)?.sum_axis(1, false)?;
        // Every frame has the same grid.
        Ok(if t == 1 { one_frame } else { ops::concatenate(&vec![one_frame; t], 0)? })
    }

    /// cos and sin `[t × h × w, 1, head_dim]`: row frequencies, column frequencies, twice.
    fn rotation(&self, rows: &[i32], cols: &[i32], t: usize) -> Result<(Array, Array)> {
        let n = rows.len() as i32;
        let as_column = |v: &[i32]| -> Result<Array> { Ok(Array::from_slice(v, &[n, 1]).as_dtype(Dtype::Float32)?) };
        let row = ops::multiply(&as_column(rows)?, &self.inv_freq)?;
        let col = ops::multiply(&as_column(cols)?, &self.inv_freq)?;
        let half = ops::concatenate(&[row, col], -1)?;
        let mut angles = ops::concatenate(&[half.clone(), half], -1)?;
        if t > 1 {
            angles = ops::concatenate(&vec![angles; t], 0)?;
        }
        let angles = angles.expand_dims(1)?;
        Ok((ops::cos(&angles)?.as_dtype(self.dtype)?, ops::sin(&angles)?.as_dtype(self.dtype)?))
    }

    fn block(&self, b: &Block, x: &Array, cos: &Array, sin: &Array, frames: usize) -> Result<Array> {
        let n = x.dim(0);
        let heads = self.config.num_heads as i32;
        let d = self.config.head_dim() as i32;
        let qkv = b.qkv.forward(&b.norm1.forward(x)?)?.reshape(&[n, 3, heads, d])?;
        let rope = |a: Array| -> Result<Array> {
            let mut halves = a.split_at_indices(&[d / 2], -1)?.into_iter();
            let (a1, a2) = (halves.next().expect("first half"), halves.next().expect("second half"));
            let rotated = ops::concatenate(&[ops::negative(&a2)?, a1], -1)?;
            Ok(ops::add(&ops::multiply(&a, cos)?, &ops::multiply(&rotated, sin)?)?)
        };
        let q = rope(qkv.index((.., 0, .., ..)))?;
        let k = rope(qkv.index((.., 1, .., ..)))?;
        let v = qkv.index((.., 2, .., ..));
        // Each frame attends within itself: [frames, heads, patches per frame, head_dim].
        let f = frames as i32;
        let per_frame = |a: Array| -> Result<Array> { Ok(a.reshape(&[f, n / f, heads, d])?.transpose_axes(&[0, 2, 1, 3])?) };
        let scale = (d as f32).powf(-0.5);
        let out = fast::scaled_dot_product_attention(&per_frame(q)?, &per_frame(k)?, &per_frame(v)?, scale, None, None)?;
        let out = out.transpose_axes(&[0, 2, 1, 3])?.reshape(&[n, heads * d])?;
        let x = ops::add(x, &b.proj.forward(&out)?)?;
        let up = b.fc1.forward(&b.norm2.forward(&x)?)?;
        let hidden = if self.config.hidden_act == "gelu" { nn::gelu(&up)? } else { nn::gelu_approximate(&up)? };
        Ok(ops::add(&x, &b.fc2.forward(&hidden)?)?)
    }

    fn merge(&self, m: &Merger, x: &Array) -> Result<Array> {
        let unit = (self.config.spatial_merge_size * self.config.spatial_merge_size * self.config.hidden_size) as i32;
        let x = if m.after_shuffle { m.norm.forward(&x.reshape(&[-1, unit])?)? } else { m.norm.forward(x)?.reshape(&[-1, unit])? };
        let hidden = nn::gelu(&m.fc1.forward(&x)?)?;
        m.fc2.forward(&hidden)
    }
}

/// Each patch's (row, column) in its frame, in the processor's order (merge blocks row by row,
/// patches within a block row by row).
pub fn patch_coordinates(h: usize, w: usize, merge: usize) -> (Vec<i32>, Vec<i32>) {
    let mut rows = Vec::with_capacity(h * w);
    let mut cols = Vec::with_capacity(h * w);
    for block_row in 0..h / merge {
        for block_col in 0..w / merge {
            for in_row in 0..merge {
                for in_col in 0..merge {
                    rows.push((block_row * merge + in_row) as i32);
                    cols.push((block_col * merge + in_col) as i32);
                }
            }
        }
    }
    (rows, cols)
}

/// The two table rows (and weights) that linear interpolation with aligned corners reads for
/// position `index` of an axis of `size` over a table side of `side`, in float32 as
/// transformers computes them.
fn taps(index: i32, size: usize, side: usize) -> ([i32; 2], [f32; 2]) {
    let src = index as f32 * (side as f32 - 1.0) / (size.max(2) - 1) as f32;
    let floor = src.floor();
    let mut taps = [0i32; 2];
    let mut weights = [0f32; 2];
    for offset in 0..2 {
        taps[offset] = ((floor as i32) + offset as i32).clamp(0, side as i32 - 1);
        let distance = (src - floor - offset as f32).abs();
        weights[offset] = (1.0 - distance).max(0.0);
    }
    (taps, weights)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_are_in_merge_block_order() {
        let (rows, cols) = patch_coordinates(2, 4, 2);
        assert_eq!(rows, [0, 0, 1, 1, 0, 0, 1, 1]);
        assert_eq!(cols, [0, 1, 0, 1, 2, 3, 2, 3]);
    }

    #[test]
    fn interpolation_taps_align_the_corners() {
        // First and last positions land exactly on the table's corners.
        assert_eq!(taps(0, 4, 6), ([0, 1], [1.0, 0.0]));
        assert_eq!(taps(3, 4, 6), ([5, 5], [1.0, 0.0]));
        // Half way between rows 2 and 3 of the table.
        let (t, w) = taps(1, 3, 6);
        assert_eq!(t, [2, 3]);
        assert!((w[0] - 0.5).abs() < 1e-6 && (w[1] - 0.5).abs() < 1e-6);
        // A one-patch axis reads the first row.
        assert_eq!(taps(0, 1, 6).0[0], 0);
    }
}
