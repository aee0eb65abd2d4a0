//! Gemma 4's own config.json keys: the shared [`TextConfig`] has already been read from the same
//! file; [`Gemma4Args`] adds what only this family has, with transformers' defaults.
//!
//! Full-attention layers get `global_head_dim` (default 512, as transformers) and, with
//! `attention_k_eq_v`, `num_global_key_value_heads`; transformers 5.24 writes the same thing as
//! `per_layer_config` {layer index: {head_dim, num_key_value_heads}}, which wins.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{EngineError, Result};
use crate::model::config::{LayerKind, TextConfig};

/// Gemma 4's additions to the text model, per layer where they vary.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Gemma4Args {
    /// Head size of each layer: full-attention layers use `global_head_dim` (per_layer_config).
    pub head_dims: Vec<usize>,
    /// KV heads of each layer (full layers with `attention_k_eq_v` may have fewer).
    pub kv_heads: Vec<usize>,
    /// Full-attention layers have no v_proj: the key projection doubles as the values.
    pub attention_k_eq_v: bool,
    /// The last this many layers reuse the keys and values of the last earlier layer of their kind.
    pub num_kv_shared_layers: usize,
    /// Per-layer input embeddings (PLE) width; 0 when the model has none.
    pub hidden_size_per_layer_input: usize,
    pub vocab_size_per_layer_input: usize,
    pub moe: Option<MoeConfig>,
    /// `vision`: tokens of one image attend to each other both ways (in the layers
    /// `media_mask` names); `all`: no causal mask at all (not supported for generation).
    pub bidirectional_attention: Option<String>,
    /// Where and how an image's tokens see each other both ways, under `vision`.
    pub media_mask: MediaMask,
    pub pad_token_id: u32,
    /// Placeholder ids of the multimodal checkpoint (`image_token_id`, `audio_token_id`, `video_token_id`).
    pub image_token_id: Option<u32>,
    pub audio_token_id: Option<u32>,
    pub video_token_id: Option<u32>,
}

/// How `use_bidirectional_attention = "vision"` opens the causal mask within an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum MediaMask {
    /// Gemma 4: sliding layers only, still within the window (AND(window, OR(causal, image)));
    /// full layers stay causal.
    SlidingLayers,
    /// transformers' `create_masks_for_generate` with block ids, as DiffusionGemma's encoder
    /// uses it: every layer, OR(its own causal mask, image), so an image is not cut by the window.
    EveryLayer,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MoeConfig {
    pub num_experts: usize,
    pub top_k: usize,
    pub intermediate_size: usize,
}

/// The text config's Gemma 4 keys as config.json writes them (`text_config`, or the whole file
/// for a text-only checkpoint).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TextKeys {
    head_dim: Option<usize>,
    num_key_value_heads: Option<usize>,
    attention_k_eq_v: Option<bool>,
    global_head_dim: Option<usize>,
    num_global_key_value_heads: Option<usize>,
    per_layer_config: Option<HashMap<String, LayerKeys>>,
    num_kv_shared_layers: Option<usize>,
    enable_moe_block: Option<bool>,
    num_experts: Option<usize>,
    top_k_experts: Option<usize>,
    moe_intermediate_size: Option<usize>,
    hidden_size_per_layer_input: Option<usize>,
    vocab_size_per_layer_input: Option<usize>,
    use_bidirectional_attention: Option<String>,
    pad_token_id: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct LayerKeys {
    head_dim: Option<usize>,
    num_key_value_heads: Option<usize>,
}

/// The multimodal config's placeholder ids (top level).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RootKeys {
    image_token_id: Option<u32>,
    audio_token_id: Option<u32>,
    video_token_id: Option<u32>,
}

impl Gemma4Args {
    /// Reads the Gemma 4 keys of `root` (a whole config.json) for `config`, read from the same
    /// file; `path` names the file in errors.
    pub fn from_json(root: &Value, config: &TextConfig, path: &Path) -> Result<Self> {
        let bad = |e: serde_json::Error| EngineError::ModelFormat { path: path.into(), reason: format!("config.json is malformed ({e})") };
        let text = root.get("text_config").filter(|v| v.is_object()).unwrap_or(root);
        let k = TextKeys::deserialize(text).map_err(bad)?;
        let ids = RootKeys::deserialize(root).map_err(bad)?;
        let kinds = &config.layer_kinds;

        let num_heads = config.num_heads;
        let head_dim = k.head_dim.unwrap_or(256);
        let kv = k.num_key_value_heads.unwrap_or(num_heads);
        let k_eq_v = k.attention_k_eq_v.unwrap_or(false);
        let global_head_dim = k.global_head_dim.unwrap_or(512);
        let global_kv = k.num_global_key_value_heads.filter(|_| k_eq_v).unwrap_or(kv);
        let mut head_dims = Vec::with_capacity(kinds.len());
        let mut kv_heads = Vec::with_capacity(kinds.len());
        for (i, kind) in kinds.iter().enumerate() {
            let (d, h) = match &k.per_layer_config {
                Some(layers) => {
                    let entry = layers.get(&i.to_string());
                    (entry.and_then(|e| e.head_dim).unwrap_or(head_dim), entry.and_then(|e| e.num_key_value_heads).unwrap_or(kv))
                }
                None if *kind == LayerKind::Full => (global_head_dim, global_kv),
                None => (head_dim, kv),
            };
            head_dims.push(d);
            kv_heads.push(h);
        }
        let shared = k.num_kv_shared_layers.unwrap_or(0);
        if shared > kinds.len() {
            return Err(EngineError::ModelFormat {
                path: path.into(),
                reason: format!("num_kv_shared_layers {shared} exceeds the {} layers", kinds.len()),
            });
        }
        let moe = if k.enable_moe_block.unwrap_or(false) {
            let need = |value: Option<usize>, key: &str| {
                value.ok_or_else(|| EngineError::ModelFormat { path: path.into(), reason: format!("config.json has no `{key}`") })
            };
            Some(MoeConfig {
                num_experts: need(k.num_experts, "num_experts")?,
                top_k: need(k.top_k_experts, "top_k_experts")?,
                intermediate_size: need(k.moe_intermediate_size, "moe_intermediate_size")?,
            })
        } else {
            None
        };
        Ok(Self {
            head_dims,
            kv_heads,
            attention_k_eq_v: k_eq_v,
            num_kv_shared_layers: shared,
            hidden_size_per_layer_input: k.hidden_size_per_layer_input.unwrap_or(0),
            vocab_size_per_layer_input: k.vocab_size_per_layer_input.unwrap_or(0),
            moe,
            bidirectional_attention: k.use_bidirectional_attention,
            media_mask: MediaMask::SlidingLayers,
            pad_token_id: k.pad_token_id.unwrap_or(0) as u32,
            image_token_id: ids.image_token_id,
            audio_token_id: ids.audio_token_id,
            video_token_id: ids.video_token_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::RopeScaling;

    /// Gemma 4 as released (global_head_dim, num_global_key_value_heads; no per_layer_config).
    #[test]
    fn gemma4_global_layer_keys() {
        let json = serde_json::json!({
            "model_type": "gemma4",
            "image_token_id": 258880,
            "text_config": {
                "model_type": "gemma4_text", "hidden_size": 64, "intermediate_size": 128,
                "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
                "vocab_size": 400, "global_head_dim": 32, "num_global_key_value_heads": 1, "attention_k_eq_v": true,
                "layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
                "num_kv_shared_layers": 1, "hidden_size_per_layer_input": 8, "vocab_size_per_layer_input": 400,
                "rope_parameters": {
                    "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                    "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0}
                }
            }
        });
        let path = Path::new("config.json");
        let c = TextConfig::from_hf_json(&json, path, crate::model::registry::defaults).unwrap();
        let g = Gemma4Args::from_json(&json, &c, path).unwrap();
        assert_eq!(g.head_dims, [16, 16, 32]);
        assert_eq!(g.kv_heads, [2, 2, 1]);
        assert_eq!(g.image_token_id, Some(258880));
        assert_eq!(c.rope.scaling, RopeScaling::Proportional { factor: 1.0, partial_rotary_factor: 0.25 });
    }
}
