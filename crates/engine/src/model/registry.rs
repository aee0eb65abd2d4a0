//! Which family builds which `model_type`: one line per family. A family declares itself in its
//! folder (`model::families::<name>::FAMILY`): the model types it reads, how config.json reads
//! when a key is left out, the build of its text model and, if it reads images or audio, the
//! loader of its encoder.

use crate::model::config::ConfigDefaults;
use crate::model::families;
pub use crate::model::family::{BuildFn, EncoderFn, Family};

pub const FAMILIES: &[Family] = &[
    families::llama::FAMILY,
    families::gemma3::FAMILY,
    families::gemma4::FAMILY,
    families::lfm2::FAMILY,
    families::qwen3_5::FAMILY,
    families::qwen3_vl::FAMILY,
    families::smollm3::FAMILY,
];

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
