//! Media encoders ("towers"): from a processor's tensors (image patches, log-mel frames) to
//! soft tokens in the text model's hidden size, ready to splice into `TextModel::embed`'s
//! output at the placeholder positions (`EmbeddingsInput`).

pub mod gemma4;
pub mod load;

pub use gemma4::Gemma4Towers;
