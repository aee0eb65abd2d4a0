//! Routed experts as mlx-lm's `SwitchGLU`: each token runs through its top-k gated MLPs,
//! down(act(gate(x)) · up(x)), with the experts' weights stacked [experts, ..] and gathered per
//! token (`gather_mm`, or `gather_qmm` straight from MLX-quantized weights, so a 4-bit MoE stays
//! 4-bit in memory). With many (token, expert) pairs (prefill) the pairs are sorted by expert
//! first, so each expert's rows are read once.

use mlx_rs::{nn, ops, Array, Dtype};

use crate::error::{EngineError, Result};
use crate::model::config::Activation;
use crate::model::layers::Linear;

/// At or above this many (token, expert) pairs, sort them by expert (mlx-lm's threshold).
const SORT_FROM: i32 = 64;

/// One projection of every expert.
pub enum ExpertWeights {
    /// [experts, in, out]: transposed for `gather_mm`.
    Dense(Array),
    /// [experts, out, in · bits / 32] packed, with per-group scales and biases.
    Quantized { weight: Array, scales: Array, biases: Option<Array>, group_size: i32, bits: i32 },
}

impl ExpertWeights {
    /// From a stacked linear layer ([experts, out, in]), as `Weights::linear` reads mlx-lm's
    /// `switch_mlp.*_proj` (already in the compute dtype).
    pub fn from_linear(linear: Linear, name: &str) -> Result<Self> {
        match linear {
            Linear::Dense { weight, bias: None } => Ok(Self::Dense(weight.swap_axes(-1, -2)?)),
            Linear::Quantized { weight, scales, biases, bias: None, group_size, bits } => {
                Ok(Self::Quantized { weight, scales, biases, group_size, bits })
            }
            _ => Err(EngineError::WeightLayout(format!("`{name}` has a bias; routed experts have none"))),
        }
    }

    /// From [experts, out, in] dense weights (transformers' layout).
    pub fn dense(weight: Array) -> Result<Self> {
        Ok(Self::Dense(weight.swap_axes(-1, -2)?))
    }

    /// Output features.
    fn out_features(&self) -> i32 {
        match self {
            Self::Dense(w) => w.dim(-1),
            Self::Quantized { weight, .. } => weight.dim(-2),
        }
    }

    /// Gate and up as one projection, when both are stored alike.
    fn fuse(gate: Self, up: Self) -> Result<std::result::Result<Self, (Self, Self)>> {
        Ok(Ok(match (gate, up) {
            (Self::Dense(g), Self::Dense(u)) => Self::Dense(ops::concatenate(&[g, u], -1)?),
            (
                Self::Quantized { weight: gw, scales: gs, biases: gb, group_size, bits },
                Self::Quantized { weight: uw, scales: us, biases: ub, group_size: ug, bits: ubits },
            ) if group_size == ug && bits == ubits && gb.is_some() == ub.is_some() => Self::Quantized {
                weight: ops::concatenate(&[gw, uw], 1)?,
                scales: ops::concatenate(&[gs, us], 1)?,
                biases: match (gb, ub) {
                    (Some(g), Some(u)) => Some(ops::concatenate(&[g, u], 1)?),
                    _ => None,
                },
                group_size,
                bits,
            },
            (gate, up) => return Ok(Err((gate, up))),
        }))
    }

    /// x [.., 1, in] gathered by `experts` (one index per leading row) → [.., 1, out].
    fn apply(&self, x: &Array, experts: &Array, sorted: bool) -> Result<Array> {
        Ok(match self {
            Self::Dense(w) => ops::gather_mm(x, w, None, experts, sorted)?,
            Self::Quantized { weight, scales, biases, group_size, bits } => {
                ops::gather_qmm(x, weight, scales, biases.as_ref(), None, experts, true, *group_size, *bits, sorted)?
            }
        })
    }

    fn arrays(&self) -> Vec<&Array> {
        match self {
            Self::Dense(w) => vec![w],
            Self::Quantized { weight, scales, biases, .. } => [Some(weight), Some(scales), biases.as_ref()].into_iter().flatten().collect(),
        }
    }
}

enum GateUp {
    /// Gate then up along the output axis.
    Fused(ExpertWeights),
    Separate(ExpertWeights, ExpertWeights),
}

pub struct SwitchGlu {
    gate_up: GateUp,
    down: ExpertWeights,
    activation: Activation,
}

impl SwitchGlu {
    pub fn new(gate: ExpertWeights, up: ExpertWeights, down: ExpertWeights, activation: Activation) -> Result<Self> {
        let gate_up = match ExpertWeights::fuse(gate, up)? {
            Ok(fused) => GateUp::Fused(fused),
            Err((gate, up)) => GateUp::Separate(gate, up),
        };
        Ok(Self { gate_up, down, activation })
    }

    /// x [T, hidden], experts [T, k] (uint32), weights [T, k] in x's dtype → [T, hidden]: the
    /// experts' outputs summed with their weights.
    pub fn forward(&self, x: &Array, experts: &Array, weights: &Array) -> Result<Array> {
        let (t, k, hidden) = (experts.dim(0), experts.dim(1), x.dim(-1));
        let sort = t * k >= SORT_FROM;
        let (rows, indices, unsort) = if sort {
            let flat = experts.reshape(&[-1])?;
            let order = ops::argsort_axis(&flat, 0)?;
            let unsort = ops::argsort_axis(&order, 0)?;
            let token = ops::floor_divide(&order, Array::from_int(k).as_dtype(order.dtype())?)?;
            let rows = x.reshape(&[t, 1, hidden])?.take_axis(&token, 0)?; // [T·k, 1, hidden]
            (rows, flat.take_axis(&order, 0)?, Some(unsort))
        } else {
            (x.reshape(&[t, 1, 1, hidden])?, experts.clone(), None) // [T, 1, 1, hidden] × [T, k]
        };
        let (gate, up) = match &self.gate_up {
            GateUp::Fused(w) => {
                let mut halves = w.apply(&rows, &indices, sort)?.split_at_indices(&[w.out_features() / 2], -1)?.into_iter();
                (halves.next().expect("gate"), halves.next().expect("up"))
            }
            GateUp::Separate(g, u) => (g.apply(&rows, &indices, sort)?, u.apply(&rows, &indices, sort)?),
        };
        let gate = match self.activation {
            Activation::Silu => nn::silu(&gate)?,
            Activation::GeluTanh => nn::gelu_approximate(&gate)?,
        };
        let y = self.down.apply(&ops::multiply(&gate, &up)?, &indices, sort)?;
        let y = match unsort {
            Some(unsort) => y.take_axis(&unsort, 0)?.reshape(&[t, k, hidden])?,
            None => y.reshape(&[t, k, hidden])?,
        };
        Ok(ops::sum_axis(&ops::multiply(&y, &weights.expand_dims(-1)?)?, 1, false)?)
    }

    pub fn arrays(&self) -> Vec<&Array> {
        let mut all = match &self.gate_up {
            GateUp::Fused(w) => w.arrays(),
            GateUp::Separate(g, u) => g.arrays().into_iter().chain(u.arrays()).collect(),
        };
        all.extend(self.down.arrays());
        all
    }
}

/// Router weights for the top `k` of `logits` [T, experts]: softmax in float32, the `k` largest
/// (renormalised to sum to 1 when `normalize`), cast to `dtype`. (indices [T, k] uint32, weights.)
pub fn route(logits: &Array, k: i32, normalize: bool, dtype: Dtype) -> Result<(Array, Array)> {
    let probs = ops::softmax_axis(&logits.as_dtype(Dtype::Float32)?, -1, true)?;
    let (indices, weights) = crate::model::layers::moe::top_k(&probs, k)?;
    let weights = if normalize { ops::divide(&weights, &weights.sum_axis(-1, true)?)? } else { weights };
    Ok((indices, weights.as_dtype(dtype)?))
}

#[cfg(test)]
mod tests {
    use mlx_rs::ops::indexing::IndexOp;

    use super::*;

    fn random(shape: &[i32], seed: u64) -> Array {
        let key = mlx_rs::random::key(seed).unwrap();
        mlx_rs::random::normal::<f32>(shape, None, Some(0.2), &key).unwrap()
    }

    /// Each token through its experts one by one with plain matmuls.
    fn naive(x: &Array, experts: &[[u32; 2]], weights: &Array, [gate, up, down]: &[Array; 3]) -> Array {
        let rows: Vec<Array> = experts
            .iter()
            .enumerate()
            .map(|(t, pair)| {
                let xt = x.index(t as i32..t as i32 + 1);
                let mut sum: Option<Array> = None;
                for (j, &e) in pair.iter().enumerate() {
                    let e = e as i32;
                    let g = nn::silu(ops::matmul(&xt, gate.index(e).t()).unwrap()).unwrap();
                    let u = ops::matmul(&xt, up.index(e).t()).unwrap();
                    let y = ops::matmul(ops::multiply(&g, &u).unwrap(), down.index(e).t()).unwrap();
                    let y = ops::multiply(&y, weights.index((t as i32, j as i32))).unwrap();
                    sum = Some(match sum {
                        None => y,
                        Some(s) => ops::add(&s, &y).unwrap(),
                    });
                }
                sum.unwrap()
            })
            .collect();
        ops::concatenate(&rows, 0).unwrap()
    }

    fn max_diff(a: &Array, b: &Array) -> f32 {
        ops::max(ops::abs(ops::subtract(a, b).unwrap()).unwrap(), None).unwrap().item_exact::<f32>()
    }

    /// Dense and 4-bit experts, gathered per token (3 tokens) and sorted by expert (40 tokens),
    /// against a per-token loop over the same (dequantized) weights.
    #[test]
    fn gathered_experts_match_a_loop() {
        let (experts, hidden, inter) = (4, 64, 32);
        let dense = [random(&[experts, inter, hidden], 1), random(&[experts, inter, hidden], 2), random(&[experts, hidden, inter], 3)];
        let quantized: Vec<(Array, Array, Array)> = dense.iter().map(|w| ops::quantize(w, 32, 4).unwrap()).collect();
        let dequantized: [Array; 3] = std::array::from_fn(|i| {
            let (w, s, b) = &quantized[i];
            ops::dequantize(w, s, Some(b), 32, 4).unwrap()
        });
        let dense_glu = SwitchGlu::new(
            ExpertWeights::dense(dense[0].clone()).unwrap(),
            ExpertWeights::dense(dense[1].clone()).unwrap(),
            ExpertWeights::dense(dense[2].clone()).unwrap(),
            Activation::Silu,
        )
        .unwrap();
        let packed = |i: usize| {
            let (weight, scales, biases) = quantized[i].clone();
            ExpertWeights::Quantized { weight, scales, biases: Some(biases), group_size: 32, bits: 4 }
        };
        let quantized_glu = SwitchGlu::new(packed(0), packed(1), packed(2), Activation::Silu).unwrap();
        for tokens in [3, 40] {
            let x = random(&[tokens, hidden], 10 + tokens as u64);
            let pairs: Vec<[u32; 2]> = (0..tokens as u32).map(|t| [t % 4, (t * 3 + 1) % 4]).collect();
            let flat: Vec<u32> = pairs.iter().flatten().copied().collect();
            let indices = Array::from_slice(&flat, &[tokens, 2]);
            let weights = ops::softmax_axis(random(&[tokens, 2], 20), -1, None).unwrap();
            let got = dense_glu.forward(&x, &indices, &weights).unwrap();
            let diff = max_diff(&got, &naive(&x, &pairs, &weights, &dense));
            assert!(diff < 1e-5, "dense, {tokens} tokens: {diff}");
            let got = quantized_glu.forward(&x, &indices, &weights).unwrap();
            let diff = max_diff(&got, &naive(&x, &pairs, &weights, &dequantized));
            assert!(diff < 1e-4, "4-bit, {tokens} tokens: {diff}");
        }
    }
}
