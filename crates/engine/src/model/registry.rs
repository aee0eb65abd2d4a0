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
    families::diffusion_gemma::FAMILY,
    families::gpt_oss::FAMILY,
    families::lfm2::FAMILY,
    families::mistral3::FAMILY,
    families::qwen3_5::FAMILY,
    families::qwen3_vl::FAMILY,
    families::smollm3::FAMILY,
];

/// The family that builds `model_type`.
pub fn family(model_type: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.model_types.contains(&model_type))
}

/// The model type that picks a Hugging Face checkpoint's family: its text config's, unless the
/// checkpoint's own (a multimodal wrapper's) belongs to another family. Mistral 3's text config
/// says `mistral`, which the Llama family would read without the vision tower.
pub fn architecture(config_json: &serde_json::Value, text_type: &str) -> String {
    let own = config_json.get("model_type").and_then(serde_json::Value::as_str);
    match own.and_then(|t| family(t).map(|f| (t, f))) {
        Some((t, f)) if family(text_type).is_none_or(|g| !std::ptr::eq(f, g)) => t.to_string(),
        _ => text_type.to_string(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_wrapper_of_another_family_picks_the_family() {
        // Mistral 3 wraps a `mistral` text config, which the Llama family would read alone.
        assert_eq!(architecture(&json!({"model_type": "mistral3"}), "mistral"), "mistral3");
        assert_eq!(architecture(&json!({"model_type": "mistral3"}), "ministral3"), "mistral3");
        assert_eq!(architecture(&json!({"model_type": "ministral3"}), "ministral3"), "ministral3");
        // Wrappers no family claims, or claimed by the text type's own family, keep the text type.
        assert_eq!(architecture(&json!({"model_type": "qwen3_vl"}), "qwen3_vl_text"), "qwen3_vl_text");
        assert_eq!(architecture(&json!({"model_type": "qwen3_5"}), "qwen3_5_text"), "qwen3_5_text");
        assert_eq!(architecture(&json!({"model_type": "llama"}), "llama"), "llama");
        assert_eq!(architecture(&json!({}), "gemma3_text"), "gemma3_text");
    }
}
