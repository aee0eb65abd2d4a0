//! config.json of the three model types, as transformers 5.24 reads them:
//!
//! - `qwen3_5` / `qwen3_5_moe` (vision-language checkpoints): the text model's keys under
//!   `text_config` (`model_type` `qwen3_5_text` / `qwen3_5_moe_text`, which is also the top-level
//!   type of a text-only `Qwen3_5ForCausalLM` folder), a `vision_config` beside it;
//! - `qwen3_next`: one flat config, usually in transformers 4 keys (`rope_theta` and
//!   `partial_rotary_factor` at the top level, no `layer_types`).
//!
//! The shared [`TextConfig`] has already been read from the same file; [`Qwen35Args`] adds what
//! only this family has, with transformers' defaults, and checks it.

use serde::Deserialize;
use serde_json::Value;

use crate::model::config::TextConfig;

/// Which of the family's model types a checkpoint is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// `qwen3_5`: a dense MLP in every layer.
    Dense,
    /// `qwen3_5_moe`: routed experts plus a shared expert in every layer.
    Moe,
    /// `qwen3_next`: experts where `decoder_sparse_step` and `mlp_only_layers` say, dense MLPs elsewhere.
    Next,
}

impl Variant {
    pub fn of(model_type: &str) -> Option<Self> {
        match model_type {
            "qwen3_5" | "qwen3_5_text" => Some(Self::Dense),
            "qwen3_5_moe" | "qwen3_5_moe_text" => Some(Self::Moe),
            "qwen3_next" => Some(Self::Next),
            _ => None,
        }
    }
}

/// What a layer mixes positions with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mixer {
    /// `linear_attention`: Gated DeltaNet.
    Linear,
    /// `full_attention`: gated softmax attention.
    Full,
}

/// The family's text keys (the `text_config` object, or the whole file for `qwen3_next`), with
/// transformers' defaults.
#[derive(Debug, Clone, Deserialize)]
pub struct TextKeys {
    #[serde(default = "defaults::head_dim")]
    pub head_dim: usize,
    #[serde(default = "defaults::conv_kernel")]
    pub linear_conv_kernel_dim: usize,
    #[serde(default = "defaults::head_128")]
    pub linear_key_head_dim: usize,
    #[serde(default = "defaults::head_128")]
    pub linear_value_head_dim: usize,
    #[serde(default = "defaults::key_heads")]
    pub linear_num_key_heads: usize,
    #[serde(default = "defaults::value_heads")]
    pub linear_num_value_heads: usize,
    pub layer_types: Option<Vec<String>>,
    #[serde(default = "defaults::interval")]
    pub full_attention_interval: usize,
    pub intermediate_size: Option<usize>,
    #[serde(default)]
    pub num_experts: usize,
    #[serde(default)]
    pub num_experts_per_tok: usize,
    #[serde(default)]
    pub moe_intermediate_size: usize,
    #[serde(default)]
    pub shared_expert_intermediate_size: usize,
    /// Qwen3-Next only (Qwen3.5-MoE always renormalises).
    #[serde(default = "defaults::yes")]
    pub norm_topk_prob: bool,
    #[serde(default = "defaults::one")]
    pub decoder_sparse_step: usize,
    #[serde(default)]
    pub mlp_only_layers: Vec<usize>,
    pub rope_parameters: Option<Value>,
    pub partial_rotary_factor: Option<f32>,
    #[serde(default = "defaults::silu")]
    pub hidden_act: String,
}

mod defaults {
    pub fn head_dim() -> usize {
        256
    }
    pub fn conv_kernel() -> usize {
        4
    }
    pub fn head_128() -> usize {
        128
    }
    pub fn key_heads() -> usize {
        16
    }
    pub fn value_heads() -> usize {
        32
    }
    pub fn interval() -> usize {
        4
    }
    pub fn yes() -> bool {
        true
    }
    pub fn one() -> usize {
        1
    }
    pub fn silu() -> String {
        "silu".into()
    }
}

/// Everything the family needs beyond [`TextConfig`], checked.
#[derive(Debug, Clone)]
pub struct Qwen35Args {
    pub variant: Variant,
    pub keys: TextKeys,
    pub mixers: Vec<Mixer>,
    /// Leading channels of each attention head that RoPE rotates: `head_dim × partial_rotary_factor`.
    pub rotary_dim: usize,
    /// Whether the checkpoint has a vision tower (`vision_config`); only its text model is used.
    pub has_vision: bool,
}

impl Qwen35Args {
    /// The family's view of a config.json, or what is wrong with it.
    pub fn from_json(root: &Value, config: &TextConfig) -> std::result::Result<Self, String> {
        let variant = Variant::of(&config.arch).ok_or_else(|| format!("`{}` is not a Qwen3.5 or Qwen3-Next model type", config.arch))?;
        let text = match variant {
            Variant::Next => root,
            _ => root.get("text_config").filter(|t| t.is_object()).unwrap_or(root),
        };
        let keys: TextKeys = serde_json::from_value(text.clone()).map_err(|e| format!("config.json: {e}"))?;
        let n = config.num_layers;
        let mixers = match &keys.layer_types {
            Some(types) => {
                if types.len() != n {
                    return Err(format!("layer_types lists {} layers but num_hidden_layers is {n}", types.len()));
                }
                types
                    .iter()
                    .map(|t| match t.as_str() {
                        "linear_attention" => Ok(Mixer::Linear),
                        "full_attention" => Ok(Mixer::Full),
                        other => Err(format!("layer_types has `{other}`; Qwen3.5 layers are `linear_attention` or `full_attention`")),
                    })
                    .collect::<std::result::Result<Vec<_>, _>>()?
            }
            None if keys.full_attention_interval == 0 => return Err("full_attention_interval is 0".into()),
            None => (0..n).map(|i| if (i + 1) % keys.full_attention_interval == 0 { Mixer::Full } else { Mixer::Linear }).collect(),
        };
        let rope = keys.rope_parameters.as_ref();
        let scaling = rope.or_else(|| text.get("rope_scaling").filter(|s| s.is_object()));
        if let Some(kind) = scaling.and_then(|r| r.get("rope_type").or_else(|| r.get("type"))).and_then(Value::as_str) {
            if !matches!(kind, "default" | "linear" | "llama3") {
                return Err(format!("rope type `{kind}` is not supported for {}", config.arch));
            }
        }
        let factor = rope
            .and_then(|r| r.get("partial_rotary_factor"))
            .and_then(Value::as_f64)
            .map(|f| f as f32)
            .or(keys.partial_rotary_factor)
            .unwrap_or(0.25);
        let rotary_dim = (keys.head_dim as f32 * factor) as usize;
        if !rotary_dim.is_multiple_of(2) || rotary_dim > keys.head_dim {
            return Err(format!("partial_rotary_factor {factor} of head_dim {} does not give an even rotated width", keys.head_dim));
        }
        if keys.linear_num_key_heads == 0 || !keys.linear_num_value_heads.is_multiple_of(keys.linear_num_key_heads) {
            return Err(format!(
                "linear_num_value_heads ({}) must be a multiple of linear_num_key_heads ({})",
                keys.linear_num_value_heads, keys.linear_num_key_heads
            ));
        }
        if keys.linear_conv_kernel_dim == 0 {
            return Err("linear_conv_kernel_dim is 0".into());
        }
        if keys.hidden_act != "silu" {
            return Err(format!("hidden_act `{}` is not supported for {} (silu only)", keys.hidden_act, config.arch));
        }
        let args = Self { variant, mixers, rotary_dim, has_vision: root.get("vision_config").is_some_and(Value::is_object), keys };
        if (0..n).any(|i| args.is_moe(i)) && (args.keys.num_experts_per_tok == 0 || args.keys.num_experts_per_tok > args.keys.num_experts) {
            return Err(format!(
                "num_experts_per_tok ({}) must be between 1 and num_experts ({})",
                args.keys.num_experts_per_tok, args.keys.num_experts
            ));
        }
        if (0..n).any(|i| !args.is_moe(i)) && args.keys.intermediate_size.is_none() {
            return Err("config.json has no `intermediate_size`".into());
        }
        Ok(args)
    }

    /// Whether layer `i` has routed experts (else a dense MLP), as transformers decides.
    pub fn is_moe(&self, i: usize) -> bool {
        let k = &self.keys;
        match self.variant {
            Variant::Dense => false,
            Variant::Moe => true,
            Variant::Next => k.num_experts > 0 && !k.mlp_only_layers.contains(&i) && (i + 1).is_multiple_of(k.decoder_sparse_step.max(1)),
        }
    }

    /// The shared config with this family's corrections: its head size (transformers' default
    /// 256 when the file has none) and, when every layer is MoE, the experts' total width as the
    /// feed-forward size (so the parameter estimate counts every expert).
    pub fn text_config(&self, base: &TextConfig) -> TextConfig {
        let mut config = base.clone();
        config.head_dim = self.keys.head_dim;
        let k = &self.keys;
        config.intermediate_size = match k.intermediate_size {
            Some(i) if (0..base.num_layers).any(|l| !self.is_moe(l)) => i,
            _ => k.num_experts * k.moe_intermediate_size + k.shared_expert_intermediate_size,
        };
        config
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn config(json: &Value) -> TextConfig {
        TextConfig::from_hf_json(json, Path::new("config.json"), crate::model::registry::defaults).unwrap()
    }

    fn qwen3_5(layer_types: Value) -> Value {
        serde_json::json!({
            "model_type": "qwen3_5",
            "vision_config": {"depth": 1},
            "text_config": {
                "model_type": "qwen3_5_text", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 4,
                "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 448,
                "layer_types": layer_types, "linear_num_key_heads": 2, "linear_num_value_heads": 4,
                "rope_parameters": {"rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.25, "mrope_section": [2, 1, 1]}
            }
        })
    }

    #[test]
    fn nested_text_config_with_layer_types() {
        let json = qwen3_5(serde_json::json!(["linear_attention", "linear_attention", "linear_attention", "full_attention"]));
        let args = Qwen35Args::from_json(&json, &config(&json)).unwrap();
        assert_eq!(args.variant, Variant::Dense);
        assert_eq!(args.mixers, [Mixer::Linear, Mixer::Linear, Mixer::Linear, Mixer::Full]);
        assert_eq!(args.rotary_dim, 8);
        assert!(args.has_vision);
        assert_eq!(args.keys.linear_key_head_dim, 128);
    }

    /// Sliding windows are a layer type other families have, not this one.
    #[test]
    fn foreign_layer_type_is_named() {
        let json = qwen3_5(serde_json::json!(["linear_attention", "sliding_attention", "linear_attention", "full_attention"]));
        let err = Qwen35Args::from_json(&json, &config(&json)).unwrap_err();
        assert!(err.contains("`sliding_attention`"), "{err}");
    }

    /// Qwen3-Next as released: transformers 4 keys, no layer_types, MoE every layer but one.
    #[test]
    fn qwen3_next_flat_config() {
        let json = serde_json::json!({
            "model_type": "qwen3_next", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 8,
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 480,
            "rope_theta": 1e7, "partial_rotary_factor": 0.5, "rope_scaling": null, "full_attention_interval": 4,
            "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 48,
            "decoder_sparse_step": 1, "mlp_only_layers": [2]
        });
        let c = config(&json);
        let args = Qwen35Args::from_json(&json, &c).unwrap();
        assert_eq!(args.variant, Variant::Next);
        assert_eq!(args.mixers.iter().filter(|m| **m == Mixer::Full).count(), 2);
        assert_eq!(args.mixers[3], Mixer::Full);
        assert_eq!(args.rotary_dim, 16);
        assert!(args.is_moe(0) && !args.is_moe(2));
        assert_eq!(c.rope.theta, 1e7);
    }
}
