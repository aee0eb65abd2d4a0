//! A checkpoint's tensors by their Hugging Face names, taken out one layer at a time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mlx_rs::Array;

use crate::error::{EngineError, Result};
use crate::model::config::Quantization;
use crate::model::layers::Linear;

pub struct Weights {
    tensors: HashMap<String, Array>,
    source: PathBuf,
    quantization: Option<Quantization>,
}

impl Weights {
    pub fn new(tensors: HashMap<String, Array>, source: &Path, quantization: Option<Quantization>) -> Self {
        Self { tensors, source: source.to_path_buf(), quantization }
    }

    pub fn contains(&self, name: &str) -> bool {
        self.tensors.contains_key(name)
    }

    pub fn take(&mut self, name: &str) -> Result<Array> {
        self.tensors
            .remove(name)
            .ok_or_else(|| EngineError::CorruptWeights { path: self.source.clone(), reason: format!("tensor `{name}` is missing") })
    }

    pub fn take_optional(&mut self, name: &str) -> Option<Array> {
        self.tensors.remove(name)
    }

    /// The linear layer at `prefix` (`prefix.weight`, optional `prefix.bias`), quantized when
    /// the checkpoint stores `prefix.scales` beside it.
    pub fn linear(&mut self, prefix: &str) -> Result<Linear> {
        let weight = self.take(&format!("{prefix}.weight"))?;
        let bias = self.take_optional(&format!("{prefix}.bias"));
        let Some(scales) = self.take_optional(&format!("{prefix}.scales")) else {
            return Ok(Linear::Dense { weight, bias });
        };
        let biases = self.take_optional(&format!("{prefix}.biases"));
        let (group_size, bits) = self.quantization_of(prefix, &weight, &scales)?;
        Ok(Linear::Quantized { weight, scales, biases, bias, group_size, bits })
    }

    fn quantization_of(&self, prefix: &str, weight: &Array, scales: &Array) -> Result<(i32, i32)> {
        // The stored shapes fix bits × group_size: each row packs `in × bits / 32` words into
        // `in / group_size` groups. The config says which split; GGUF's is always groups of 32.
        let words = weight.dim(-1);
        let groups = scales.dim(-1);
        let (group_size, bits) = match &self.quantization {
            Some(q) => q.for_layer(prefix).unwrap_or((q.group_size, q.bits)),
            None => (32, 32 * words / (groups * 32)),
        };
        if words * 32 / bits != groups * group_size {
            return Err(EngineError::CorruptWeights {
                path: self.source.clone(),
                reason: format!("`{prefix}` shapes do not fit {bits}-bit quantization in groups of {group_size}"),
            });
        }
        Ok((group_size, bits))
    }

    /// The checkpoint these tensors came from, for error messages.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// Names left over once a model has taken what it needs.
    pub fn remaining(&self) -> impl Iterator<Item = &String> {
        self.tensors.keys()
    }

    /// Drops the tensors under any of `prefixes`: parts of the checkpoint the text model does
    /// not read (media towers, which load on their own; multi-token-prediction heads).
    pub fn drop_prefixed(&mut self, prefixes: &[&str]) {
        self.tensors.retain(|name, _| !prefixes.iter().any(|p| name.starts_with(p)));
    }

    /// Moves every tensor under `from` to the same name under `to` (a checkpoint that nests a
    /// stack another family reads under a prefix of its own); where `to` already has that
    /// name, the tensor under `from` is dropped (a tied copy).
    pub fn rename_prefixed(&mut self, from: &str, to: &str) {
        let names: Vec<String> = self.tensors.keys().filter(|n| n.starts_with(from)).cloned().collect();
        for name in names {
            let tensor = self.tensors.remove(&name).expect("listed above");
            self.tensors.entry(format!("{to}{}", &name[from.len()..])).or_insert(tensor);
        }
    }

    /// After a build: a tensor no layer took means the checkpoint and its config.json disagree
    /// (a layer the config does not describe, a misnamed tensor), so it is an error naming them.
    pub fn expect_all_taken(&self, model_type: &str) -> Result<()> {
        // Precomputed RoPE frequencies some checkpoints carry are buffers, not weights.
        let mut left: Vec<&String> = self.tensors.keys().filter(|n| !n.ends_with("rotary_emb.inv_freq")).collect();
        if left.is_empty() {
            return Ok(());
        }
        left.sort();
        let shown: Vec<String> = left.iter().take(5).map(|n| format!("`{n}`")).collect();
        let more = if left.len() > 5 { format!(" and {} more", left.len() - 5) } else { String::new() };
        Err(EngineError::CorruptWeights {
            path: self.source.clone(),
            reason: format!("tensor {}{more} is not part of a {model_type} model as its config describes it", shown.join(", ")),
        })
    }
}
