//! What the runtime needs from a model's vision and audio towers. A model family plugs its
//! towers in through a thin adapter; the runtime does the rest (prompt expansion, the encoder
//! cache, splicing tower outputs into the prompt's embeddings).

use mlx_rs::Array;

use crate::error::Result;
use crate::model::families::gemma4::processor::{AudioInput, ImageInput, MediaTokens, ProcessorConfig};

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
