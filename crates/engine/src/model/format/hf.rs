//! Hugging Face folders: config.json plus one or sharded *.safetensors (bf16, fp16, fp32, or
//! MLX-quantized as mlx-community publishes them).

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use mlx_rs::Array;

use crate::error::{EngineError, Result};
use crate::model::config::{ConfigDefaults, Quantization, TextConfig};
use crate::model::format::Fingerprint;
use crate::model::weights::Weights;

pub fn read_config(dir: &Path, defaults_of: fn(&str) -> ConfigDefaults) -> Result<(serde_json::Value, TextConfig)> {
    let path = dir.join("config.json");
    let text = std::fs::read_to_string(&path).map_err(|e| EngineError::io(&path, e))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| EngineError::ModelFormat { path: path.clone(), reason: format!("config.json is not valid JSON ({e})") })?;
    let config = TextConfig::from_hf_json(&json, &path, defaults_of)?;
    Ok((json, config))
}

/// The safetensors files of the checkpoint: those the index names, else every one in the folder.
pub fn shard_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let index = dir.join("model.safetensors.index.json");
    let files: BTreeSet<PathBuf> = if index.is_file() {
        let text = std::fs::read_to_string(&index).map_err(|e| EngineError::io(&index, e))?;
        let json: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| EngineError::CorruptWeights { path: index.clone(), reason: format!("invalid index JSON ({e})") })?;
        let map = json
            .get("weight_map")
            .and_then(|m| m.as_object())
            .ok_or_else(|| EngineError::CorruptWeights { path: index.clone(), reason: "the index has no weight_map".into() })?;
        map.values().filter_map(|f| f.as_str()).map(|f| dir.join(f)).collect()
    } else {
        std::fs::read_dir(dir)
            .map_err(|e| EngineError::io(dir, e))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "safetensors"))
            .collect()
    };
    if files.is_empty() {
        return Err(EngineError::ModelFormat { path: dir.into(), reason: "the folder has no *.safetensors weights".into() });
    }
    Ok(files.into_iter().collect())
}

/// Checks a safetensors header against the file before MLX maps it: a truncated or garbled
/// file must be an error, not a crash. Returns the header bytes (for the fingerprint).
pub fn validate_safetensors(path: &Path) -> Result<Vec<u8>> {
    let corrupt = |reason: String| EngineError::CorruptWeights { path: path.into(), reason };
    let mut file = File::open(path).map_err(|e| EngineError::io(path, e))?;
    let size = file.metadata().map_err(|e| EngineError::io(path, e))?.len();
    let mut len = [0u8; 8];
    file.read_exact(&mut len).map_err(|_| corrupt("shorter than a safetensors header".into()))?;
    let header_len = u64::from_le_bytes(len);
    if header_len > 100 << 20 || 8 + header_len > size {
        return Err(corrupt(format!("header length {header_len} does not fit a {size}-byte file")));
    }
    let mut header = vec![0u8; header_len as usize];
    file.read_exact(&mut header).map_err(|e| corrupt(e.to_string()))?;
    let json: serde_json::Value = serde_json::from_slice(&header).map_err(|e| corrupt(format!("header is not JSON ({e})")))?;
    let data_len = size - 8 - header_len;
    for (name, info) in json.as_object().into_iter().flatten().filter(|(k, _)| *k != "__metadata__") {
        let end = info.get("data_offsets").and_then(|o| o.get(1)).and_then(|e| e.as_u64());
        match end {
            Some(end) if end <= data_len => {}
            _ => return Err(corrupt(format!("tensor `{name}` lies past the end of the file (truncated download?)"))),
        }
    }
    Ok(header)
}

pub struct Loaded {
    pub config: TextConfig,
    /// The whole config.json, for the family's own keys.
    pub json: serde_json::Value,
    pub weights: Weights,
    pub fingerprint: String,
}

/// `defaults_of`: what each model type means by a config key it leaves out.
pub fn load(dir: &Path, defaults_of: fn(&str) -> ConfigDefaults) -> Result<Loaded> {
    let (json, config) = read_config(dir, defaults_of)?;
    let mut fingerprint = Fingerprint::new();
    fingerprint.add(json.to_string().as_bytes());
    let mut tensors: HashMap<String, Array> = HashMap::new();
    for file in shard_files(dir)? {
        let header = validate_safetensors(&file)?;
        fingerprint.add(&header).add_file_samples(&file)?;
        let loaded =
            Array::load_safetensors(&file).map_err(|e| EngineError::CorruptWeights { path: file.clone(), reason: e.to_string() })?;
        tensors.extend(loaded);
    }
    let tensors = tensors.into_iter().map(|(name, a)| (text_model_name(name), a)).collect();
    // Per-layer quantization settings are keyed by the checkpoint's module paths; rename them
    // as the tensors are.
    let quantization = config
        .quantization
        .clone()
        .map(|q| Quantization { overrides: q.overrides.into_iter().map(|(k, v)| (text_model_name(k), v)).collect(), ..q });
    let weights = Weights::new(tensors, dir, quantization);
    Ok(Loaded { config, json, weights, fingerprint: fingerprint.finish() })
}

/// Multimodal checkpoints nest the text model: `language_model.model.…` (transformers 4 and
/// mlx-community) or `model.language_model.…` (transformers 5). The text model's own names are
/// `model.…` and `lm_head.…`. A base model saved alone (`Qwen3Model`, `Gemma3TextModel`: what
/// sentence-transformers' embedding checkpoints ship) names them without the `model.`.
fn text_model_name(name: String) -> String {
    const BASE_MODEL: &[&str] = &["embed_tokens.", "layers.", "norm."];
    if BASE_MODEL.iter().any(|p| name.starts_with(p)) {
        return format!("model.{name}");
    }
    if let Some(rest) = name.strip_prefix("language_model.") {
        return rest.to_string();
    }
    if let Some(rest) = name.strip_prefix("model.language_model.") {
        return format!("model.{rest}");
    }
    name
}
