//! SmolLM3: a Llama (GQA, SwiGLU, RMSNorm, tied embeddings) whose NoPE layers skip rotary
//! embeddings. Which layers rotate is the one thing Llama's config cannot say, so the family is
//! its own folder building through `llama::build_rotating`.

use serde::Deserialize;
use serde_json::Value;

use crate::error::{EngineError, Result};
use crate::model::config::{ConfigDefaults, TextConfig};
use crate::model::families::llama;
use crate::model::family::Family;
use crate::model::weights::Weights;
use crate::model::{BuildOptions, TextModel};

pub const FAMILY: Family = Family {
    model_types: &["smollm3"],
    denoising: false,
    // transformers' SmolLM3Config: `default_theta` 2e6, tied embeddings.
    defaults: |_| ConfigDefaults { rope_theta: 2_000_000.0, tie_word_embeddings: true, ..ConfigDefaults::default() },
    build,
    encoder: None,
};

/// llama.cpp's SmolLM3 GGUF files name no NoPE keys: every 4th layer is NoPE there, as in
/// transformers' default.
const DEFAULT_NO_ROPE_INTERVAL: usize = 4;

/// The keys of SmolLM3's config.json that Llama's do not have, with transformers' defaults.
#[derive(Debug, Deserialize)]
struct SmolLm3Args {
    /// Per layer, 1 where it applies RoPE and 0 where it is a NoPE layer.
    #[serde(default)]
    no_rope_layers: Option<Vec<u8>>,
    /// Without `no_rope_layers`, every `no_rope_layer_interval`-th layer is NoPE.
    #[serde(default = "default_interval")]
    no_rope_layer_interval: usize,
    /// Sliding windows on the NoPE layers; no released checkpoint turns them on.
    #[serde(default)]
    use_sliding_window: bool,
}

fn default_interval() -> usize {
    DEFAULT_NO_ROPE_INTERVAL
}

impl SmolLm3Args {
    /// From config.json, or transformers' defaults where there is none (GGUF).
    fn read(json: Option<&Value>) -> std::result::Result<Self, String> {
        let Some(json) = json else {
            return Ok(Self { no_rope_layers: None, no_rope_layer_interval: DEFAULT_NO_ROPE_INTERVAL, use_sliding_window: false });
        };
        serde_json::from_value(json.clone()).map_err(|e| format!("config.json: {e}"))
    }

    /// Whether each of `layers` layers applies RoPE.
    fn rotating_layers(&self, layers: usize) -> std::result::Result<Vec<bool>, String> {
        if self.use_sliding_window {
            return Err("use_sliding_window is true; Confab runs SmolLM3 without sliding windows, as released. \
                        Set it to false in config.json or pick another model"
                .into());
        }
        match &self.no_rope_layers {
            Some(list) if list.len() < layers => {
                Err(format!("no_rope_layers lists {} layers but num_hidden_layers is {layers}; fix config.json", list.len()))
            }
            Some(list) => Ok(list[..layers].iter().map(|&rope| rope != 0).collect()),
            None if self.no_rope_layer_interval == 0 => Err("no_rope_layer_interval is 0; it must be at least 1".into()),
            None => Ok((0..layers).map(|i| (i + 1) % self.no_rope_layer_interval != 0).collect()),
        }
    }
}

pub fn build(config: &TextConfig, json: Option<&Value>, w: &mut Weights, opts: &BuildOptions) -> Result<Box<dyn TextModel>> {
    let rotating = SmolLm3Args::read(json)
        .and_then(|args| args.rotating_layers(config.num_layers))
        .map_err(|reason| EngineError::ModelFormat { path: w.source().to_path_buf(), reason })?;
    llama::build_rotating(config, w, opts, |i| rotating[i])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::SmolLm3Args;

    fn rotating(config: serde_json::Value, layers: usize) -> Result<Vec<bool>, String> {
        SmolLm3Args::read(Some(&config))?.rotating_layers(layers)
    }

    #[test]
    fn nope_layers_from_the_list_or_the_interval() {
        assert_eq!(rotating(json!({"no_rope_layers": [1, 0, 1, 1, 0]}), 5).unwrap(), [true, false, true, true, false]);
        // transformers' default: every 4th layer is NoPE.
        assert_eq!(rotating(json!({}), 5).unwrap(), [true, true, true, false, true]);
        assert_eq!(rotating(json!({"no_rope_layer_interval": 2}), 4).unwrap(), [true, false, true, false]);
        // A GGUF file has no config.json: llama.cpp's fixed interval of 4.
        assert_eq!(SmolLm3Args::read(None).unwrap().rotating_layers(8).unwrap(), [true, true, true, false, true, true, true, false]);
    }

    #[test]
    fn bad_nope_settings_are_errors_that_say_what_to_fix() {
        let short = rotating(json!({"no_rope_layers": [1, 0]}), 3).unwrap_err();
        assert!(short.contains("no_rope_layers lists 2 layers but num_hidden_layers is 3"), "{short}");
        let zero = rotating(json!({"no_rope_layer_interval": 0}), 3).unwrap_err();
        assert!(zero.contains("at least 1"), "{zero}");
        let sliding = rotating(json!({"use_sliding_window": true, "sliding_window": 8}), 3).unwrap_err();
        assert!(sliding.contains("use_sliding_window"), "{sliding}");
        assert!(rotating(json!({"no_rope_layers": "all"}), 3).unwrap_err().starts_with("config.json:"));
    }
}
