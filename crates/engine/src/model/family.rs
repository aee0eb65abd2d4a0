//! What a model family declares in its folder (`families::<name>::FAMILY`), for the registry
//! to list: kept apart from the registry, which imports every family.

use std::path::Path;

use mlx_rs::Dtype;
use serde_json::Value;

use crate::error::Result;
use crate::model::config::{ConfigDefaults, TextConfig};
use crate::model::weights::Weights;
use crate::model::MediaProcessor;
use crate::model::{BuildOptions, TextModel};

/// Builds a family's text model from the shared config, the whole config.json it was read from
/// (`None` for GGUF files, which have none: the family's own arguments come from there) and the
/// checkpoint's weights.
pub type BuildFn = fn(&TextConfig, Option<&Value>, &mut Weights, &BuildOptions) -> Result<Box<dyn TextModel>>;

/// Loads a family's vision and audio towers, with their preprocessing, from a Hugging Face
/// folder, computing in the dtype given; `Ok(None)` when the checkpoint has none.
pub type EncoderFn = fn(&Path, Dtype) -> Result<Option<Box<dyn MediaProcessor>>>;

/// A model family, as its folder declares it.
#[derive(Clone, Copy)]
pub struct Family {
    /// The `model_type`s it builds (a multimodal config's text `model_type`).
    pub model_types: &'static [&'static str],
    /// Its models write by denoising canvases (its text model has a `Denoiser`), which the
    /// picker marks before one is loaded.
    pub denoising: bool,
    /// What config.json means when it leaves a shared key out, per model type.
    pub defaults: fn(&str) -> ConfigDefaults,
    pub build: BuildFn,
    pub encoder: Option<EncoderFn>,
}

/// What media a checkpoint reads once loaded, told from its folder before loading it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MediaReads {
    pub vision: bool,
    pub audio: bool,
    pub video: bool,
}

/// The one rule for "can this model take an image, a clip, a video" before it is loaded (the
/// picker's badges): the checkpoint has the tower, and its family loads towers. A Gemma 3
/// checkpoint has a vision tower its family does not load, so it reads text only. Once loaded,
/// `ModelInfo::{vision, audio, video}` say what the towers loaded read.
pub fn media_reads(family: Option<&Family>, config_json: &Value, dir: &Path) -> MediaReads {
    let towers = family.is_some_and(|f| f.encoder.is_some());
    let vision = towers && config_json.get("vision_config").is_some();
    MediaReads {
        vision,
        audio: towers && config_json.get("audio_config").is_some(),
        video: vision && config_json.get("video_token_id").is_some() && dir.join("video_preprocessor_config.json").is_file(),
    }
}
