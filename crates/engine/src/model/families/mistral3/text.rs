//! Mistral 3's text model: the Llama family's decoder (`text_config` is a `mistral` config, or
//! Ministral 3's `ministral3`: YaRN and queries scaled by position, both read from its rope
//! parameters into the shared config) read from the checkpoint's `language_model.*`, taking
//! input embeddings with the Pixtral tower's rows spliced in at the `[IMG]` positions.

use mlx_rs::Array;
use serde_json::Value;

use crate::error::{EngineError, Result};
use crate::model::config::TextConfig;
use crate::model::families::llama::{build_llama, Llama};
use crate::model::weights::Weights;
use crate::model::{Accepts, BuildOptions, Compute, Input, Output, Rows, TextModel};

use super::config::Mistral3Args;

/// The tower's and the projector's tensors, which the encoder reads.
const NOT_TEXT: &[&str] = &["vision_tower.", "model.vision_tower.", "multi_modal_projector.", "model.multi_modal_projector."];

/// The text model types a Mistral 3 checkpoint may hold.
const TEXT_TYPES: &[&str] = &["mistral", "ministral3"];

pub struct Mistral3Text {
    llama: Llama,
    image_token_id: u32,
}

pub fn build(config: &TextConfig, raw: Option<&Value>, w: &mut Weights, opts: &BuildOptions) -> Result<Box<dyn TextModel>> {
    let source = w.source().to_path_buf();
    let raw = raw.ok_or_else(|| EngineError::ModelFormat {
        path: source.clone(),
        reason: "mistral3 loads from a Hugging Face folder (config.json and *.safetensors)".into(),
    })?;
    let text_type = raw.get("text_config").and_then(|t| t.get("model_type")).and_then(Value::as_str).unwrap_or("mistral");
    if !TEXT_TYPES.contains(&text_type) {
        return Err(EngineError::ModelFormat {
            path: source.join("config.json"),
            reason: format!("a mistral3 text model of type `{text_type}` is not supported ({})", TEXT_TYPES.join(", ")),
        });
    }
    let args = Mistral3Args::from_json(raw, &source.join("config.json"))?;
    w.drop_prefixed(NOT_TEXT);
    Ok(Box::new(Mistral3Text { llama: build_llama(config, w, opts, |_| true)?, image_token_id: args.image_token_id }))
}

/// The Llama's pass, taking media: the image rows attend causally like text (transformers'
/// Mistral 3 masks them so too).
impl TextModel for Mistral3Text {
    fn config(&self) -> &TextConfig {
        self.llama.config()
    }

    fn arrays(&self) -> Vec<&Array> {
        self.llama.arrays()
    }

    /// The Llama's, but for whole sequences (an embedding model's): not asked of this one.
    fn accepts(&self) -> Accepts {
        Accepts { whole_sequences: false, media_pad_id: Some(self.image_token_id), ..self.llama.accepts() }
    }

    fn forward(&self, input: Input, rows: Rows, compute: Compute) -> Result<Output> {
        self.llama.forward(input, rows, compute)
    }

    fn embed(&self, tokens: &Array) -> Result<Array> {
        self.llama.embed_tokens(tokens)
    }
}
