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
use crate::model::{BuildOptions, EmbeddingsInput, TextModel};
use crate::state::SequenceState;

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

impl TextModel for Mistral3Text {
    fn config(&self) -> &TextConfig {
        self.llama.config()
    }

    fn forward(&self, tokens: &Array, state: &mut SequenceState) -> Result<Array> {
        self.llama.forward(tokens, state)
    }

    fn arrays(&self) -> Vec<&Array> {
        self.llama.arrays()
    }

    fn scores_every_position(&self) -> bool {
        self.llama.scores_every_position()
    }

    fn forward_every(&self, tokens: &Array, state: &mut SequenceState) -> Result<Array> {
        self.llama.forward_every(tokens, state)
    }

    fn batches(&self) -> bool {
        self.llama.batches()
    }

    fn forward_batch(&self, tokens: &Array, states: &mut [&mut SequenceState]) -> Result<Array> {
        self.llama.forward_batch(tokens, states)
    }

    fn forward_batch_every(&self, tokens: &Array, states: &mut [&mut SequenceState]) -> Result<Array> {
        self.llama.forward_batch_every(tokens, states)
    }

    fn embed(&self, tokens: &Array) -> Result<Array> {
        self.llama.embed_tokens(tokens)
    }

    /// The image rows attend causally like text (transformers' Mistral 3 masks them so too).
    fn forward_embeddings(&self, input: EmbeddingsInput, state: &mut SequenceState) -> Result<Array> {
        self.llama.forward_hidden(input.embeds, state)
    }

    fn media_pad_id(&self) -> Option<u32> {
        Some(self.image_token_id)
    }
}
