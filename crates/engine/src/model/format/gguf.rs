//! GGUF files (F32, F16, Q4_0, Q4_1, Q8_0 through MLX's own loader): hyper-parameters from the
//! metadata, tensors renamed to Hugging Face's names.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use mlx_rs::io::{GgufFile, GgufMetadataValue};

use crate::error::{EngineError, Result};
use crate::model::config::{Activation, LayerKind, RopeConfig, RopeScaling, TextConfig};
use crate::model::format::Fingerprint;
use crate::model::weights::Weights;

/// Architectures whose GGUF tensors we can rename, and their Hugging Face model_type.
const ARCHITECTURES: &[(&str, &str)] =
    &[("llama", "llama"), ("qwen2", "qwen2"), ("qwen3", "qwen3"), ("smollm3", "smollm3"), ("lfm2", "lfm2")];

/// Whether GGUF files of this `general.architecture` can be loaded.
pub fn supports(architecture: &str) -> bool {
    ARCHITECTURES.iter().any(|(g, _)| *g == architecture)
}

pub struct Loaded {
    pub config: TextConfig,
    pub weights: Weights,
    pub fingerprint: String,
    pub file: GgufFile,
}

/// MLX's reader (through mlx-rs) takes only paths named `*.gguf`; a file named otherwise (a blob
/// of Ollama's store) is read through a symbolic link that is, made in the temporary folder for
/// the load and removed after it: the file itself is neither copied nor touched.
fn open(path: &Path) -> Result<GgufFile> {
    let corrupt = |e: mlx_rs::io::GgufError| EngineError::CorruptWeights { path: path.into(), reason: e.to_string() };
    if path.extension().is_some_and(|e| e == "gguf") {
        return GgufFile::load(path).map_err(corrupt);
    }
    let link = GgufLink::new(path)?;
    GgufFile::load(&link.0).map_err(corrupt)
}

/// A `.gguf`-named link to a file, removed when dropped.
struct GgufLink(std::path::PathBuf);

impl GgufLink {
    fn new(target: &Path) -> Result<Self> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let target = target.canonicalize().map_err(|e| EngineError::io(target, e))?;
        let link = std::env::temp_dir().join(format!("confab-gguf-{}-{n}.gguf", std::process::id()));
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).map_err(|e| EngineError::io(&link, e))?;
        Ok(Self(link))
    }
}

impl Drop for GgufLink {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Reject what is not GGUF before handing the file to MLX's C loader.
fn check_magic(path: &Path) -> Result<()> {
    let mut head = [0u8; 8];
    let ok = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok();
    let version = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    if !ok || &head[..4] != super::gguf_header::MAGIC || !(2..=3).contains(&version) {
        return Err(EngineError::CorruptWeights { path: path.into(), reason: "not a GGUF v2/v3 file".into() });
    }
    Ok(())
}

pub fn load(path: &Path) -> Result<Loaded> {
    check_magic(path)?;
    let file = open(path)?;
    let meta = Meta { file: &file, path };
    let config = meta.config()?;
    let names = if meta.string("general.architecture").as_deref() == Some("lfm2") { &CONVOLUTION_HYBRID } else { &LLAMA };
    let mut tensors = HashMap::new();
    let mut fingerprint = Fingerprint::new();
    let keys = file.array_keys().map_err(|e| EngineError::CorruptWeights { path: path.into(), reason: e.to_string() })?;
    for key in keys {
        let array = file
            .get_array(&key)
            .map_err(|e| EngineError::CorruptWeights { path: path.into(), reason: e.to_string() })?
            .ok_or_else(|| EngineError::CorruptWeights { path: path.into(), reason: format!("tensor {key} unreadable") })?;
        fingerprint.add(key.as_bytes()).add(format!("{:?}{:?}", array.shape(), array.dtype()).as_bytes());
        tensors.insert(hf_name(&key, names), array);
    }
    let size = std::fs::metadata(path).map_err(|e| EngineError::io(path, e))?.len();
    fingerprint.add(&size.to_le_bytes()).add(format!("{config:?}").as_bytes()).add_file_samples(path)?;
    Ok(Loaded { weights: Weights::new(tensors, path, None), config, fingerprint: fingerprint.finish(), file })
}

/// How an architecture's Hugging Face checkpoints name what llama.cpp names one way.
struct Names {
    top: &'static [(&'static str, &'static str)],
    block: &'static [(&'static str, &'static str)],
}

/// Llama's names (and those of the architectures that share them).
const LLAMA: Names = Names {
    top: &[("token_embd", "model.embed_tokens"), ("output_norm", "model.norm"), ("output", "lm_head")],
    block: &[
        ("attn_norm", "input_layernorm"),
        ("ffn_norm", "post_attention_layernorm"),
        ("attn_q_norm", "self_attn.q_norm"),
        ("attn_k_norm", "self_attn.k_norm"),
        ("attn_q", "self_attn.q_proj"),
        ("attn_k", "self_attn.k_proj"),
        ("attn_v", "self_attn.v_proj"),
        ("attn_output", "self_attn.o_proj"),
        ("ffn_gate", "mlp.gate_proj"),
        ("ffn_up", "mlp.up_proj"),
        ("ffn_down", "mlp.down_proj"),
    ],
};

/// LFM2's: gated short convolutions, `operator_norm`, per-head `*_layernorm`, `feed_forward.w*`,
/// and the final norm as `token_embd_norm`.
const CONVOLUTION_HYBRID: Names = Names {
    top: &[("token_embd", "model.embed_tokens"), ("token_embd_norm", "model.embedding_norm"), ("output", "lm_head")],
    block: &[
        ("attn_norm", "operator_norm"),
        ("ffn_norm", "ffn_norm"),
        ("shortconv.conv", "conv.conv"),
        ("shortconv.in_proj", "conv.in_proj"),
        ("shortconv.out_proj", "conv.out_proj"),
        ("attn_q_norm", "self_attn.q_layernorm"),
        ("attn_k_norm", "self_attn.k_layernorm"),
        ("attn_q", "self_attn.q_proj"),
        ("attn_k", "self_attn.k_proj"),
        ("attn_v", "self_attn.v_proj"),
        ("attn_output", "self_attn.out_proj"),
        ("ffn_gate", "feed_forward.w1"),
        ("ffn_up", "feed_forward.w3"),
        ("ffn_down", "feed_forward.w2"),
    ],
};

/// llama.cpp's tensor names → Hugging Face's (`blk.3.attn_q.weight` → `model.layers.3.self_attn.q_proj.weight`).
fn hf_name(gguf: &str, names: &Names) -> String {
    let (stem, suffix) = gguf.rsplit_once('.').unwrap_or((gguf, ""));
    let renamed = if let Some(rest) = stem.strip_prefix("blk.") {
        let (layer, module) = rest.split_once('.').unwrap_or((rest, ""));
        names.block.iter().find(|(g, _)| *g == module).map(|(_, hf)| format!("model.layers.{layer}.{hf}"))
    } else {
        names.top.iter().find(|(g, _)| *g == stem).map(|(_, hf)| hf.to_string())
    };
    match renamed {
        Some(name) => format!("{name}.{suffix}"),
        None => gguf.to_string(),
    }
}

struct Meta<'a> {
    file: &'a GgufFile,
    path: &'a Path,
}

impl Meta<'_> {
    fn value(&self, key: &str) -> Option<GgufMetadataValue> {
        self.file.get_metadata(key).ok().flatten()
    }
    fn number(&self, key: &str) -> Option<f64> {
        match self.value(key)? {
            GgufMetadataValue::Array(a) if a.size() == 1 => a.try_item_cast::<f32>().ok().map(f64::from),
            _ => None,
        }
    }
    /// A number or a list of them (one per layer, say).
    fn numbers(&self, key: &str) -> Option<Vec<f64>> {
        match self.value(key)? {
            GgufMetadataValue::Array(a) => {
                let a = a.as_dtype(mlx_rs::Dtype::Float32).ok()?;
                a.eval().ok()?;
                Some(a.as_slice::<f32>().iter().map(|&v| f64::from(v)).collect())
            }
            _ => None,
        }
    }
    fn require(&self, key: &str) -> Result<usize> {
        self.number(key)
            .map(|v| v as usize)
            .ok_or_else(|| EngineError::ModelFormat { path: self.path.into(), reason: format!("GGUF metadata has no `{key}`") })
    }
    fn string(&self, key: &str) -> Option<String> {
        self.file.get_metadata_string(key).ok().flatten()
    }

    fn config(&self) -> Result<TextConfig> {
        let arch = self.string("general.architecture").ok_or_else(|| EngineError::ModelFormat {
            path: self.path.into(),
            reason: "GGUF metadata has no general.architecture".into(),
        })?;
        let Some(&(_, model_type)) = ARCHITECTURES.iter().find(|(g, _)| *g == arch) else {
            return Err(EngineError::UnknownArchitecture {
                path: self.path.into(),
                arch,
                supported: ARCHITECTURES.iter().map(|(g, _)| *g).collect::<Vec<_>>().join(", ") + " (GGUF)",
            });
        };
        let key = |k: &str| format!("{arch}.{k}");
        let hidden_size = self.require(&key("embedding_length"))?;
        let num_heads = self.require(&key("attention.head_count"))?;
        let num_layers = self.require(&key("block_count"))?;
        let vocab_size = match self.number(&key("vocab_size")) {
            Some(v) => v as usize,
            None => self.file.get_metadata_strings("tokenizer.ggml.tokens").ok().flatten().map_or(0, |t| t.len()),
        };
        let scaling = match (self.string(&key("rope.scaling.type")).as_deref(), self.number(&key("rope.scaling.factor"))) {
            (Some("linear"), Some(factor)) => RopeScaling::Linear { factor: factor as f32 },
            _ => RopeScaling::None,
        };
        let id = |k: &str| self.number(k).map(|v| v as u32);
        let tied = !self.file.array_keys().map(|k| k.iter().any(|n| n == "output.weight")).unwrap_or(false);
        // Hybrid models list KV heads per layer, 0 for a layer without attention (a gated
        // convolution: llama.cpp's `shortconv` layers).
        let kv_heads = self.numbers(&key("attention.head_count_kv")).unwrap_or_default();
        let (num_kv_heads, layer_kinds) = match kv_heads.len() {
            n if n > 1 && n == num_layers => (
                kv_heads.iter().fold(0.0, |a: f64, &b| a.max(b)) as usize,
                kv_heads.iter().map(|&h| if h > 0.0 { LayerKind::Full } else { LayerKind::Convolution }).collect(),
            ),
            1 => (kv_heads[0] as usize, vec![LayerKind::Full; num_layers]),
            0 => (num_heads, vec![LayerKind::Full; num_layers]),
            n => {
                return Err(EngineError::ModelFormat {
                    path: self.path.into(),
                    reason: format!("GGUF metadata lists KV heads for {n} layers but block_count is {num_layers}"),
                })
            }
        };
        Ok(TextConfig {
            arch: model_type.to_string(),
            hidden_size,
            intermediate_size: self.require(&key("feed_forward_length"))?,
            num_layers,
            num_heads,
            num_kv_heads,
            head_dim: self.number(&key("attention.key_length")).map_or(hidden_size / num_heads, |v| v as usize),
            vocab_size,
            rms_norm_eps: self.number(&key("attention.layer_norm_rms_epsilon")).unwrap_or(1e-6) as f32,
            max_position: self.number(&key("context_length")).unwrap_or(4096.0) as usize,
            tie_word_embeddings: tied,
            attention_bias: model_type == "qwen2",
            mlp_bias: false,
            activation: Activation::Silu,
            rope: RopeConfig { theta: self.number(&key("rope.freq_base")).unwrap_or(10_000.0) as f32, scaling },
            rope_local: None,
            // llama.cpp's converter permutes llama's (and SmolLM3's, a llama subclass there) Q/K
            // rows for interleaved RoPE; using the interleaved (traditional) rotation on those
            // rows is the same computation.
            rope_traditional: arch == "llama" || arch == "smollm3",
            layer_kinds,
            sliding_window: None,
            query_pre_attn_scalar: None,
            final_logit_softcap: None,
            attn_logit_softcap: None,
            bos_token_id: id("tokenizer.ggml.bos_token_id"),
            eos_token_ids: id("tokenizer.ggml.eos_token_id").into_iter().chain(id("tokenizer.ggml.eot_token_id")).collect(),
            dtype: None,
            quantization: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{CONVOLUTION_HYBRID, LLAMA};

    fn hf_name(gguf: &str) -> String {
        super::hf_name(gguf, &LLAMA)
    }

    #[test]
    fn renames_llama_cpp_tensors() {
        assert_eq!(hf_name("blk.12.attn_q.scales"), "model.layers.12.self_attn.q_proj.scales");
        assert_eq!(hf_name("blk.0.attn_q_norm.weight"), "model.layers.0.self_attn.q_norm.weight");
        assert_eq!(hf_name("blk.0.ffn_norm.weight"), "model.layers.0.post_attention_layernorm.weight");
        assert_eq!(hf_name("token_embd.biases"), "model.embed_tokens.biases");
        assert_eq!(hf_name("output.weight"), "lm_head.weight");
        assert_eq!(hf_name("rope_freqs.weight"), "rope_freqs.weight");
    }

    #[test]
    fn renames_llama_cpp_convolution_hybrid_tensors() {
        let hf = |g: &str| super::hf_name(g, &CONVOLUTION_HYBRID);
        assert_eq!(hf("blk.2.shortconv.in_proj.weight"), "model.layers.2.conv.in_proj.weight");
        assert_eq!(hf("blk.2.shortconv.conv.weight"), "model.layers.2.conv.conv.weight");
        assert_eq!(hf("blk.1.attn_output.weight"), "model.layers.1.self_attn.out_proj.weight");
        assert_eq!(hf("blk.1.attn_k_norm.weight"), "model.layers.1.self_attn.k_layernorm.weight");
        assert_eq!(hf("blk.0.attn_norm.weight"), "model.layers.0.operator_norm.weight");
        assert_eq!(hf("blk.0.ffn_up.weight"), "model.layers.0.feed_forward.w3.weight");
        assert_eq!(hf("token_embd_norm.weight"), "model.embedding_norm.weight");
    }
}
