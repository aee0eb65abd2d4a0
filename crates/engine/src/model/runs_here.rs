//! "Can this model run here?", in one place: discovery, the hub's search and details, and
//! downloads (the app's and `confab pull`'s) all ask [`runs_here`].

use serde_json::Value;

use crate::model::format::gguf;
use crate::model::registry;

/// A model's architecture as one of the places that ask has it.
#[derive(Debug, Clone, Copy)]
pub enum Architecture<'a> {
    /// A whole config.json: its text part's `model_type` (what loading builds), or its own.
    Config(&'a Value),
    /// A config.json's top-level `model_type` alone (what the hub's listing gives): a
    /// multimodal checkpoint runs when its text model (`{model_type}_text`) does.
    ModelType(&'a str),
    /// A GGUF file's `general.architecture`.
    Gguf(&'a str),
    /// A hub search tag, which may be either of the last two.
    Tag(&'a str),
}

/// Whether this build has a family (or, for GGUF, a tensor mapping) for the architecture.
pub fn runs_here(architecture: Architecture<'_>) -> bool {
    match architecture {
        Architecture::Config(config) => {
            let model_type = config.get("model_type").and_then(Value::as_str);
            let text_type = config.pointer("/text_config/model_type").and_then(Value::as_str);
            text_type.is_some_and(has_family) || model_type.is_some_and(|t| runs_here(Architecture::ModelType(t)))
        }
        Architecture::ModelType(model_type) => has_family(model_type) || has_family(&format!("{model_type}_text")),
        Architecture::Gguf(architecture) => gguf::supports(architecture),
        Architecture::Tag(tag) => runs_here(Architecture::ModelType(tag)) || runs_here(Architecture::Gguf(tag)),
    }
}

fn has_family(model_type: &str) -> bool {
    registry::family(model_type).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_config_runs_by_its_text_model_or_its_own_type() {
        assert!(runs_here(Architecture::Config(&json!({"model_type": "qwen3"}))));
        // Multimodal: the text part's type is what loading builds.
        assert!(runs_here(Architecture::Config(&json!({"model_type": "qwen3_vl", "text_config": {"model_type": "qwen3_vl_text"}}))));
        assert!(runs_here(Architecture::Config(&json!({"model_type": "gemma3"}))), "gemma3 runs as gemma3_text");
        assert!(!runs_here(Architecture::Config(&json!({"model_type": "bert"}))));
        assert!(!runs_here(Architecture::Config(&json!({"vocab_size": 10}))), "no model_type");
    }

    #[test]
    fn model_types_gguf_architectures_and_tags() {
        assert!(runs_here(Architecture::ModelType("llama")));
        assert!(runs_here(Architecture::ModelType("gemma4")), "through gemma4_text");
        assert!(!runs_here(Architecture::ModelType("whisper")));
        assert!(runs_here(Architecture::Gguf("llama")));
        assert!(!runs_here(Architecture::Gguf("qwen3_vl_text")), "no GGUF mapping");
        assert!(runs_here(Architecture::Tag("gemma3")) && runs_here(Architecture::Tag("llama")));
        assert!(!runs_here(Architecture::Tag("text-generation")));
    }
}
