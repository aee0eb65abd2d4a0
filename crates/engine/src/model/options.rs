//! How to load a model: what the user chose (`LoadOptions`) and what loading decided from it
//! for the family's builder (`BuildOptions`). Apart from `load` so that families, which take
//! `BuildOptions`, do not import the loader that calls them.

use mlx_rs::Dtype;

use crate::error::{EngineError, Result};

/// What dtype to compute in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DtypeChoice {
    /// The checkpoint's own dtype on a GPU; float32 activations on a CPU, where MLX's
    /// half-precision kernels are several times slower than float32 BLAS (quantized weights
    /// stay packed: Confab's CPU kernel reads them directly).
    #[default]
    Auto,
    Float32,
    Bfloat16,
    Float16,
}

impl std::str::FromStr for DtypeChoice {
    type Err = EngineError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(Self::Auto),
            "float32" | "f32" => Ok(Self::Float32),
            "bfloat16" | "bf16" => Ok(Self::Bfloat16),
            "float16" | "f16" => Ok(Self::Float16),
            other => Err(EngineError::invalid("dtype", format!("`{other}`: use auto, float32, bfloat16 or float16"))),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    pub dtype: DtypeChoice,
    /// With `--dtype float32`, dequantize quantized weights at load if the result fits in this
    /// many bytes (CPU only; default: half of physical memory).
    pub dequantize_budget: Option<u64>,
    /// Full keys/values layers hold their keys and values quantized (`--kv-bits`); `None`:
    /// the compute dtype. Where the model's state cannot take it, the plan says why.
    pub kv_quantization: Option<crate::state::KvQuantization>,
}

/// Decided at load from the options, the device and the checkpoint.
pub struct BuildOptions {
    pub dtype: Dtype,
    pub dequantize: bool,
}
