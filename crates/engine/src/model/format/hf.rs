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
/// file must be an error, not a crash. MLX's reader takes each tensor's shape and offset on
/// trust, so a tensor whose bytes do not match its shape and dtype (a 100-byte file that claims
/// a terabyte tensor) is refused here. Returns the header bytes (for the fingerprint).
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
    let tensors = json.as_object().ok_or_else(|| corrupt("the header is not a JSON object".into()))?;
    let data_len = size - 8 - header_len;
    for (name, info) in tensors.iter().filter(|(k, _)| *k != "__metadata__") {
        check_tensor_entry(info, data_len).map_err(|why| corrupt(format!("tensor `{name}`: {why}")))?;
    }
    Ok(header)
}

/// The bytes of one element of each safetensors dtype MLX reads.
const SAFETENSORS_DTYPES: &[(&str, u64)] = &[
    ("BOOL", 1),
    ("U8", 1),
    ("I8", 1),
    ("F8_E4M3", 1),
    ("F8_E5M2", 1),
    ("U16", 2),
    ("I16", 2),
    ("F16", 2),
    ("BF16", 2),
    ("U32", 4),
    ("I32", 4),
    ("F32", 4),
    ("U64", 8),
    ("I64", 8),
    ("F64", 8),
    ("C64", 8),
];

/// One header entry, `{"dtype", "shape", "data_offsets": [start, end]}`: its bytes lie in the
/// file's `data_len` bytes of data and are exactly what its shape and dtype take.
fn check_tensor_entry(info: &serde_json::Value, data_len: u64) -> std::result::Result<(), String> {
    let offsets = info.get("data_offsets").and_then(|o| o.as_array()).map(|o| o.iter().map(|v| v.as_u64()).collect::<Vec<_>>());
    let (start, end) = match offsets.as_deref() {
        Some(&[Some(start), Some(end)]) if start <= end && end <= data_len => (start, end),
        _ => return Err("it lies past the end of the file (truncated download?)".into()),
    };
    let dtype = info.get("dtype").and_then(|d| d.as_str()).ok_or("it has no dtype")?;
    let element_bytes = SAFETENSORS_DTYPES
        .iter()
        .find(|(name, _)| *name == dtype)
        .map(|&(_, bytes)| bytes)
        .ok_or_else(|| format!("its dtype `{dtype}` is not one this build reads"))?;
    let shape = info.get("shape").and_then(|s| s.as_array()).ok_or("it has no shape")?;
    let shown = &info["shape"];
    let mut bytes = Some(element_bytes);
    for dim in shape {
        // MLX's dimensions are 32-bit.
        let dim = dim.as_u64().filter(|&d| d <= i32::MAX as u64).ok_or_else(|| format!("its shape {shown} is not one MLX holds"))?;
        bytes = bytes.and_then(|b| b.checked_mul(dim));
    }
    if bytes != Some(end - start) {
        return Err(format!("its shape {shown} of {dtype} does not take the {} bytes it has", end - start));
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::validate_safetensors;

    fn safetensors(header: &str, data_len: usize) -> Vec<u8> {
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend(header.as_bytes());
        bytes.extend(std::iter::repeat_n(0u8, data_len));
        bytes
    }

    fn check(bytes: &[u8]) -> Result<Vec<u8>, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.safetensors");
        std::fs::write(&path, bytes).unwrap();
        validate_safetensors(&path).map_err(|e| e.to_string())
    }

    /// MLX's reader takes a tensor's shape on trust: a tiny file whose header claims a huge
    /// tensor (found by the safetensors_header fuzz target) must not reach it.
    #[test]
    fn a_header_whose_shapes_do_not_match_the_bytes_is_refused() {
        let good = r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"b":{"dtype":"BF16","shape":[],"data_offsets":[24,26]}}"#;
        assert!(check(&safetensors(good, 26)).is_ok());
        for (header, why) in [
            (r#"{"a":{"dtype":"F32","shape":[1000000,1000000],"data_offsets":[0,24]}}"#, "does not take"),
            (r#"{"a":{"dtype":"F32","shape":[4294967296,0],"data_offsets":[0,0]}}"#, "not one MLX holds"),
            (r#"{"a":{"dtype":"F32","shape":[2,3],"data_offsets":[24,0]}}"#, "past the end"),
            (r#"{"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,48]}}"#, "past the end"),
            (r#"{"a":{"dtype":"Q4","shape":[2,3],"data_offsets":[0,24]}}"#, "dtype `Q4`"),
            (r#"{"a":{"dtype":"F32","shape":"big","data_offsets":[0,24]}}"#, "no shape"),
            (r#"[1, 2]"#, "not a JSON object"),
        ] {
            let error = check(&safetensors(header, 26)).unwrap_err();
            assert!(error.contains(why), "{header}: {error}");
        }
    }
}
