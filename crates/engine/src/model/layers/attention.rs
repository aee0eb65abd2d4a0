//! Multi-head attention with grouped KV heads, optional q/k norms (Qwen 3, Gemma 3) and an
//! optional sliding window (Gemma 3's local layers).

use mlx_rs::fast::{self, ScaledDotProductAttentionMask};
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, Array};

use crate::cache::kv::LayerKv;
use crate::error::Result;
use crate::model::layers::{FusedLinear, Linear, RmsNorm, Rope};

pub struct Attention {
    /// Q, K and V projections as one matmul.
    pub qkv: FusedLinear,
    pub o_proj: Linear,
    pub q_norm: Option<RmsNorm>,
    pub k_norm: Option<RmsNorm>,
    pub num_heads: usize,
    pub num_kv_heads: usize,
    pub head_dim: usize,
    pub scale: f32,
    pub rope: Rope,
    /// Keys further back than this many positions are not attended to.
    pub window: Option<usize>,
}

impl Attention {
    /// x is [B, L, hidden]; the layer's cache grows by L.
    pub fn forward(&self, x: &Array, cache: &mut LayerKv) -> Result<Array> {
        let (b, l) = (x.dim(0), x.dim(1));
        let mut qkv = self.qkv.forward(x)?.into_iter();
        let mut heads = |n: usize, norm: &Option<RmsNorm>| -> Result<Array> {
            let y = qkv.next().expect("three projections").reshape(&[b, l, n as i32, self.head_dim as i32])?;
            let y = match norm {
                Some(norm) => norm.forward(&y)?,
                None => y,
            };
            Ok(y.transpose_axes(&[0, 2, 1, 3])?)
        };
        let offset = cache.len();
        let q = self.rope.forward(&heads(self.num_heads, &self.q_norm)?, offset)?;
        let k = self.rope.forward(&heads(self.num_kv_heads, &self.k_norm)?, offset)?;
        let v = heads(self.num_kv_heads, &None)?;
        let (keys, values) = cache.append(k, v)?;

        let out = match self.window {
            Some(window) if offset + l as usize > window => {
                if l == 1 {
                    // Decoding: the window is simply the last `window` keys.
                    let start = (offset + 1 - window) as i32;
                    let keys = keys.index((.., .., start.., ..));
                    let values = values.index((.., .., start.., ..));
                    fast::scaled_dot_product_attention(&q, &keys, &values, self.scale, None, None)?
                } else {
                    let mask = sliding_causal_mask(offset, l as usize, window)?;
                    fast::scaled_dot_product_attention(&q, &keys, &values, self.scale, ScaledDotProductAttentionMask::Array(&mask), None)?
                }
            }
            _ if l > 1 => fast::scaled_dot_product_attention(&q, &keys, &values, self.scale, ScaledDotProductAttentionMask::Causal, None)?,
            _ => fast::scaled_dot_product_attention(&q, &keys, &values, self.scale, None, None)?,
        };
        let out = out.transpose_axes(&[0, 2, 1, 3])?.reshape(&[b, l, (self.num_heads * self.head_dim) as i32])?;
        self.o_proj.forward(&out)
    }
}

impl Attention {
    /// Every weight, for evaluating once at load.
    pub fn arrays(&self) -> Vec<&mlx_rs::Array> {
        let norms = self.q_norm.iter().chain(&self.k_norm).map(RmsNorm::weight);
        self.qkv.arrays().into_iter().chain(self.o_proj.arrays()).chain(norms).collect()
    }
}

/// [L, offset + L] booleans: query i (at offset + i) sees key j when i + offset - window < j ≤ i + offset.
fn sliding_causal_mask(offset: usize, l: usize, window: usize) -> Result<Array> {
    let q = ops::add(&Array::from_iter(0..l as i32, &[l as i32, 1]), Array::from_int(offset as i32))?;
    let k = Array::from_iter(0..(offset + l) as i32, &[1, (offset + l) as i32]);
    let causal = ops::le(&k, &q)?;
    let recent = ops::gt(&k, &ops::subtract(&q, Array::from_int(window as i32))?)?;
    Ok(ops::logical_and(&causal, &recent)?)
}
