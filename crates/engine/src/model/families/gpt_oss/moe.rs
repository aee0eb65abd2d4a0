//! gpt-oss's mixture of experts: a router with a bias choosing each token's top-k experts by
//! logit (weighed by a softmax over those k), and experts with biases and a clamped SwiGLU.
//! The experts load dense (transformers' `gate_up_proj` [E, H, 2I], `down_proj` [E, I, H]) or as
//! OpenAI publishes them, MXFP4 (`*_blocks` and `*_scales`), which stay packed: MLX's `mxfp4`
//! quantization mode reads the same bits (e2m1 values two a byte, low nibble first, and an e8m0
//! scale per 32 inputs).

use std::path::Path;

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{nn, ops, Array, Dtype};

use crate::error::{EngineError, Result};
use crate::model::layer_loader::LayerLoader;
use crate::model::layers::moe::top_k;
use crate::model::layers::mxfp4_experts::{self, GROUP as MXFP4_GROUP};
use crate::model::layers::Linear;

pub struct Moe {
    router: Linear,
    top_k: i32,
    experts: Experts,
}

/// One projection of every expert.
enum Projection {
    /// [E, in, out], for `gather_mm`.
    Dense(Array),
    /// [E, out, in / 8] uint32 (eight e2m1 values each) and e8m0 scales [E, out, in / 32],
    /// for `mxfp4_experts::gather`.
    Mxfp4 { weight: Array, scales: Array },
}

struct Experts {
    /// Gate then up along the outputs (de-interleaved at load).
    gate_up: Projection,
    /// [E, 2I], gate then up.
    gate_up_bias: Array,
    down: Projection,
    /// [E, hidden].
    down_bias: Array,
    intermediate: i32,
    alpha: Array,
    limit: f32,
}

/// An error naming a tensor of `{p}.experts` and the shape it should have.
fn wrong(source: &Path, p: &str, name: &str, shape: &[i32], want: String) -> EngineError {
    EngineError::CorruptWeights { path: source.to_path_buf(), reason: format!("`{p}.experts.{name}` is {shape:?}; {want}") }
}

impl Moe {
    /// `{prefix}.mlp`: `router` and `experts`, as transformers stores them or MXFP4-packed.
    pub fn load(l: &mut LayerLoader, prefix: &str, num_experts: usize, top_k: usize, alpha: f32, limit: f32) -> Result<Self> {
        let p = format!("{prefix}.mlp");
        let router = l.linear(&format!("{p}.router"))?;
        let dtype = l.dtype;
        let source = l.weights.source().to_path_buf();
        let (e, hidden) = (num_experts as i32, l.config.hidden_size as i32);
        let gate_up_bias = l.weights.take(&format!("{p}.experts.gate_up_proj_bias"))?.as_dtype(dtype)?;
        let down_bias = l.weights.take(&format!("{p}.experts.down_proj_bias"))?.as_dtype(dtype)?;
        if gate_up_bias.ndim() != 2 || gate_up_bias.dim(0) != e || gate_up_bias.dim(1) % 2 != 0 {
            return Err(wrong(&source, &p, "gate_up_proj_bias", gate_up_bias.shape(), format!("expected [{e}, 2 × intermediate]")));
        }
        let intermediate = gate_up_bias.dim(1) / 2;
        if down_bias.shape() != [e, hidden] {
            return Err(wrong(&source, &p, "down_proj_bias", down_bias.shape(), format!("expected [{e}, {hidden}]")));
        }
        let (gate_up, down) = if l.weights.contains(&format!("{p}.experts.gate_up_proj_blocks")) {
            let mut packed = |name: &str, out: i32, inputs: i32| -> Result<(Array, Array)> {
                let blocks = l.weights.take(&format!("{p}.experts.{name}_blocks"))?;
                let scales = l.weights.take(&format!("{p}.experts.{name}_scales"))?;
                let groups = inputs / MXFP4_GROUP;
                if blocks.shape() != [e, out, groups, 16] || blocks.dtype() != Dtype::Uint8 || inputs % MXFP4_GROUP != 0 {
                    let want = format!("expected uint8 [{e}, {out}, {groups}, 16] ({inputs} inputs in groups of 32)");
                    return Err(wrong(&source, &p, &format!("{name}_blocks"), blocks.shape(), want));
                }
                if scales.shape() != [e, out, groups] || scales.dtype() != Dtype::Uint8 {
                    return Err(wrong(
                        &source,
                        &p,
                        &format!("{name}_scales"),
                        scales.shape(),
                        format!("expected uint8 [{e}, {out}, {groups}]"),
                    ));
                }
                // A group's 16 bytes read as four little-endian words: MLX's packing.
                Ok((blocks.reshape(&[e, out, groups * 16])?.view_dtype(Dtype::Uint32)?, scales))
            };
            let (weight, scales) = packed("gate_up_proj", 2 * intermediate, hidden)?;
            let rows = interleaved_rows(2 * intermediate);
            let gate_up = Projection::Mxfp4 { weight: weight.take_axis(&rows, 1)?, scales: scales.take_axis(&rows, 1)? };
            let (weight, scales) = packed("down_proj", hidden, intermediate)?;
            (gate_up, Projection::Mxfp4 { weight, scales })
        } else {
            let gate_up = l.weights.take(&format!("{p}.experts.gate_up_proj"))?.as_dtype(dtype)?;
            let down = l.weights.take(&format!("{p}.experts.down_proj"))?.as_dtype(dtype)?;
            if gate_up.shape() != [e, hidden, 2 * intermediate] {
                return Err(wrong(&source, &p, "gate_up_proj", gate_up.shape(), format!("expected [{e}, {hidden}, {}]", 2 * intermediate)));
            }
            if down.shape() != [e, intermediate, hidden] {
                return Err(wrong(&source, &p, "down_proj", down.shape(), format!("expected [{e}, {intermediate}, {hidden}]")));
            }
            (Projection::Dense(deinterleave(&gate_up)?), Projection::Dense(down))
        };
        let experts = Experts {
            gate_up,
            gate_up_bias: deinterleave(&gate_up_bias)?,
            down,
            down_bias,
            intermediate,
            alpha: Array::from_f32(alpha).as_dtype(dtype)?,
            limit,
        };
        Ok(Self { router, top_k: top_k as i32, experts })
    }

    /// x [B, L, hidden] → [B, L, hidden].
    pub fn forward(&self, x: &Array) -> Result<Array> {
        let shape = x.shape().to_vec();
        let flat = x.reshape(&[-1, shape[2]])?;
        let logits = self.router.forward(&flat)?.as_dtype(Dtype::Float32)?;
        let (experts, chosen) = top_k(&logits, self.top_k)?;
        let weights = ops::softmax_axis(&chosen, -1, true)?.as_dtype(x.dtype())?;
        Ok(self.experts.forward(&flat, &experts, &weights)?.reshape(&shape)?)
    }

    pub fn arrays(&self) -> Vec<&Array> {
        let e = &self.experts;
        let mut all = self.router.arrays();
        all.extend(e.gate_up.arrays().into_iter().chain(e.down.arrays()));
        all.extend([&e.gate_up_bias, &e.down_bias, &e.alpha]);
        all
    }
}

impl Projection {
    /// x [.., 1, in] gathered by `experts` (one index per leading row) → [.., 1, out].
    fn apply(&self, x: &Array, experts: &Array) -> Result<Array> {
        match self {
            Self::Dense(w) => Ok(ops::gather_mm(x, w, None, experts, false)?),
            Self::Mxfp4 { weight, scales } => mxfp4_experts::gather(x, weight, scales, experts),
        }
    }

    fn arrays(&self) -> Vec<&Array> {
        match self {
            Self::Dense(w) => vec![w],
            Self::Mxfp4 { weight, scales } => vec![weight, scales],
        }
    }
}

/// The row order that puts interleaved gate/up rows (gate at even rows) gate first.
fn interleaved_rows(rows: i32) -> Array {
    let order: Vec<u32> = (0..rows as u32).step_by(2).chain((1..rows as u32).step_by(2)).collect();
    Array::from_slice(&order, &[rows])
}

/// [.., 2I] with gate and up interleaved (gate at even indices) → [.., 2I] gate then up.
fn deinterleave(a: &Array) -> Result<Array> {
    let mut shape = a.shape().to_vec();
    let last = shape.pop().expect("at least one axis");
    shape.extend([last / 2, 2]);
    let pairs = a.reshape(&shape)?;
    let n = pairs.ndim() as i32;
    let (gate, up) = (pairs.take_axis(Array::from_int(0), n - 1)?, pairs.take_axis(Array::from_int(1), n - 1)?);
    Ok(ops::concatenate(&[gate, up], -1)?)
}

impl Experts {
    /// x [T, hidden], experts [T, k] (uint32), weights [T, k] in x's dtype → [T, hidden].
    fn forward(&self, x: &Array, experts: &Array, weights: &Array) -> Result<Array> {
        let x = x.expand_dims(-2)?.expand_dims(-2)?; // [T, 1, 1, hidden]
        let gate_up = self.gate_up.apply(&x, experts)?; // [T, k, 1, 2I]
        let gate_up = ops::add(&gate_up, &self.gate_up_bias.take_axis(experts, 0)?.expand_dims(-2)?)?;
        let i = self.intermediate;
        let gate = ops::minimum(gate_up.index((.., .., .., ..i)), Array::from_f32(self.limit).as_dtype(x.dtype())?)?;
        let up = ops::clip(gate_up.index((.., .., .., i..)), (-self.limit, self.limit))?;
        let glu = ops::multiply(&gate, &nn::sigmoid(&ops::multiply(&gate, &self.alpha)?)?)?;
        let h = ops::multiply(&ops::add(&up, Array::from_f32(1.0).as_dtype(x.dtype())?)?, &glu)?;
        let y = self.down.apply(&h, experts)?.squeeze_axes(&[-2])?; // [T, k, hidden]
        let y = ops::add(&y, &self.down_bias.take_axis(experts, 0)?)?;
        Ok(ops::sum_axis(&ops::multiply(&y, &weights.expand_dims(-1)?)?, 1, false)?)
    }
}
