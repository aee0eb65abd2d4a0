//! The Gated DeltaNet layer (`linear_attn`): input projections, a causal depthwise convolution
//! over q/k/v with SiLU, L2-normalised q/k, per-head decay `g = −exp(A_log)·softplus(a + dt_bias)`
//! and write strength `β = sigmoid(b)`, the gated delta rule (value heads grouped over key heads),
//! the z-gated RMS norm and the output projection.

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{fast, nn, ops, Array, Dtype};

use crate::error::{EngineError, Result};
use crate::model::layer_loader::LayerLoader;
use crate::model::layers::causal_conv::CausalConv1d;
use crate::model::layers::gated_delta;
use crate::model::layers::gated_norm::GatedRmsNorm;
use crate::model::layers::{FusedLinear, Linear};
use crate::state::Recurrent;

use super::config::{Qwen35Args, Variant};

/// transformers' (and FLA's) l2norm epsilon, added to the sum of squares.
const L2_EPS: f32 = 1e-6;

pub struct DeltaNet {
    /// in_proj_qkv, in_proj_z, in_proj_b, in_proj_a as one matmul (Qwen3-Next's grouped
    /// in_proj_qkvz / in_proj_ba are regrouped into this order at load).
    in_proj: FusedLinear,
    conv: CausalConv1d,
    /// −exp(A_log) [value heads], float32.
    neg_a: Array,
    /// [value heads], float32.
    dt_bias: Array,
    norm: GatedRmsNorm,
    out_proj: Linear,
    key_heads: i32,
    value_heads: i32,
    key_dim: i32,
    value_dim: i32,
}

impl DeltaNet {
    /// `{prefix}.linear_attn`, with its convolution weight already taken ([channels, kernel]).
    pub fn load(l: &mut LayerLoader, prefix: &str, args: &Qwen35Args, conv: &Array) -> Result<Self> {
        let p = format!("{prefix}.linear_attn");
        let k = &args.keys;
        let in_proj = match args.variant {
            Variant::Next => {
                let qkvz = l.linear(&format!("{p}.in_proj_qkvz"))?;
                let ba = l.linear(&format!("{p}.in_proj_ba"))?;
                let (qkv, z, b, a) = regroup(&qkvz, &ba, args).map_err(|reason| EngineError::CorruptWeights {
                    path: l.weights.source().into(),
                    reason: format!("`{p}`: {reason}"),
                })?;
                vec![qkv, z, b, a]
            }
            _ => ["in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a"]
                .iter()
                .map(|name| l.linear(&format!("{p}.{name}")))
                .collect::<Result<Vec<_>>>()?,
        };
        let (hk, hv, dk, dv) = (k.linear_num_key_heads, k.linear_num_value_heads, k.linear_key_head_dim, k.linear_value_head_dim);
        let expected = [2 * hk * dk + hv * dv, hv * dv, hv, hv];
        let got: Vec<usize> = in_proj.iter().map(|p| p.out_features() as usize).collect();
        if got != expected {
            return Err(EngineError::CorruptWeights {
                path: l.weights.source().into(),
                reason: format!("`{p}` projects to {got:?} (qkv, z, b, a) but the config's heads make {expected:?}"),
            });
        }
        let a_log = l.weights.take(&format!("{p}.A_log"))?.as_dtype(Dtype::Float32)?;
        Ok(Self {
            in_proj: FusedLinear::new(in_proj)?,
            conv: CausalConv1d::new(conv)?,
            neg_a: ops::negative(&ops::exp(&a_log)?)?,
            dt_bias: l.weights.take(&format!("{p}.dt_bias"))?.as_dtype(Dtype::Float32)?,
            norm: GatedRmsNorm::new(l.weights.take(&format!("{p}.norm.weight"))?, l.config.rms_norm_eps, l.dtype)?,
            out_proj: l.linear(&format!("{p}.out_proj"))?,
            key_heads: k.linear_num_key_heads as i32,
            value_heads: k.linear_num_value_heads as i32,
            key_dim: k.linear_key_head_dim as i32,
            value_dim: k.linear_value_head_dim as i32,
        })
    }

    /// x [B, L, hidden] → [B, L, hidden], row i continuing `states[i]` (one sequence, or a
    /// decode step of several); each state absorbs L positions. Projections, convolution, norms
    /// and the delta rule's decode step run once for the batch, on the rows' states stacked;
    /// each row keeps new state of its own. A prompt chunk (L > 1) runs the chunked rule row
    /// by row.
    pub fn forward_rows(&self, x: &Array, states: &mut [&mut Recurrent]) -> Result<Array> {
        let (b, l) = (x.dim(0), x.dim(1));
        if b as usize != states.len() {
            return Err(EngineError::Internal(format!("{b} rows for {} recurrent states", states.len())));
        }
        let (hk, hv, dk, dv) = (self.key_heads, self.value_heads, self.key_dim, self.value_dim);
        let mut parts = self.in_proj.forward(x)?.into_iter();
        let mut next = || parts.next().ok_or_else(|| EngineError::WeightLayout("DeltaNet input projection has too few parts".into()));
        let (qkv, z, beta, a) = (next()?, next()?, next()?, next()?);

        let convs: Vec<Option<&Array>> = states.iter().map(|s| s.conv.as_ref()).collect();
        let (mixed, conv_states) = self.conv.forward_rows(&qkv, &convs)?;
        let mixed = nn::silu(&mixed)?;
        let mut qkv = mixed.split_at_indices(&[hk * dk, 2 * hk * dk], -1)?.into_iter();
        let (q, k, v) = (qkv.next().expect("q"), qkv.next().expect("k"), qkv.next().expect("v"));
        // l2norm(x) = x / √(Σx² + ε) = rms_norm(x, ε / d) / √d; q is also scaled by d^-½.
        let unit = |t: &Array| -> Result<Array> {
            let t = t.reshape(&[b, l, hk, dk])?.as_dtype(Dtype::Float32)?;
            Ok(fast::rms_norm(&t, None, L2_EPS / dk as f32)?)
        };
        let q = ops::multiply(&unit(&q)?, Array::from_f32(1.0 / dk as f32))?;
        let k = ops::multiply(&unit(&k)?, Array::from_f32((dk as f32).powf(-0.5)))?;
        let v = v.reshape(&[b, l, hv, dv])?.as_dtype(Dtype::Float32)?.transpose_axes(&[0, 2, 1, 3])?;
        // [B, L, Hk, Dk] → [B, Hv, L, Dk]: key head h serves value heads h·r .. h·r + r.
        let r = hv / hk;
        let grouped = |t: Array| -> Result<Array> {
            let t = t.transpose_axes(&[0, 2, 1, 3])?;
            if r == 1 {
                return Ok(t);
            }
            let t = ops::broadcast_to(&t.expand_dims(2)?, &[b, hk, r, l, dk])?;
            Ok(t.reshape(&[b, hv, l, dk])?)
        };
        let (q, k) = (grouped(q)?, grouped(k)?);
        let beta = nn::sigmoid(&beta)?.as_dtype(Dtype::Float32)?.transpose_axes(&[0, 2, 1])?;
        let softplus = ops::logaddexp(&ops::add(&a.as_dtype(Dtype::Float32)?, &self.dt_bias)?, Array::from_f32(0.0))?;
        let g = ops::multiply(&softplus, &self.neg_a)?.transpose_axes(&[0, 2, 1])?;

        let previous: Vec<Option<&Array>> = states.iter().map(|s| s.state.as_ref()).collect();
        let (out, recurrent) = if l == 1 {
            gated_delta::step_rows(&q, &k, &v, &g, &beta, &previous)?
        } else {
            let mut outs = Vec::with_capacity(states.len());
            let mut kept = Vec::with_capacity(states.len());
            for (i, s) in previous.iter().enumerate() {
                let row = |t: &Array| if b == 1 { t.clone() } else { t.index(i as i32..i as i32 + 1) };
                let (o, s) = gated_delta::chunked(&row(&q), &row(&k), &row(&v), &row(&g), &row(&beta), *s)?;
                outs.push(o);
                kept.push(s);
            }
            let out = if outs.len() == 1 { outs.pop().expect("one row") } else { ops::concatenate(&outs, 0)? };
            (out, kept)
        };
        for ((state, conv), recurrent) in states.iter_mut().zip(conv_states).zip(recurrent) {
            state.conv = Some(conv);
            state.state = Some(recurrent);
            state.advance(l as usize);
        }

        let out = out.transpose_axes(&[0, 2, 1, 3])?.as_dtype(x.dtype())?;
        let y = self.norm.forward(&out, &z.reshape(&[b, l, hv, dv])?)?;
        self.out_proj.forward(&y.reshape(&[b, l, hv * dv])?)
    }

    pub fn arrays(&self) -> Vec<&Array> {
        let mut all = self.in_proj.arrays();
        all.extend(self.conv.arrays());
        all.extend([&self.neg_a, &self.dt_bias, self.norm.weight()]);
        all.extend(self.out_proj.arrays());
        all
    }
}

/// Qwen3-Next's projections grouped by key head — in_proj_qkvz rows
/// `[q_g (Dk) | k_g (Dk) | v_g (r·Dv) | z_g (r·Dv)]` and in_proj_ba rows `[b_g (r) | a_g (r)]` for
/// each key head g — as Qwen3.5's four: qkv (all q, all k, all v), z, b, a.
fn regroup(qkvz: &Linear, ba: &Linear, args: &Qwen35Args) -> std::result::Result<(Linear, Linear, Linear, Linear), String> {
    let k = &args.keys;
    let (hk, r, dk, dv) =
        (k.linear_num_key_heads, k.linear_num_value_heads / k.linear_num_key_heads, k.linear_key_head_dim, k.linear_value_head_dim);
    let group = 2 * dk + 2 * r * dv;
    if qkvz.out_features() as usize != hk * group || ba.out_features() as usize != hk * 2 * r {
        return Err(format!(
            "in_proj_qkvz has {} rows and in_proj_ba {}, expected {} and {}",
            qkvz.out_features(),
            ba.out_features(),
            hk * group,
            hk * 2 * r
        ));
    }
    let pick = |offset: usize, len: usize, width: usize| -> Vec<i32> {
        (0..hk).flat_map(|g| (0..len).map(move |i| (g * width + offset + i) as i32)).collect()
    };
    let q = pick(0, dk, group);
    let kk = pick(dk, dk, group);
    let v = pick(2 * dk, r * dv, group);
    let qkv: Vec<i32> = q.into_iter().chain(kk).chain(v).collect();
    let rows = |l: &Linear, idx: Vec<i32>| rows_of(l, &Array::from_slice(&idx, &[idx.len() as i32])).map_err(|e| e.to_string());
    Ok((rows(qkvz, qkv)?, rows(qkvz, pick(2 * dk + r * dv, r * dv, group))?, rows(ba, pick(0, r, 2 * r))?, rows(ba, pick(r, r, 2 * r))?))
}

/// The layer made of some of a layer's output rows (quantized rows stay packed: each row holds
/// its own inputs, scales and biases).
fn rows_of(l: &Linear, idx: &Array) -> Result<Linear> {
    let take = |a: &Array| a.take_axis(idx, 0);
    Ok(match l {
        Linear::Dense { weight, bias } => Linear::Dense { weight: take(weight)?, bias: bias.as_ref().map(take).transpose()? },
        Linear::Quantized { weight, scales, biases, bias, group_size, bits } => Linear::Quantized {
            weight: take(weight)?,
            scales: take(scales)?,
            biases: biases.as_ref().map(take).transpose()?,
            bias: bias.as_ref().map(take).transpose()?,
            group_size: *group_size,
            bits: *bits,
        },
    })
}

/// [channels, kernel] from a stored convolution weight in either layout, checked against the
/// config; `mlx` is whether it is stored mlx-lm's way ([C, K, 1]) rather than PyTorch's ([C, 1, K]).
pub fn conv_weight(weight: &Array, mlx: bool, name: &str, args: &Qwen35Args) -> std::result::Result<Array, String> {
    let k = &args.keys;
    let channels = 2 * k.linear_num_key_heads * k.linear_key_head_dim + k.linear_num_value_heads * k.linear_value_head_dim;
    let w = match weight.ndim() {
        3 if mlx => weight.index((.., .., 0)),
        3 => weight.index((.., 0, ..)),
        2 => weight.clone(),
        _ => return Err(format!("`{name}` has shape {:?}; expected [channels, 1, kernel]", weight.shape())),
    };
    let (c, kernel) = (w.dim(0) as usize, w.dim(1) as usize);
    if kernel != k.linear_conv_kernel_dim {
        return Err(format!("`{name}` has kernel size {kernel} but linear_conv_kernel_dim is {}", k.linear_conv_kernel_dim));
    }
    if c != channels {
        return Err(format!("`{name}` has {c} channels; the config's key and value heads make {channels}"));
    }
    Ok(w)
}

/// Whether a stored convolution weight is in mlx-lm's layout ([C, K, 1]) rather than PyTorch's
/// ([C, 1, K]); None when its shape does not say (kernel 1, or not 3-D).
pub fn conv_is_mlx(weight: &Array) -> Option<bool> {
    if weight.ndim() != 3 {
        return None;
    }
    match (weight.dim(1), weight.dim(2)) {
        (1, k) if k != 1 => Some(false),
        (k, 1) if k != 1 => Some(true),
        _ => None,
    }
}
