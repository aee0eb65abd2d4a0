//! Full attention with an output gate (`self_attn`): q_proj yields, per head, the query and a
//! gate of the same size; after grouped-query attention (per-head q/k norms, partial RoPE) the
//! output is scaled by `sigmoid(gate)` before o_proj.

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{nn, ops, Array, Dtype};

use crate::error::{EngineError, Result};
use crate::model::config::RopeConfig;
use crate::model::layer_loader::LayerLoader;
use crate::model::layers::attention::{self, DecodeKernels};
use crate::model::layers::cpu_attention::RopeTable;
use crate::model::layers::mrope::Rotation;
use crate::model::layers::{FusedLinear, Linear, RmsNorm, Rope};
use crate::state::LayerState;

/// Where a forward pass's tokens sit for RoPE.
#[derive(Clone, Copy)]
pub enum Placement<'a> {
    /// Token i of the sequence at position i + shift (text; decode).
    Shifted(i64),
    /// Multimodal RoPE's rotation for this pass's positions.
    Explicit(&'a Rotation),
}

pub struct GatedAttention {
    /// q_proj (query and gate interleaved by head: [q_0 | gate_0 | q_1 | gate_1 | …]), k_proj,
    /// v_proj as one matmul.
    qkv: FusedLinear,
    o_proj: Linear,
    q_norm: RmsNorm,
    k_norm: RmsNorm,
    heads: i32,
    kv_heads: i32,
    head_dim: i32,
    scale: f32,
    rope: Rope,
}

impl GatedAttention {
    /// `{prefix}.self_attn`; `rotary_dim` leading channels of each head rotate.
    pub fn load(l: &mut LayerLoader, prefix: &str, rope: &RopeConfig, rotary_dim: usize) -> Result<Self> {
        let p = format!("{prefix}.self_attn");
        let c = l.config;
        let parts = vec![l.linear(&format!("{p}.q_proj"))?, l.linear(&format!("{p}.k_proj"))?, l.linear(&format!("{p}.v_proj"))?];
        let (queries, keys) = (2 * c.num_heads * c.head_dim, c.num_kv_heads * c.head_dim);
        if parts[0].out_features() as usize != queries
            || parts[1].out_features() as usize != keys
            || parts[2].out_features() as usize != keys
        {
            return Err(EngineError::CorruptWeights {
                path: l.weights.source().into(),
                reason: format!(
                    "`{p}` q/k/v_proj have {}/{}/{} outputs; {} heads and {} kv heads of {} (each query with its output gate) need {queries}/{keys}/{keys}",
                    parts[0].out_features(),
                    parts[1].out_features(),
                    parts[2].out_features(),
                    c.num_heads,
                    c.num_kv_heads,
                    c.head_dim
                ),
            });
        }
        Ok(Self {
            qkv: FusedLinear::new(parts)?,
            o_proj: l.linear(&format!("{p}.o_proj"))?,
            q_norm: l.norm(&format!("{p}.q_norm.weight"))?,
            k_norm: l.norm(&format!("{p}.k_norm.weight"))?,
            heads: c.num_heads as i32,
            kv_heads: c.num_kv_heads as i32,
            head_dim: c.head_dim as i32,
            scale: (c.head_dim as f32).powf(-0.5),
            rope: Rope::new(rotary_dim, rope, false),
        })
    }

    /// x [B, L, hidden] → [B, L, hidden], row i continuing `states[i]` (one sequence, or a
    /// decode step of several) with its tokens placed by `placements[i]` (at their index plus a
    /// shift, or at explicit multimodal positions); each row's keys and values grow by L.
    /// Projections, norms, the gate and o_proj run once for the batch; RoPE and attention per
    /// row, at the row's own position against its own keys and values; in a decode step on the
    /// CPU, the rows placed at their index in the cache (text) in one kernel call
    /// (`DecodeKernels`).
    pub fn forward_rows(&self, x: &Array, states: &mut [&mut LayerState], placements: &[Placement]) -> Result<Array> {
        let (b, l) = (x.dim(0), x.dim(1));
        if b as usize != states.len() || states.len() != placements.len() {
            return Err(EngineError::Internal(format!(
                "{b} rows for {} attention states and {} placements",
                states.len(),
                placements.len()
            )));
        }
        let (h, kvh, d) = (self.heads, self.kv_heads, self.head_dim);
        let mut parts = self.qkv.forward(x)?.into_iter();
        let (qg, k, v) = (parts.next().expect("q_proj"), parts.next().expect("k_proj"), parts.next().expect("v_proj"));
        let mut halves = qg.reshape(&[b, l, h, 2 * d])?.split_at_indices(&[d], -1)?.into_iter();
        let (q, gate) = (halves.next().expect("query"), halves.next().expect("gate"));
        let q = self.q_norm.forward(&q)?;
        let k = self.k_norm.forward(&k.reshape(&[b, l, kvh, d])?)?;

        // A decode step's rows whose token sits at its index in the cache (text) attend through
        // the CPU kernels, together; rows placed otherwise (after an image) one by one. Each
        // row takes the path it takes alone, whatever else is in the batch.
        let kernels = self.decode_kernels(l, q.dtype(), states);
        let by_kernels: Vec<bool> = placements.iter().map(|p| kernels.is_some() && matches!(p, Placement::Shifted(0))).collect();
        let through_kernels = match kernels {
            Some((kernels, rope)) if by_kernels.contains(&true) => {
                let picked: Vec<i32> = (0..b).filter(|&i| by_kernels[i as usize]).collect();
                let pick = |t: &Array| -> Result<Array> {
                    Ok(if picked.len() == b as usize {
                        t.clone()
                    } else {
                        t.take_axis(Array::from_slice(&picked, &[picked.len() as i32]), 0)?
                    })
                };
                let mut mine: Vec<&mut LayerState> =
                    states.iter_mut().zip(&by_kernels).filter(|(_, &k)| k).map(|(s, _)| &mut **s).collect();
                Some(kernels.step(&pick(&q)?, &pick(&k)?, &pick(&v)?, &mut mine, Some(rope))?)
            }
            _ => None,
        };
        let out = match through_kernels {
            Some(out) if !by_kernels.contains(&false) => out,
            through_kernels => {
                let heads = |t: Array, n: i32| -> Result<Array> { Ok(t.reshape(&[-1, l, n, d])?.transpose_axes(&[0, 2, 1, 3])?) };
                let mut outs = Vec::with_capacity(states.len());
                let mut kernel_rows = 0;
                for (i, (state, placement)) in states.iter_mut().zip(placements).enumerate() {
                    if by_kernels[i] {
                        let all = through_kernels.as_ref().expect("rows through the kernels");
                        outs.push(all.index(kernel_rows..kernel_rows + 1));
                        kernel_rows += 1;
                        continue;
                    }
                    let row = |t: &Array| if b == 1 { t.clone() } else { t.index(i as i32..i as i32 + 1) };
                    let out = self.attend(heads(row(&q), h)?, heads(row(&k), kvh)?, heads(row(&v), kvh)?, state, *placement)?;
                    outs.push(out.transpose_axes(&[0, 2, 1, 3])?.reshape(&[1, l, h * d])?);
                }
                if outs.len() == 1 {
                    outs.pop().expect("one row")
                } else {
                    ops::concatenate(&outs, 0)?
                }
            }
        };
        let gated = ops::multiply(&out, &nn::sigmoid(&gate.reshape(&[b, l, h * d])?)?)?;
        self.o_proj.forward(&gated)
    }

    /// The CPU decode kernels and the RoPE table they rotate by, where they can take this
    /// step: one token per row, computed in a dtype and kept in states they write.
    fn decode_kernels(&self, l: i32, dtype: Dtype, states: &[&mut LayerState]) -> Option<(DecodeKernels, &RopeTable)> {
        let kernels = DecodeKernels {
            heads: self.heads as usize,
            kv_heads: self.kv_heads as usize,
            head_dim: self.head_dim as usize,
            scale: self.scale,
        };
        (l == 1 && kernels.apply(dtype, states)).then_some(kernels).zip(self.rope.table())
    }

    /// One sequence's attention: q [1, heads, L, d], k and v [1, kv_heads, L, d] (normed, not
    /// yet rotated) → [1, heads, L, d]; its keys and values grow by L.
    fn attend(&self, q: Array, k: Array, v: Array, state: &mut LayerState, placement: Placement) -> Result<Array> {
        let offset = state.len();
        let (q, k) = match placement {
            Placement::Shifted(shift) => {
                let at = (offset as i64 + shift).max(0) as usize;
                (self.rope.forward(&q, at)?, self.rope.forward(&k, at)?)
            }
            Placement::Explicit(rotation) => (rotation.apply(&q)?, rotation.apply(&k)?),
        };
        attention::attend_causal(state, &q, k, v, self.scale)
    }

    pub fn arrays(&self) -> Vec<&Array> {
        let mut all = self.qkv.arrays();
        all.extend(self.o_proj.arrays());
        all.extend([self.q_norm.weight(), self.k_norm.weight()]);
        all
    }
}
