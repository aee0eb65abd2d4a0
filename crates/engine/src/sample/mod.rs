//! Samplers and logits processors: from one step's logits to the next token.
//!
//! [`SamplingParams`] is what a request asks for.

mod params;

pub use params::SamplingParams;
