//! The runtime's stages of a prompt with media, in order: `prompt` builds it (the template, the
//! processor's placeholders, the plan of what the encoder cache holds), `encode` runs the towers
//! on what it does not (`cache::encoder` keeps their outputs), and `prefill` reads the prompt
//! with the towers' outputs in place of the placeholders, in chunks.
//! Decoding comes before, in `confab-media`; the model's side is `model::media`.

pub mod encode;
pub mod prefill;
pub mod prompt;
