//! The keys of gpt-oss's config.json that the shared config does not read, with transformers'
//! defaults (`GptOssConfig`).

use serde::Deserialize;
use serde_json::Value;

use crate::model::config::{LayerKind, TextConfig};

#[derive(Debug, Deserialize)]
pub struct GptOssArgs {
    #[serde(alias = "num_experts")]
    pub num_local_experts: usize,
    #[serde(default = "default_top_k")]
    pub num_experts_per_tok: usize,
    #[serde(default = "default_alpha")]
    pub swiglu_alpha: f32,
    #[serde(default = "default_limit")]
    pub swiglu_limit: f32,
    /// Where config.json gives none: every other layer slides, the first one included.
    #[serde(default)]
    pub layer_types: Option<Vec<String>>,
    #[serde(default)]
    pub sliding_window: Option<usize>,
}

fn default_top_k() -> usize {
    4
}
fn default_alpha() -> f32 {
    1.702
}
fn default_limit() -> f32 {
    7.0
}

/// transformers' `sliding_window` where config.json leaves it out.
const DEFAULT_WINDOW: usize = 128;

impl GptOssArgs {
    pub fn from_json(json: &Value) -> std::result::Result<Self, String> {
        let args: Self = serde_json::from_value(json.clone()).map_err(|e| format!("config.json: {e}"))?;
        if args.num_experts_per_tok == 0 || args.num_experts_per_tok > args.num_local_experts {
            return Err(format!(
                "num_experts_per_tok is {} with {} experts; it must be between 1 and num_local_experts",
                args.num_experts_per_tok, args.num_local_experts
            ));
        }
        Ok(args)
    }

    /// The shared config with gpt-oss's layer kinds (alternating where config.json lists none)
    /// and its window; an error naming any layer type gpt-oss does not have.
    pub fn text_config(&self, config: &TextConfig) -> std::result::Result<TextConfig, String> {
        let layer_kinds = match &self.layer_types {
            Some(_) => config.layer_kinds.clone(),
            None => (0..config.num_layers).map(|i| if i % 2 == 0 { LayerKind::Sliding } else { LayerKind::Full }).collect(),
        };
        if let Some((i, kind)) = layer_kinds.iter().enumerate().find(|(_, k)| !matches!(k, LayerKind::Sliding | LayerKind::Full)) {
            return Err(format!(
                "layer {i} is `{}`; gpt-oss has only `sliding_attention` and `full_attention` layers (fix layer_types)",
                kind.name()
            ));
        }
        Ok(TextConfig { layer_kinds, sliding_window: Some(self.sliding_window.unwrap_or(DEFAULT_WINDOW)), ..config.clone() })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::GptOssArgs;

    #[test]
    fn defaults_are_transformers() {
        let args = GptOssArgs::from_json(&json!({"num_local_experts": 32})).unwrap();
        assert_eq!((args.num_experts_per_tok, args.swiglu_alpha, args.swiglu_limit), (4, 1.702, 7.0));
        assert!(GptOssArgs::from_json(&json!({"num_experts": 8, "num_experts_per_tok": 9}))
            .unwrap_err()
            .contains("num_experts_per_tok is 9"));
        assert!(GptOssArgs::from_json(&json!({})).unwrap_err().contains("num_local_experts"));
    }
}
