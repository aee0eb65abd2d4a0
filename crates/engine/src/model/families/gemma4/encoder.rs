//! Gemma 4's towers as the runtime's `MediaProcessor`: the processor's settings and marker
//! tokens from the checkpoint folder, the preprocessed item as arrays for the towers.
//!
//! [`MediaEncoder`] is the towers as Gemma 4's processor sees them (preprocessed arrays in,
//! soft-token rows out); whatever implements it — the real towers ([`Gemma4Encoder`]) or a
//! test's stand-in — is a `MediaProcessor`, the processor doing the rest.

use std::path::Path;

use mlx_rs::{Array, Dtype};

use super::processor::{
    audio_soft_tokens, expand_prompt, extract_features, image_soft_tokens, preprocess_image, AudioInput, ImageInput, MediaTokens,
    ProcessorConfig,
};
use super::towers::Gemma4Towers;
use crate::error::{EngineError, Result};
use crate::media::{MediaKind, RgbImage};
use crate::model::media::expanded_prompt::{ExpandedPrompt, VideoLayout};
use crate::model::MediaProcessor;
use crate::text::Tokenizer;

/// Gemma 4's vision and audio towers behind its processor.
pub trait MediaEncoder {
    /// The towers' identity for the encoder cache: the model fingerprint and every
    /// preprocessing parameter that changes a tower's input. Outputs cached under one identity
    /// are never served to another.
    fn identity(&self) -> String;
    /// The preprocessing settings the towers expect.
    fn processor(&self) -> &ProcessorConfig;
    /// The prompt's media marker strings.
    fn media_tokens(&self) -> &MediaTokens;
    fn has_vision(&self) -> bool;
    fn has_audio(&self) -> bool;
    /// One image → `[soft_tokens, hidden]` rows, in the text model's embedding space.
    fn encode_image(&self, input: &ImageInput) -> Result<Array>;
    /// One clip → `[soft_tokens, hidden]` rows, in the text model's embedding space.
    fn encode_audio(&self, input: &AudioInput) -> Result<Array>;
}

impl<T: MediaEncoder> MediaProcessor for T {
    fn identity(&self) -> String {
        MediaEncoder::identity(self)
    }

    fn reads(&self, kind: MediaKind) -> bool {
        match kind {
            MediaKind::Image => self.has_vision(),
            MediaKind::Audio => self.has_audio(),
            MediaKind::Video => false,
        }
    }

    fn sampling_rate(&self) -> u32 {
        self.processor().audio.sampling_rate
    }

    fn image_soft_tokens(&self, width: u32, height: u32) -> Result<usize> {
        image_soft_tokens(height as usize, width as usize, &self.processor().image)
    }

    fn audio_soft_tokens(&self, samples: &[f32]) -> usize {
        let processor = self.processor();
        audio_soft_tokens(samples.len(), &processor.audio, processor.audio_seq_length)
    }

    fn expand_prompt(
        &self,
        tokenizer: &Tokenizer,
        rendered: &str,
        image_tokens: &[usize],
        audio_tokens: &[usize],
        videos: &[VideoLayout],
    ) -> Result<ExpandedPrompt> {
        if !videos.is_empty() {
            return Err(EngineError::invalid("input", "Gemma 4 reads no video"));
        }
        expand_prompt(tokenizer, self.media_tokens(), rendered, image_tokens, audio_tokens)
    }

    fn embed_image(&self, image: &RgbImage) -> Result<Array> {
        let input = preprocess_image(image, &self.processor().image)?;
        self.encode_image(&input)
    }

    fn embed_audio(&self, samples: &[f32]) -> Result<Array> {
        let processor = self.processor();
        let input = extract_features(samples, &processor.audio, processor.audio_seq_length)?;
        self.encode_audio(&input)
    }
}

pub struct Gemma4Encoder {
    towers: Gemma4Towers,
    processor: ProcessorConfig,
    tokens: MediaTokens,
}

impl Gemma4Encoder {
    /// The towers of the Gemma 4 folder `dir`, computing in `dtype`; `None` when its
    /// config.json names no vision or audio tower (a text-only checkpoint).
    pub fn load(dir: &Path, dtype: Dtype) -> Result<Option<Self>> {
        Self::load_as(dir, dtype, "gemma4")
    }

    /// `load` for a checkpoint of `model_type` whose towers and processor are Gemma 4's.
    pub fn load_as(dir: &Path, dtype: Dtype, model_type: &str) -> Result<Option<Self>> {
        if !has_towers(dir) {
            return Ok(None);
        }
        let towers = Gemma4Towers::load_as(dir, dtype, model_type)?;
        if !towers.has_vision() && !towers.has_audio() {
            return Ok(None);
        }
        let processor = ProcessorConfig::from_folder(dir)?;
        if let Err(bins) = towers.check_mel_bins(processor.audio.feature_size) {
            return Err(EngineError::ModelFormat {
                path: dir.join("config.json"),
                reason: format!(
                    "the feature extractor's feature_size ({}) does not fit audio_config.subsampling_conv_channels, which \
                     stands for {bins} mel bins",
                    processor.audio.feature_size
                ),
            });
        }
        Ok(Some(Self { towers, processor, tokens: MediaTokens::from_folder(dir)? }))
    }
}

/// Whether config.json has a `vision_config` or `audio_config` section.
fn has_towers(dir: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join("config.json")) else {
        return false;
    };
    let Ok(config) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
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
