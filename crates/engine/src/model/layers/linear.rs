//! A linear layer, dense or MLX-affine-quantized.

use mlx_rs::{ops, Array, Dtype};

use crate::error::Result;
use crate::model::config::Activation;
use crate::model::layers::cpu_linear::{self, QuantMode, Quantized};

pub enum Linear {
    /// `weight` is [out, in], as checkpoints store it.
    Dense { weight: Array, bias: Option<Array> },
    /// Packed weight [out, in * bits / 32] with per-group scales and biases.
    Quantized { weight: Array, scales: Array, biases: Option<Array>, bias: Option<Array>, group_size: i32, bits: i32 },
}

impl Linear {
    /// The CPU kernel's view of this layer's weight, when the kernel takes it for input `x`.
    fn cpu_kernel_weight(&self, x: &Array) -> Option<(&Array, Option<Quantized<'_>>)> {
        let (weight, quantized) = match self {
            Linear::Dense { weight, .. } => (weight, None),
            Linear::Quantized { weight, scales, biases: Some(biases), group_size, bits, .. } => {
                (weight, Some(Quantized { scales, group_size: *group_size, bits: *bits, mode: QuantMode::Affine { biases } }))
            }
            Linear::Quantized { .. } => return None,
        };
        cpu_linear::supports(x, weight, quantized.as_ref()).then_some((weight, quantized))
    }

    /// act(x · gateᵀ) · (x · upᵀ) for a layer whose rows are [gate; up], in one step on the CPU
    /// kernel; None where the kernel does not apply (then split the plain output).
    pub fn gated_forward(&self, x: &Array, activation: Activation) -> Result<Option<Array>> {
        match self.cpu_kernel_weight(x) {
            Some((weight, quantized)) if self.bias().is_none() => Ok(Some(cpu_linear::gated(x, weight, quantized.as_ref(), activation)?)),
            _ => Ok(None),
        }
    }

    /// The output in float32 (for logits): `forward(x)` cast to float32, computed without the
    /// half-precision copy where the CPU kernel applies.
    pub fn forward_f32(&self, x: &Array) -> Result<Array> {
        match self.cpu_kernel_weight(x) {
            Some((weight, quantized)) if self.bias().is_none() => cpu_linear::linear_f32(x, weight, quantized.as_ref()),
            _ => Ok(self.forward(x)?.as_dtype(Dtype::Float32)?),
        }
    }

    pub fn forward(&self, x: &Array) -> Result<Array> {
        let y = match (self.cpu_kernel_weight(x), self) {
            (Some((weight, quantized)), _) => cpu_linear::linear(x, weight, quantized.as_ref())?,
            (None, Linear::Dense { weight, .. }) => ops::matmul(x, weight.t())?,
            (None, Linear::Quantized { weight, scales, biases, group_size, bits, .. }) => {
                ops::quantized_matmul(x, weight, scales, biases.as_ref(), true, *group_size, *bits)?
            }
        };
        Ok(match self.bias() {
            Some(b) => ops::add(&y, b)?,
            None => y,
        })
    }

    /// Cast to the compute dtype, dequantizing if asked (fast on a CPU, where MLX's quantized
    /// kernels with float32 activations lag far behind dense float32 BLAS).
    pub fn into_dtype(self, dtype: Dtype, dequantize: bool) -> Result<Self> {
        let cast = |a: Array| a.as_dtype(dtype);
        Ok(match self {
            Linear::Dense { weight, bias } => Linear::Dense { weight: cast(weight)?, bias: bias.map(cast).transpose()? },
            // Scales go to the compute dtype first: MLX dequantizes in the scales' dtype, and
            // float16 scales would round every weight (up to 2e-3 on SmolLM2's Q4_1).
            Linear::Quantized { weight, scales, biases, bias, group_size, bits } if dequantize => Linear::Dense {
                weight: ops::dequantize(&weight, cast(scales)?, biases.map(cast).transpose()?.as_ref(), group_size, bits)?,
                bias: bias.map(cast).transpose()?,
            },
            Linear::Quantized { weight, scales, biases, bias, group_size, bits } => Linear::Quantized {
                weight,
                scales: cast(scales)?,
                biases: biases.map(cast).transpose()?,
                bias: bias.map(cast).transpose()?,
                group_size,
                bits,
            },
        })
    }

    /// Output features (rows of the weight).
    pub fn out_features(&self) -> i32 {
        self.weight().dim(0)
    }

    /// Input features (columns of the weight, unpacked).
    pub fn in_features(&self) -> i32 {
        match self {
            Linear::Dense { weight, .. } => weight.dim(-1),
            Linear::Quantized { weight, bits, .. } => weight.dim(-1) * 32 / bits,
        }
    }

    fn weight(&self) -> &Array {
        match self {
            Linear::Dense { weight, .. } | Linear::Quantized { weight, .. } => weight,
        }
    }

    fn bias(&self) -> Option<&Array> {
        match self {
            Linear::Dense { bias, .. } | Linear::Quantized { bias, .. } => bias.as_ref(),
        }
    }

    /// Scales and (affine) biases of a quantized layer.
    fn quantization_arrays(&self) -> Option<(&Array, Option<&Array>)> {
        match self {
            Linear::Dense { .. } => None,
            Linear::Quantized { scales, biases, .. } => Some((scales, biases.as_ref())),
        }
    }

    /// Every array this layer holds, to evaluate weights once at load time.
    pub fn arrays(&self) -> Vec<&Array> {
        match self {
            Linear::Dense { weight, bias } => std::iter::once(weight).chain(bias).collect(),
            Linear::Quantized { weight, scales, biases, bias, .. } => {
                [Some(weight), Some(scales), biases.as_ref(), bias.as_ref()].into_iter().flatten().collect()
            }
        }
    }
}

/// Several linear layers over the same input run as one matmul (Q/K/V; gate/up): fewer, larger
/// kernel calls, which matters most when decoding one token at a time.
pub enum FusedLinear {
    /// The parts' rows stacked; `split_at` marks where each part's outputs end (but the last).
    Fused { linear: Linear, split_at: Vec<i32> },
    /// Parts quantized differently from each other cannot be stacked; they run one by one.
    Separate(Vec<Linear>),
}

impl FusedLinear {
    pub fn new(parts: Vec<Linear>) -> Result<Self> {
        let Some(layout) = shared_layout(&parts) else {
            return Ok(FusedLinear::Separate(parts));
        };
        let mut split_at: Vec<i32> = parts
            .iter()
            .scan(0, |end, p| {
                *end += p.out_features();
                Some(*end)
            })
            .collect();
        split_at.pop();
        let stack = |pick: fn(&Linear) -> Option<&Array>| -> Result<Option<Array>> {
            let arrays: Vec<&Array> = parts.iter().filter_map(pick).collect();
            if arrays.is_empty() {
                return Ok(None);
            }
            if arrays.len() != parts.len() {
                return Err(crate::error::EngineError::WeightLayout("fused parts disagree on bias".into()));
            }
            Ok(Some(ops::concatenate(&arrays, 0)?))
        };
        let bias = stack(|p| p.bias())?;
        let weight = stack(|p| Some(p.weight()))?.expect("at least one part");
        let linear = match layout {
            None => Linear::Dense { weight, bias },
            Some((group_size, bits)) => Linear::Quantized {
                weight,
                scales: stack(|p| p.quantization_arrays().map(|(s, _)| s))?.expect("quantized parts have scales"),
                biases: stack(|p| p.quantization_arrays().and_then(|(_, b)| b))?,
                bias,
                group_size,
                bits,
            },
        };
        Ok(FusedLinear::Fused { linear, split_at })
    }

    /// For gate and up fused as two equal halves: act(gate) · up in one step where the CPU
    /// kernel applies; None otherwise.
    pub fn gated_forward(&self, x: &Array, activation: Activation) -> Result<Option<Array>> {
        match self {
            FusedLinear::Fused { linear, split_at } if split_at.len() == 1 && split_at[0] * 2 == linear.out_features() => {
                linear.gated_forward(x, activation)
            }
            _ => Ok(None),
        }
    }

    pub fn forward(&self, x: &Array) -> Result<Vec<Array>> {
        match self {
            FusedLinear::Fused { linear, split_at } => Ok(linear.forward(x)?.split_at_indices(split_at, -1)?),
            FusedLinear::Separate(parts) => parts.iter().map(|p| p.forward(x)).collect(),
        }
    }

    pub fn arrays(&self) -> Vec<&Array> {
        match self {
            FusedLinear::Fused { linear, .. } => linear.arrays(),
            FusedLinear::Separate(parts) => parts.iter().flat_map(Linear::arrays).collect(),
        }
    }
}

/// `Some(None)`: all dense; `Some(Some((group, bits)))`: all quantized alike; `None`: mixed.
fn shared_layout(parts: &[Linear]) -> Option<Option<(i32, i32)>> {
    let layout = |p: &Linear| match p {
        Linear::Dense { .. } => None,
        Linear::Quantized { group_size, bits, biases, .. } => Some((*group_size, *bits, biases.is_some())),
    };
    let first = layout(parts.first()?);
    parts.iter().all(|p| layout(p) == first).then(|| first.map(|(g, b, _)| (g, b)))
}
