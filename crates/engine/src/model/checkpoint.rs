//! From a checkpoint on disk to a family's text model: the options, the compute dtype decided
//! from them, the device and the checkpoint, and the weights read through `format` and taken by
//! the family's builder (`registry`).

use std::path::{Path, PathBuf};

use mlx_rs::Dtype;

use crate::error::{EngineError, Result};
use crate::model::{format, parameter_count, registry, BuildOptions, DtypeChoice, Format, LoadOptions, TextConfig, TextModel};

/// A checkpoint read from disk: its text model and where it came from (`runtime::ReadyModel`
/// adds the tokenizer, template and towers; `runtime::ModelInfo` describes it).
pub struct LoadedCheckpoint {
    pub model: Box<dyn TextModel>,
    pub path: PathBuf,
    pub format: Format,
    pub fingerprint: String,
    pub dtype: Dtype,
    pub quantized: bool,
    /// Kept for the tokenizer and chat template of GGUF models.
    pub gguf: Option<mlx_rs::io::GgufFile>,
}

pub fn load(path: &Path, options: &LoadOptions) -> Result<LoadedCheckpoint> {
    load_with_progress(path, options, &mut |_| {})
}

/// The weights are made ready in this many groups, each reported: a progress bar moves while
/// they load instead of sitting still for the whole of it.
const WEIGHT_GROUPS: usize = 16;

/// `load`, telling `progress` the share of the weights made ready so far (0 to 1).
pub fn load_with_progress(path: &Path, options: &LoadOptions, progress: &mut dyn FnMut(f32)) -> Result<LoadedCheckpoint> {
    let format = Format::detect(path)?;
    // GGUF files have no config.json: their families build from the shared config alone, or
    // from one written from the metadata (`format::gguf_arch`).
    let (config, json, mut weights, fingerprint, gguf) = match format {
        Format::Safetensors => {
            let mut l = format::hf::load(path, registry::defaults)?;
            l.config.arch = registry::architecture(&l.json, &l.config.arch);
            (l.config, Some(l.json), l.weights, l.fingerprint, None)
        }
        Format::Gguf => {
            let l = format::gguf::load(path, registry::defaults)?;
            (l.config, l.json, l.weights, l.fingerprint, Some(l.file))
        }
    };
    let build = registry::builder(&config.arch).ok_or_else(|| EngineError::UnknownArchitecture {
        path: path.into(),
        arch: config.arch.clone(),
        supported: registry::supported(),
    })?;
    let quantized = weights.remaining().any(|n| n.ends_with(".scales"));
    let opts = build_options(&config, quantized, options)?;
    let model = build(&config, json.as_ref(), &mut weights, &opts)?;
    weights.expect_all_taken(&config.arch)?;
    let arrays = model.arrays();
    let groups = arrays.chunks(arrays.len().div_ceil(WEIGHT_GROUPS).max(1));
    let count = groups.len();
    for (done, group) in groups.enumerate() {
        mlx_rs::transforms::eval(group.iter().copied())?;
        progress((done + 1) as f32 / count as f32);
    }
    Ok(LoadedCheckpoint {
        model,
        path: path.into(),
        format,
        fingerprint,
        dtype: opts.dtype,
        quantized: quantized && !opts.dequantize,
        gguf,
    })
}

fn build_options(config: &TextConfig, quantized: bool, options: &LoadOptions) -> Result<BuildOptions> {
    let on_gpu = crate::device::default_is_gpu();
    crate::model::layers::enable_cpu_kernels(!on_gpu);
    let checkpoint = match config.dtype.as_deref() {
        Some("bfloat16") => Dtype::Bfloat16,
        Some("float32") => Dtype::Float32,
        _ => Dtype::Float16,
    };
    let dtype = match options.dtype {
        DtypeChoice::Auto if on_gpu => checkpoint,
        DtypeChoice::Auto | DtypeChoice::Float32 => Dtype::Float32,
        DtypeChoice::Bfloat16 => Dtype::Bfloat16,
        DtypeChoice::Float16 => Dtype::Float16,
    };
    let dense_bytes = parameter_count(config) * dtype_bytes(dtype);
    let budget = options.dequantize_budget.unwrap_or_else(|| crate::device::physical_memory() / 2);
    // On a CPU, quantized weights are widened to float32 at load only when asked for
    // (`--dtype float32`) or when Confab's CPU kernel is missing: the kernel computes with
    // float32 activations straight from the packed weights, so `auto` keeps the checkpoint's
    // size in memory.
    let asked = options.dtype == DtypeChoice::Float32 || !crate::model::layers::cpu_linear::enabled();
    let dequantize = quantized && !on_gpu && dtype == Dtype::Float32 && dense_bytes <= budget && asked;
    Ok(BuildOptions { dtype, dequantize })
}

fn dtype_bytes(dtype: Dtype) -> u64 {
    if dtype == Dtype::Float32 {
        4
    } else {
        2
    }
}
