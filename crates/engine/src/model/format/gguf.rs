//! GGUF files through MLX's own loader: hyper-parameters from the metadata, tensors renamed to
//! Hugging Face's names. Quantized blocks our kernels read (Q4_0, Q4_1, Q8_0) stay packed (as
//! MLX's affine 4- and 8-bit groups of 32); the others MLX reads (gguflib's Q4_K, Q6_K, Q2_K)
//! are widened once at load, to float16. MXFP4, which MLX's loader leaves out, is read from its
//! blocks by our own reader ([`super::gguf_blocks`]: a mixture's experts stay packed in MLX's
//! `mxfp4` mode); a file with a type MLX's loader fails on (Q5_0, Q5_1, Q3_K, Q5_K) is read by it
//! whole, MLX reading a copy of the metadata alone (for the vocabulary and template): Q4_0, Q4_1
//! and Q8_0 packed as MLX packs them, the others widened to float16. The types neither reads (the
//! IQ types, TQ1_0/TQ2_0) are refused by name before MLX sees the file ([`unreadable_types`]). Architectures whose families read keys of their own (Gemma 3, Qwen3.5,
//! Qwen3-Next, Mistral 3, gpt-oss) go through [`super::gguf_arch`], which writes their config.json
//! from the metadata and undoes what llama.cpp's converter changed in the tensors.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use mlx_rs::io::GgufFile;

use super::gguf_header;
use super::gguf_meta::{hf_name, Meta, Names, LLAMA};

use crate::error::{EngineError, Result};
use crate::model::config::{Activation, ConfigDefaults, LayerKind, RopeConfig, RopeScaling, TextConfig};
use crate::model::format::Fingerprint;
use crate::model::weights::Weights;

/// Architectures whose GGUF tensors we can rename, and their Hugging Face model_type.
const ARCHITECTURES: &[(&str, &str)] =
    &[("llama", "llama"), ("qwen2", "qwen2"), ("qwen3", "qwen3"), ("smollm3", "smollm3"), ("lfm2", "lfm2")];

/// Whether GGUF files of this `general.architecture` can be loaded.
pub fn supports(architecture: &str) -> bool {
    ARCHITECTURES.iter().any(|(g, _)| *g == architecture) || super::gguf_arch::converted(architecture).is_some()
}

/// Every loadable `general.architecture`, for errors.
fn supported() -> String {
    let all = ARCHITECTURES.iter().map(|(g, _)| *g).chain(super::gguf_arch::CONVERTED.iter().map(|(g, _, _)| *g));
    all.collect::<Vec<_>>().join(", ") + " (GGUF)"
}

/// The ggml tensor types MLX's loader reads: the floats (BF16 widened to float16), Q4_0, Q4_1
/// and Q8_0 packed, and the K-quants gguflib widens (Q2_K, Q4_K, Q6_K). It fails on the others
/// with "gguf_tensor_to_f16 failed", or, for MXFP4, leaves the tensor out without a word.
const READABLE_TYPES: &[u32] = &[0, 1, 30, 2, 3, 8, 10, 12, 14];

/// MXFP4: MLX's loader leaves it out (our reader reads it) rather than failing on it.
const MLX_SKIPS: &[u32] = &[39];

/// Whether MLX's loader or [`super::gguf_blocks`] reads tensors of this ggml type.
fn readable(ggml_type: u32) -> bool {
    READABLE_TYPES.contains(&ggml_type) || super::gguf_blocks::TYPES.contains(&ggml_type)
}

/// Whether MLX's loader reads this file's tensors (but those it leaves out), rather than failing.
fn mlx_reads(header: &gguf_header::Header) -> bool {
    header.tensor_types.iter().all(|t| READABLE_TYPES.contains(t) || MLX_SKIPS.contains(t))
}

/// The types among `tensor_types` (`gguf_header::Header::tensor_types`) this build cannot read,
/// by name; empty when it reads them all.
pub fn unreadable_types(tensor_types: &std::collections::BTreeSet<u32>) -> Vec<&'static str> {
    tensor_types.iter().filter(|&&t| !readable(t)).map(|&t| gguf_header::ggml_type_name(t)).collect()
}

/// The bytes a GGUF's tensors take once loaded (`gguf_blocks`' rule, which MLX's loader follows
/// too): more than on disk where blocks are widened.
pub fn loaded_weight_bytes(header: &gguf_header::Header) -> u64 {
    header.tensors.iter().map(super::gguf_blocks::loaded_bytes).fold(0, u64::saturating_add)
}

/// The header, or an error naming the tensor types this build cannot read.
fn checked_header(path: &Path) -> Result<gguf_header::Header> {
    let header = gguf_header::read_header(path).map_err(|e| EngineError::CorruptWeights { path: path.into(), reason: e.to_string() })?;
    let unreadable = unreadable_types(&header.tensor_types);
    if unreadable.is_empty() {
        return Ok(header);
    }
    let readable: Vec<_> = READABLE_TYPES.iter().chain(super::gguf_blocks::TYPES).map(|&t| gguf_header::ggml_type_name(t)).collect();
    Err(EngineError::UnsupportedQuantization { path: path.into(), types: unreadable.join(", "), readable: readable.join(", ") })
}

pub struct Loaded {
    pub config: TextConfig,
    /// The config.json the checkpoint's family reads, for the architectures that need one.
    pub json: Option<serde_json::Value>,
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

/// The metadata of the GGUF at `path` alone (its vocabulary, template and hyper-parameters),
/// read without its tensors.
pub fn metadata_only(path: &Path) -> Result<GgufFile> {
    check_magic(path)?;
    let header = gguf_header::read_header(path).map_err(|e| EngineError::io(path, e))?;
    open_metadata(path, &header)
}

/// A file of `path`'s metadata alone (no tensors), for MLX's reader when it cannot read the
/// tensors: the vocabulary, template and hyper-parameters come from it. Removed once read.
fn open_metadata(path: &Path, header: &gguf_header::Header) -> Result<GgufFile> {
    use std::io::{Seek, SeekFrom};
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let copy = GgufLink(std::env::temp_dir().join(format!("confab-gguf-metadata-{}-{n}.gguf", std::process::id())));
    let range = &header.metadata_bytes;
    let mut metadata = vec![0u8; (range.end - range.start) as usize];
    let mut file = std::fs::File::open(path).map_err(|e| EngineError::io(path, e))?;
    file.seek(SeekFrom::Start(range.start)).and_then(|_| file.read_exact(&mut metadata)).map_err(|e| EngineError::io(path, e))?;
    let mut bytes = gguf_header::MAGIC.to_vec();
    bytes.extend(3u32.to_le_bytes());
    bytes.extend(0u64.to_le_bytes());
    bytes.extend(header.metadata_count.to_le_bytes());
    bytes.extend(metadata);
    std::fs::write(&copy.0, bytes).map_err(|e| EngineError::io(&copy.0, e))?;
    GgufFile::load(&copy.0).map_err(|e| EngineError::CorruptWeights { path: path.into(), reason: e.to_string() })
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

/// `defaults_of`: what each model type means by a config key it leaves out (for the architectures
/// read through a config.json).
pub fn load(path: &Path, defaults_of: fn(&str) -> ConfigDefaults) -> Result<Loaded> {
    load_as(path, defaults_of, false)
}

/// `load`, the whole file through our own block reader if `own_reader` (else only where MLX's
/// loader cannot read it).
fn load_as(path: &Path, defaults_of: fn(&str) -> ConfigDefaults, own_reader: bool) -> Result<Loaded> {
    check_magic(path)?;
    let header = checked_header(path)?;
    let whole = own_reader || !mlx_reads(&header);
    let file = if whole { open_metadata(path, &header)? } else { open(path)? };
    let meta = Meta { file: &file, path, tensors: &header.tensors };
    let arch = meta.string("general.architecture").unwrap_or_default();
    let converted = super::gguf_arch::converted(&arch);
    let (config, json) = match converted {
        Some((model_type, c)) => {
            let json = (c.config)(&meta, model_type)?;
            (TextConfig::from_hf_json(&json, path, defaults_of)?, Some(json))
        }
        None => (meta.config()?, None),
    };
    let names = match (converted, arch.as_str()) {
        (Some((_, c)), _) => c.names,
        (None, "lfm2") => &CONVOLUTION_HYBRID,
        _ => &LLAMA,
    };
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
    // What MLX left out, or (`whole`) every tensor.
    for info in header.tensors.iter().filter(|t| whole || !READABLE_TYPES.contains(&t.ggml_type)) {
        let name = hf_name(&info.name, names);
        for (part, array) in super::gguf_blocks::read(path, info)? {
            fingerprint.add(info.name.as_bytes()).add(format!("{part}{:?}{:?}", array.shape(), array.dtype()).as_bytes());
            // A packed weight's scales (and biases) beside it, as MLX's loader names them.
            let key = match name.strip_suffix(".weight") {
                Some(stem) if part != "weight" => format!("{stem}.{part}"),
                _ => name.clone(),
            };
            tensors.insert(key, array);
        }
    }
    if let (Some((_, c)), Some(json)) = (converted, &json) {
        (c.restore)(&mut tensors, json, path)?;
    }
    let size = std::fs::metadata(path).map_err(|e| EngineError::io(path, e))?.len();
    fingerprint.add(&size.to_le_bytes()).add(format!("{config:?}").as_bytes()).add_file_samples(path)?;
    Ok(Loaded { weights: Weights::new(tensors, path, None), config, json, fingerprint: fingerprint.finish(), file })
}

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

impl Meta<'_> {
    fn config(&self) -> Result<TextConfig> {
        let arch = self.string("general.architecture").ok_or_else(|| EngineError::ModelFormat {
            path: self.path.into(),
            reason: "GGUF metadata has no general.architecture".into(),
        })?;
        let Some(&(_, model_type)) = ARCHITECTURES.iter().find(|(g, _)| *g == arch) else {
            return Err(EngineError::UnknownArchitecture { path: self.path.into(), arch, supported: supported() });
        };
        let key = |k: &str| format!("{arch}.{k}");
        let hidden_size = self.require(&key("embedding_length"))?;
        let num_heads = self.require(&key("attention.head_count"))?;
        let num_layers = self.require(&key("block_count"))?;
        let vocab_size = self.vocab_size(&arch);
        let scaling = match (self.string(&key("rope.scaling.type")).as_deref(), self.number(&key("rope.scaling.factor"))) {
            (Some("linear"), Some(factor)) => RopeScaling::Linear { factor: factor as f32 },
            _ => RopeScaling::None,
        };
        let id = |k: &str| self.number(k).map(|v| v as u32);
        let tied = !self.has_tensor("output.weight");
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
            query_position_scale: None,
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

    /// Our own block reader reads what MLX's loader reads, bit for bit and under the same names
    /// (F32 with biases and sinks, Q8_0 and Q4_0 packed, MXFP4 experts, per-layer embeddings, short
    /// convolutions): a whole file goes through it when it holds a type MLX's loader fails on.
    #[test]
    fn own_reader_reads_as_mlx_does() {
        let tiny = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny");
        for file in [
            "gpt_oss_gguf/gpt_oss-f32.gguf",
            "gpt_oss_gguf/gpt_oss_mxfp4-mxfp4.gguf",
            "ministral3_gguf/ministral3-q8_0.gguf",
            "ministral3_gguf/ministral3-q4_0.gguf",
            "qwen3_5_moe_gguf/qwen3_5_moe-q4_0.gguf",
            "gemma4_gguf/gemma4-q8_0.gguf",
            "lfm2_gguf/lfm2.gguf",
            "smollm3_gguf/smollm3-f16.gguf",
            "gemma3_gguf/gemma3-q4_0.gguf",
        ] {
            let path = tiny.join(file);
            let defaults = crate::model::registry::defaults;
            let (mlx, own) = (super::load_as(&path, defaults, false).unwrap(), super::load_as(&path, defaults, true).unwrap());
            assert_eq!(format!("{:?}", mlx.config), format!("{:?}", own.config), "{file}");
            let mut names: Vec<String> = mlx.weights.remaining().cloned().collect();
            names.sort();
            let mut own_names: Vec<String> = own.weights.remaining().cloned().collect();
            own_names.sort();
            assert_eq!(names, own_names, "{file}");
            let (mut mlx, mut own) = (mlx.weights, own.weights);
            for name in names {
                let (a, b) = (mlx.take(&name).unwrap(), own.take(&name).unwrap());
                assert_eq!((a.shape(), a.dtype()), (b.shape(), b.dtype()), "{file}: {name}");
                let same = mlx_rs::ops::array_eq(&a, &b, true).unwrap();
                same.eval().unwrap();
                assert!(same.item_exact::<bool>(), "{file}: {name} differs");
            }
        }
    }

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
