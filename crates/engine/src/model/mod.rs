//! From files on disk to a model that maps tokens to logits.

pub mod config;
pub mod discover;
pub mod expanded_prompt;
pub mod families;
pub mod family;
pub mod format;
pub mod layers;
pub mod loader;
pub mod media_processor;
pub mod ollama;
pub mod registry;
pub mod towers;
pub mod weights;

use std::path::{Path, PathBuf};

use mlx_rs::{Array, Dtype};

use crate::error::{EngineError, Result};
use crate::model::config::LayerKind;
use crate::state::{SequenceState, StateKind};
pub use config::TextConfig;
pub use format::Format;
pub use media_processor::MediaProcessor;

/// A decoder-only language model.
pub trait TextModel {
    fn config(&self) -> &TextConfig;
    /// tokens [1, L] (int32) → logits [1, vocab] (float32) of the last position; the state
    /// grows by L.
    fn forward(&self, tokens: &Array, state: &mut SequenceState) -> Result<Array>;
    /// Every weight, so loading can evaluate them once.
    fn arrays(&self) -> Vec<&Array>;

    /// Whether `forward_every` works: the logits of every position fed, not only the last
    /// (what verifying speculative proposals needs).
    fn scores_every_position(&self) -> bool {
        false
    }

    /// As `forward`, but tokens [1, L] → logits [L, vocab] (float32) of every position, each
    /// as `forward` would give it had the tokens been fed one at a time; the state grows by L.
    fn forward_every(&self, _tokens: &Array, _state: &mut SequenceState) -> Result<Array> {
        Err(EngineError::invalid("input", format!("{} gives the logits of the last position only", self.config().arch)))
    }

    /// Whether `forward_batch` works: several sequences decoded in one forward pass.
    fn batches(&self) -> bool {
        false
    }

    /// One decode step for several sequences at once: tokens [B, 1] (row i continues
    /// `states[i]`, whatever its length) → logits [B, vocab] (float32); each state grows by 1.
    /// Models that cannot (see `batches`) have their rows stepped one at a time instead.
    fn forward_batch(&self, _tokens: &Array, _states: &mut [&mut SequenceState]) -> Result<Array> {
        Err(EngineError::invalid("input", format!("{} decodes one sequence at a time", self.config().arch)))
    }

    /// tokens [1, L] → the input embeddings [1, L, hidden] the model's own `forward` starts
    /// from (scaled where the model scales them), for splicing media rows into.
    fn embed(&self, _tokens: &Array) -> Result<Array> {
        Err(EngineError::invalid("input", format!("{} takes token ids only", self.config().arch)))
    }

    /// `forward` from embeddings: multimodal prompts, whose media rows come from a vision or
    /// audio tower. Logits of the last position; the state grows by L.
    fn forward_embeddings(&self, _input: EmbeddingsInput, _state: &mut SequenceState) -> Result<Array> {
        Err(EngineError::invalid("input", format!("{} takes token ids only", self.config().arch)))
    }

    /// The id to put in `EmbeddingsInput::ids` at media positions (a pad id, say).
    fn media_pad_id(&self) -> Option<u32> {
        None
    }

    /// The state each layer keeps between calls, in the order `forward` reads them
    /// (default: full keys and values for every layer).
    fn state_kinds(&self) -> Vec<StateKind> {
        vec![StateKind::KeysValues; self.config().num_layers]
    }

    /// A fresh sequence's state.
    fn new_state(&self) -> SequenceState {
        SequenceState::new(&self.state_kinds())
    }
}

/// A chunk of a prompt as embeddings, for `TextModel::forward_embeddings`.
pub struct EmbeddingsInput<'a> {
    /// [1, L, hidden] in the compute dtype: `embed(ids)` with media rows replaced by the
    /// towers' outputs (already projected to the text hidden size).
    pub embeds: &'a Array,
    /// [1, L] int32: the ids behind the rows, with every media placeholder replaced by
    /// `media_pad_id()`, for models that look more up by id than the input embeddings (per-layer
    /// inputs, say), as transformers does.
    pub ids: &'a Array,
    /// Per position of this chunk, which media item it belongs to (0, 1, … in order), or -1
    /// for text and for media the model attends to causally. A model may let the positions of
    /// one item (an image, say) see each other both ways; media it reads causally (audio, say)
    /// are labelled -1. An item must not be split across chunks.
    pub media_blocks: Option<&'a [i32]>,
    /// [axes, L] int32: each position's place along several axes (multimodal RoPE), for models
    /// whose processor gives `TokenPositions`; `None`: position i of the sequence is i (plus the
    /// state's position shift).
    pub positions: Option<&'a Array>,
    /// [k, 1, L, hidden]: rows added to the hidden states after decoder layer j (j < k), zero at
    /// positions that have none (text); from towers that give several sets of rows (deepstack).
    pub layer_additions: Option<&'a Array>,
}

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
}

/// Decided at load from the options, the device and the checkpoint.
pub struct BuildOptions {
    pub dtype: Dtype,
    pub dequantize: bool,
}

/// A loaded model and where it came from.
pub struct LoadedModel {
    pub model: Box<dyn TextModel>,
    pub path: PathBuf,
    pub format: Format,
    pub fingerprint: String,
    pub dtype: Dtype,
    pub quantized: bool,
    /// Kept for the tokenizer and chat template of GGUF models.
    pub gguf: Option<mlx_rs::io::GgufFile>,
}

pub fn load(path: &Path, options: &LoadOptions) -> Result<LoadedModel> {
    load_with_progress(path, options, &mut |_| {})
}

/// The weights are made ready in this many groups, each reported: a progress bar moves while
/// they load instead of sitting still for the whole of it.
const WEIGHT_GROUPS: usize = 16;

/// `load`, telling `progress` the share of the weights made ready so far (0 to 1).
pub fn load_with_progress(path: &Path, options: &LoadOptions, progress: &mut dyn FnMut(f32)) -> Result<LoadedModel> {
    let format = Format::detect(path)?;
    // GGUF files have no config.json: their families build from the shared config alone.
    let (config, json, mut weights, fingerprint, gguf) = match format {
        Format::Safetensors => {
            let l = format::hf::load(path, registry::defaults)?;
            (l.config, Some(l.json), l.weights, l.fingerprint, None)
        }
        Format::Gguf => {
            let l = format::gguf::load(path)?;
            (l.config, None, l.weights, l.fingerprint, Some(l.file))
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
    Ok(LoadedModel { model, path: path.into(), format, fingerprint, dtype: opts.dtype, quantized: quantized && !opts.dequantize, gguf })
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

/// The bytes one token takes in one attention layer's key/value cache: keys and values of
/// every KV head, in the dtype the engine computes in here (float32 on a CPU, half precision
/// on a GPU).
pub fn kv_bytes_per_token_and_layer(num_kv_heads: usize, head_dim: usize) -> u64 {
    let element = if crate::device::default_is_gpu() { 2 } else { 4 };
    2 * (num_kv_heads * head_dim) as u64 * element
}

/// The key/value cache of `tokens` tokens: sliding-window layers keep at most their window,
/// linear-attention and convolution layers keep a fixed state (left out: it is small).
pub fn kv_cache_bytes(c: &TextConfig, tokens: usize) -> u64 {
    let per_layer = kv_bytes_per_token_and_layer(c.num_kv_heads, c.head_dim);
    let kinds = (0..c.num_layers).map(|i| c.layer_kinds.get(i).copied().unwrap_or(LayerKind::Full));
    kinds
        .map(|kind| match kind {
            LayerKind::Full => tokens as u64 * per_layer,
            LayerKind::Sliding => tokens.min(c.sliding_window.unwrap_or(tokens)) as u64 * per_layer,
            LayerKind::Linear | LayerKind::Convolution => 0,
        })
        .sum()
}

/// An estimate for memory planning: embeddings, attention and MLP weights.
pub fn parameter_count(c: &TextConfig) -> u64 {
    let (h, i, v) = (c.hidden_size as u64, c.intermediate_size as u64, c.vocab_size as u64);
    let attn = h * (c.num_heads * c.head_dim) as u64 * 2 + h * (c.num_kv_heads * c.head_dim) as u64 * 2;
    let per_layer = attn + 3 * h * i;
    v * h * if c.tie_word_embeddings { 1 } else { 2 } + c.num_layers as u64 * per_layer
}
