//! The keys of LFM2's config.json that the shared config does not read, with transformers'
//! defaults (`Lfm2Config`).

use serde::Deserialize;
use serde_json::Value;

use crate::model::config::{LayerKind, TextConfig};

#[derive(Debug, Deserialize)]
pub struct Lfm2Args {
    /// Width of the convolution window (positions each output mixes); 0 where the weights say.
    #[serde(default = "default_conv_cache", rename = "conv_L_cache")]
    pub conv_cache: usize,
    /// Biases on the convolution layers' projections and convolution.
    #[serde(default)]
    pub conv_bias: bool,
    #[serde(default = "default_norm_eps")]
    pub norm_eps: f32,
    /// transformers 4's name for `intermediate_size`, which wins where both are given.
    #[serde(default)]
    pub block_ff_dim: Option<usize>,
    #[serde(default = "yes")]
    pub block_auto_adjust_ff_dim: bool,
    /// `null` skips the multiplier and the rounding.
    #[serde(default = "one")]
    pub block_ffn_dim_multiplier: Option<f64>,
    #[serde(default = "default_multiple")]
    pub block_multiple_of: usize,
}

fn default_conv_cache() -> usize {
    3
}
fn default_norm_eps() -> f32 {
    1e-5
}
fn yes() -> bool {
    true
}
fn one() -> Option<f64> {
    Some(1.0)
}
fn default_multiple() -> usize {
    256
}

impl Lfm2Args {
    pub fn from_json(json: &Value) -> std::result::Result<Self, String> {
        let args: Self = serde_json::from_value(json.clone()).map_err(|e| format!("config.json: {e}"))?;
        if args.conv_cache < 2 {
            return Err(format!("conv_L_cache is {}; a convolution window needs at least 2 positions", args.conv_cache));
        }
        if args.block_multiple_of == 0 {
            return Err("block_multiple_of is 0; it must be at least 1".into());
        }
        Ok(args)
    }

    /// A GGUF file's: its metadata gives the feed-forward width after the rules and the norm
    /// epsilon (in the shared config); the window size is read off the convolution weights.
    pub fn for_gguf(config: &TextConfig) -> Self {
        Self {
            conv_cache: 0,
            conv_bias: false,
            norm_eps: config.rms_norm_eps,
            block_ff_dim: None,
            block_auto_adjust_ff_dim: false,
            block_ffn_dim_multiplier: None,
            block_multiple_of: 1,
        }
    }

    /// The feed-forward width transformers' Lfm2MLP builds from the configured one.
    pub fn feed_forward_dim(&self, configured: usize) -> usize {
        let configured = self.block_ff_dim.unwrap_or(configured);
        if !self.block_auto_adjust_ff_dim {
            return configured;
        }
        // Python's int(2 * n / 3) and int(m * n): float products, truncated.
        let adjusted = (2.0 * configured as f64 / 3.0) as usize;
        match self.block_ffn_dim_multiplier {
            Some(m) => {
                let scaled = (m * adjusted as f64) as usize;
                scaled.div_ceil(self.block_multiple_of) * self.block_multiple_of
            }
            None => adjusted,
        }
    }

    /// The shared config with LFM2's norm epsilon and feed-forward width.
    pub fn text_config(&self, config: &TextConfig) -> TextConfig {
        TextConfig { rms_norm_eps: self.norm_eps, intermediate_size: self.feed_forward_dim(config.intermediate_size), ..config.clone() }
    }
}

/// Whether each layer is a convolution (else attention); an error naming any other layer type.
pub fn convolution_layers(config: &TextConfig) -> std::result::Result<Vec<bool>, String> {
    config
        .layer_kinds
        .iter()
        .enumerate()
        .map(|(i, kind)| match kind {
            LayerKind::Convolution => Ok(true),
            LayerKind::Full => Ok(false),
            other => Err(format!("layer {i} is `{}`; LFM2 has only `conv` and `full_attention` layers (fix layer_types)", other.name())),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Lfm2Args;

    fn ff(config: serde_json::Value, configured: usize) -> usize {
        Lfm2Args::from_json(&config).unwrap().feed_forward_dim(configured)
    }

    #[test]
    fn feed_forward_width_follows_transformers_rules() {
        // LFM2-350M: block_ff_dim 6656 → 4437 → ×1.0 → 4608 (a multiple of 256).
        assert_eq!(ff(json!({"block_ff_dim": 6656}), 0), 4608);
        // The tiny fixture: 100 → 66 → ×1.3 = 85 → 88.
        assert_eq!(ff(json!({"block_multiple_of": 8, "block_ffn_dim_multiplier": 1.3}), 100), 88);
        // No multiplier: two thirds, not rounded (transformers rounds only with one).
        assert_eq!(ff(json!({"block_ffn_dim_multiplier": null}), 100), 66);
        assert_eq!(ff(json!({"block_auto_adjust_ff_dim": false}), 100), 100);
    }

    #[test]
    fn bad_settings_say_what_to_fix() {
        assert!(Lfm2Args::from_json(&json!({"conv_L_cache": 1})).unwrap_err().contains("conv_L_cache is 1"));
        assert!(Lfm2Args::from_json(&json!({"block_multiple_of": 0})).unwrap_err().contains("block_multiple_of"));
    }
}
