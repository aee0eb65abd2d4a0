//! Which code builds which `model_type`.

use crate::error::Result;
use crate::model::config::TextConfig;
use crate::model::weights::Weights;
use crate::model::{families, BuildOptions, TextModel};

pub type BuildFn = fn(&TextConfig, &mut Weights, &BuildOptions) -> Result<Box<dyn TextModel>>;

pub const ARCHITECTURES: &[(&str, BuildFn)] = &[
    ("llama", families::llama::build),
    ("mistral", families::llama::build),
    ("qwen2", families::llama::build),
    ("qwen3", families::llama::build),
    ("gemma3_text", families::gemma3::build),
    ("gemma4_text", families::gemma4::build),
];

pub fn builder(model_type: &str) -> Option<BuildFn> {
    ARCHITECTURES.iter().find(|(name, _)| *name == model_type).map(|(_, build)| *build)
}

pub fn supported() -> String {
    ARCHITECTURES.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
}
