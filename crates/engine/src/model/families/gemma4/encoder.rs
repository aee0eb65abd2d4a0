//! Gemma 4's towers as the runtime's `MediaEncoder`: the processor's settings and marker
//! tokens from the checkpoint folder, the preprocessed item as arrays for the towers.

use std::path::Path;

use mlx_rs::{Array, Dtype};

use crate::error::Result;
use crate::model::families::gemma4::processor::{AudioInput, ImageInput, MediaTokens, ProcessorConfig};
use crate::model::families::gemma4::towers::Gemma4Towers;
use crate::runtime::media_encoder::MediaEncoder;

pub struct Gemma4Encoder {
    towers: Gemma4Towers,
    processor: ProcessorConfig,
    tokens: MediaTokens,
}

impl Gemma4Encoder {
    /// The towers of the Gemma 4 folder `dir`, computing in `dtype`; `None` when its
    /// config.json names no vision or audio tower (a text-only checkpoint).
    pub fn load(dir: &Path, dtype: Dtype) -> Result<Option<Self>> {
        if !has_towers(dir) {
            return Ok(None);
        }
        let towers = Gemma4Towers::load(dir, dtype)?;
        if !towers.has_vision() && !towers.has_audio() {
            return Ok(None);
        }
        Ok(Some(Self { towers, processor: ProcessorConfig::from_folder(dir)?, tokens: MediaTokens::from_folder(dir)? }))
    }
}

/// Whether config.json has a `vision_config` or `audio_config` section.
fn has_towers(dir: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join("config.json")) else { return false };
    let Ok(config) = serde_json::from_str::<serde_json::Value>(&text) else { return false };
    ["vision_config", "audio_config"].iter().any(|key| config.get(key).is_some_and(|v| v.is_object()))
}

impl MediaEncoder for Gemma4Encoder {
    fn identity(&self) -> String {
        self.towers.tower_identity().to_string()
    }

    fn processor(&self) -> &ProcessorConfig {
        &self.processor
    }

    fn media_tokens(&self) -> &MediaTokens {
        &self.tokens
    }

    fn has_vision(&self) -> bool {
        self.towers.has_vision()
    }

    fn has_audio(&self) -> bool {
        self.towers.has_audio()
    }

    fn encode_image(&self, input: &ImageInput) -> Result<Array> {
        let pixels = Array::from_slice(&input.pixel_values, &[input.max_patches as i32, input.patch_dim as i32]);
        let positions = Array::from_slice(&input.position_ids, &[input.max_patches as i32, 2]);
        self.towers.encode_image(&pixels, &positions)
    }

    fn encode_audio(&self, input: &AudioInput) -> Result<Array> {
        let features = Array::from_slice(&input.features, &[input.frames as i32, input.feature_size as i32]);
        let mask: Vec<i32> = input.mask.iter().map(|&m| m as i32).collect();
        let mask = Array::from_slice(&mask, &[input.frames as i32]).as_dtype(Dtype::Bool)?;
        self.towers.encode_audio(&features, &mask)
    }
}
