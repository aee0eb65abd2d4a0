//! What the GGUF readers share: the metadata's typed look-ups and llama.cpp's tensor names
//! mapped to Hugging Face's.

use std::path::Path;

use mlx_rs::io::{GgufFile, GgufMetadataValue};

use crate::error::{EngineError, Result};

/// How an architecture's Hugging Face checkpoints name what llama.cpp names one way.
pub(super) struct Names {
    pub top: &'static [(&'static str, &'static str)],
    pub block: &'static [(&'static str, &'static str)],
}

/// Llama's names (and those of the architectures that share them).
pub(super) const LLAMA: Names = Names {
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

/// llama.cpp's tensor names → Hugging Face's (`blk.3.attn_q.weight` → `model.layers.3.self_attn.q_proj.weight`).
pub(super) fn hf_name(gguf: &str, names: &Names) -> String {
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

pub(super) struct Meta<'a> {
    pub(super) file: &'a GgufFile,
    pub(super) path: &'a Path,
    /// The header's tensors (the file MLX read may hold the metadata alone).
    pub(super) tensors: &'a [super::gguf_header::TensorInfo],
}

impl Meta<'_> {
    /// `{arch}.vocab_size`, else the length of the token list.
    pub(super) fn vocab_size(&self, arch: &str) -> usize {
        match self.number(&format!("{arch}.vocab_size")) {
            Some(v) => v as usize,
            None => self.file.get_metadata_strings("tokenizer.ggml.tokens").ok().flatten().map_or(0, |t| t.len()),
        }
    }
    pub(super) fn has_tensor(&self, name: &str) -> bool {
        self.tensors.iter().any(|t| t.name == name)
    }
    fn value(&self, key: &str) -> Option<GgufMetadataValue> {
        self.file.get_metadata(key).ok().flatten()
    }
    pub(super) fn number(&self, key: &str) -> Option<f64> {
        match self.value(key)? {
            GgufMetadataValue::Array(a) if a.size() == 1 => a.try_item_cast::<f32>().ok().map(f64::from),
            _ => None,
        }
    }
    /// A number or a list of them (one per layer, say).
    pub(super) fn numbers(&self, key: &str) -> Option<Vec<f64>> {
        match self.value(key)? {
            GgufMetadataValue::Array(a) => {
                let a = a.as_dtype(mlx_rs::Dtype::Float32).ok()?;
                a.eval().ok()?;
                Some(a.as_slice::<f32>().iter().map(|&v| f64::from(v)).collect())
            }
            _ => None,
        }
    }
    pub(super) fn require(&self, key: &str) -> Result<usize> {
        self.number(key)
            .map(|v| v as usize)
            .ok_or_else(|| EngineError::ModelFormat { path: self.path.into(), reason: format!("GGUF metadata has no `{key}`") })
    }
    pub(super) fn string(&self, key: &str) -> Option<String> {
        self.file.get_metadata_string(key).ok().flatten()
    }
}
