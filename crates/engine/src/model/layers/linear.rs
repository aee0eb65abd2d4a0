//! A linear layer, dense or MLX-affine-quantized.

use mlx_rs::{ops, Array, Dtype};

use crate::error::Result;

pub enum Linear {
    /// `weight` is [out, in], as checkpoints store it.
    Dense { weight: Array, bias: Option<Array> },
    /// Packed weight [out, in * bits / 32] with per-group scales and biases.
    Quantized { weight: Array, scales: Array, biases: Option<Array>, bias: Option<Array>, group_size: i32, bits: i32 },
}

impl Linear {
    pub fn forward(&self, x: &Array) -> Result<Array> {
        let (y, bias) = match self {
            Linear::Dense { weight, bias } => (ops::matmul(x, weight.t())?, bias),
            Linear::Quantized { weight, scales, biases, bias, group_size, bits } => {
                (ops::quantized_matmul(x, weight, scales, biases.as_ref(), true, *group_size, *bits)?, bias)
            }
        };
        Ok(match bias {
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
