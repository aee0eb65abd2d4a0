//! The audio tower's attention: local attention in blocks of `chunk` queries, each seeing its
//! block plus `context_left - 1` keys before (and `context_right` after), with Transformer-XL
//! relative position logits (sinusoidal embeddings of distances `context/2 … 0` through
//! `relative_k_proj`, aligned by the "relative shift"), learned per-dimension query scaling,
//! logits soft-capped, and masked positions set to `attention_invalid_logits_value`.

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{nn, ops, Array, Dtype};

use crate::error::Result;
use crate::model::families::gemma4::towers::config::AudioConfig;
use crate::model::layers::{ClippedLinear, Linear};
use crate::model::media::towers::TowerLoader;

pub struct AudioAttention {
    q: ClippedLinear,
    k: ClippedLinear,
    v: ClippedLinear,
    post: ClippedLinear,
    relative_k: Linear,
    /// `head_dim^-0.5 / ln 2 · softplus(per_dim_scale)`, per head dimension.
    q_scale: Array,
    k_scale: Array,
    heads: i32,
    head_dim: i32,
    chunk: i32,
    past: i32,
    future: i32,
    context: i32,
    cap: f32,
    invalid: f32,
}

impl AudioAttention {
    pub fn load(l: &mut TowerLoader, p: &str, c: &AudioConfig) -> Result<Self> {
        let clip = c.use_clipped_linears;
        let head_dim = c.head_dim() as i32;
        let hidden = c.hidden_size as i32;
        let per_dim = l.take_shaped(&format!("{p}.per_dim_scale"), &[head_dim])?.as_dtype(Dtype::Float32)?;
        let ln2 = std::f32::consts::LN_2;
        let q_scale = ops::multiply(&nn::softplus(&per_dim)?, Array::from_f32((head_dim as f32).powf(-0.5) / ln2))?;
        let k_scale = Array::from_f32((1.0 + std::f32::consts::E).ln() / ln2);
        Ok(Self {
            q: l.clipped_shaped(&format!("{p}.q_proj"), clip, hidden, hidden)?,
            k: l.clipped_shaped(&format!("{p}.k_proj"), clip, hidden, hidden)?,
            v: l.clipped_shaped(&format!("{p}.v_proj"), clip, hidden, hidden)?,
            post: l.clipped_shaped(&format!("{p}.post"), clip, hidden, hidden)?,
            relative_k: l.linear_shaped(&format!("{p}.relative_k_proj"), hidden, hidden)?,
            q_scale,
            k_scale,
            heads: c.num_attention_heads as i32,
            head_dim,
            chunk: c.attention_chunk_size as i32,
            past: c.max_past() as i32,
            future: c.attention_context_right as i32,
            context: c.context_size() as i32,
            cap: c.attention_logit_cap,
            invalid: c.attention_invalid_logits_value,
        })
    }

    /// x [1, T, hidden]; `positions` the sinusoidal table [context/2 + 1, hidden];
    /// `allowed` [1, 1, blocks, chunk, context] (true = attend).
    pub fn forward(&self, x: &Array, positions: &Array, allowed: &Array) -> Result<Array> {
        let t = x.dim(1);
        let (h, d, c) = (self.heads, self.head_dim, self.chunk);
        let blocks = (t + c - 1) / c;
        // transformers computes the whole attention in float32, whatever the weights' dtype.
        let split = |y: Array| y.as_dtype(Dtype::Float32)?.reshape(&[1, t, h, d]);
        let q = ops::multiply(&split(self.q.forward(x)?)?, &self.q_scale)?;
        let k = ops::multiply(&split(self.k.forward(x)?)?, &self.k_scale)?;
        let v = split(self.v.forward(x)?)?;

        // Queries in blocks [1, H, blocks, chunk, D]; keys and values as each block's context window.
        let q = ops::pad(&q, &[(0, 0), (0, blocks * c - t), (0, 0), (0, 0)][..], None, None)?
            .reshape(&[1, blocks, c, h, d])?
            .transpose_axes(&[0, 3, 1, 2, 4])?;
        let k = self.windows(&k, blocks)?; // [1, H, blocks, context, D]
        let v = self.windows(&v, blocks)?;
        let content = ops::matmul(&q, &k.transpose_axes(&[0, 1, 2, 4, 3])?)?;

        let relative = self.relative_k.forward(positions)?.as_dtype(Dtype::Float32)?; // [P, H·D]
        let p = relative.dim(0);
        let relative = relative.reshape(&[p, h, d])?.transpose_axes(&[1, 2, 0])?; // [H, D, P]
        let by_position = ops::matmul(&q.reshape(&[1, h, blocks * c, d])?, &relative)?.reshape(&[1, h, blocks, c, p])?;
        let by_position = self.relative_shift(&by_position)?;

        let cap = Array::from_f32(self.cap);
        let logits = ops::multiply(&ops::tanh(&ops::divide(&ops::add(&content, &by_position)?, &cap)?)?, &cap)?;
        let logits = ops::select(allowed, &logits, Array::from_f32(self.invalid))?;
        let weights = ops::softmax_axis(&logits, -1, true)?;
        let out = ops::matmul(&weights, &v)?; // [1, H, blocks, chunk, D]
        let out = out.transpose_axes(&[0, 2, 3, 1, 4])?.reshape(&[1, blocks * c, h * d])?;
        let out = out.index((.., ..t, ..)).as_dtype(x.dtype())?;
        self.post.forward(&out)
    }

    /// [1, T, H, D] → [1, H, blocks, context, D]: block b sees positions b·chunk - past … b·chunk + chunk + future - 1
    /// (zeros outside the sequence).
    fn windows(&self, x: &Array, blocks: i32) -> Result<Array> {
        let padded = ops::pad(x, &[(0, 0), (self.past, self.future + self.chunk - 1), (0, 0), (0, 0)][..], None, None)?;
        let idx: Vec<i32> = (0..blocks).flat_map(|b| (0..self.context).map(move |o| b * self.chunk + o)).collect();
        let idx = Array::from_slice(&idx, &[blocks * self.context]);
        let (h, d) = (x.dim(2), x.dim(3));
        Ok(padded.take_axis(&idx, 1)?.reshape(&[1, blocks, self.context, h, d])?.transpose_axes(&[0, 3, 1, 2, 4])?)
    }

    /// Transformer-XL's shift: [.., chunk, P] logits by distance → [.., chunk, context] by key
    /// offset (pad to context + 1, flatten, drop the tail, refold).
    fn relative_shift(&self, x: &Array) -> Result<Array> {
        let shape = x.shape().to_vec();
        let (c, p, ctx) = (shape[3], shape[4], self.context);
        let x = ops::pad(x, &[(0, 0), (0, 0), (0, 0), (0, 0), (0, ctx + 1 - p)][..], None, None)?;
        let x = x.reshape(&[shape[0], shape[1], shape[2], c * (ctx + 1)])?;
        let x = x.index((.., .., .., ..c * ctx));
        Ok(x.reshape(&[shape[0], shape[1], shape[2], c, ctx])?)
    }

    /// Which key offsets each query may attend to: [1, 1, blocks, chunk, context], true where the
    /// key is a real frame within `past` positions before the query (or `future` after it) and
    /// the query is inside the sequence.
    pub fn allowed(&self, valid: &[bool]) -> Array {
        let t = valid.len() as i32;
        let (c, ctx) = (self.chunk, self.context);
        let blocks = (t + c - 1) / c;
        let mut out = Vec::with_capacity((blocks * c * ctx) as usize);
        for b in 0..blocks {
            for i in 0..c {
                let q = b * c + i;
                for o in 0..ctx {
                    let kv = b * c + o - self.past;
                    let dist = q - kv;
                    let near = (dist >= 0 && dist < self.past) || (dist < 0 && -dist < self.future);
                    out.push(q < t && kv >= 0 && kv < t && valid[kv as usize] && near);
                }
            }
        }
        Array::from_slice(&out, &[1, 1, blocks, c, ctx])
    }

    pub fn arrays(&self) -> Vec<&Array> {
        let mut all: Vec<&Array> = [&self.q, &self.k, &self.v, &self.post].into_iter().flat_map(ClippedLinear::arrays).collect();
        all.extend(self.relative_k.arrays());
        all.extend([&self.q_scale, &self.k_scale]);
        all
    }
}

/// Sinusoidal embeddings of the distances `context/2, …, 1, 0`: [sin…, cos…] per row,
/// timescales from 1 to 10⁴.
pub fn relative_positions(c: &AudioConfig) -> Array {
    let n = c.hidden_size / 2;
    let increment = (1.0e4f64).ln() / (n.max(2) - 1) as f64;
    let inv: Vec<f32> = (0..n).map(|i| ((i as f32) * -(increment as f32)).exp()).collect();
    let rows = c.context_size() / 2 + 1;
    let mut table = Vec::with_capacity(rows * c.hidden_size);
    for pos in (0..rows).rev() {
        let scaled: Vec<f32> = inv.iter().map(|f| pos as f32 * f).collect();
        table.extend(scaled.iter().map(|s| s.sin()));
        table.extend(scaled.iter().map(|s| s.cos()));
    }
    Array::from_slice(&table, &[rows as i32, c.hidden_size as i32])
}
