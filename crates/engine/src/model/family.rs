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
