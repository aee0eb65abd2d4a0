//! Which family builds which `model_type`: one line per family. A family declares itself in its
//! folder (`model::families::<name>::FAMILY`): the model types it reads, how config.json reads
//! when a key is left out, the build of its text model and, if it reads images or audio, the
//! loader of its encoder.

use std::path::Path;

use mlx_rs::Dtype;
use serde_json::Value;

use crate::error::Result;
use crate::model::config::{ConfigDefaults, TextConfig};
use crate::model::families;
use crate::model::weights::Weights;
use crate::model::{BuildOptions, TextModel};
use crate::model::MediaProcessor;

pub const FAMILIES: &[Family] = &[
    families::llama::FAMILY,
    families::gemma3::FAMILY,
    families::gemma4::FAMILY,
    families::qwen3_5::FAMILY,
];

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
    /// What config.json means when it leaves a shared key out, per model type.
    pub defaults: fn(&str) -> ConfigDefaults,
    pub build: BuildFn,
    pub encoder: Option<EncoderFn>,
}

/// The family that builds `model_type`.
pub fn family(model_type: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.model_types.contains(&model_type))
}

pub fn builder(model_type: &str) -> Option<BuildFn> {
    family(model_type).map(|f| f.build)
}

/// The config defaults of `model_type` (the shared ones for a type no family builds).
pub fn defaults(model_type: &str) -> ConfigDefaults {
    family(model_type).map_or_else(ConfigDefaults::default, |f| (f.defaults)(model_type))
}

/// Every supported model type, for errors.
pub fn supported() -> String {
    FAMILIES.iter().flat_map(|f| f.model_types.iter().copied()).collect::<Vec<_>>().join(", ")
}
