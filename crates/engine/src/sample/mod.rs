//! Samplers and logits processors: from one step's logits to the next token.
//!
//! [`SamplingParams`] is what a request asks for; [`Sampler`] holds one sequence's random state
//! and scratch buffers and picks each token.
//!
//! Order of operations, as in mlx-lm's processors and transformers' warpers: logit bias,
//! repetition penalty, presence penalty; then temperature, top-k, top-p, min-p; then a draw.
//!
//! Greedy decoding (temperature 0, or top-k 1) stays on the device: penalties and biases touch
//! only the few tokens involved (gathered, adjusted, scattered back), then MLX's argmax; only
//! the chosen id comes back to the host. Sampling copies the step's logits to the host once and
//! filters them there, into buffers the sampler reuses.
//!
//! Randomness: a SplitMix64 generator on the host, seeded from [`SamplingParams::seed`] and
//! advanced once per sampled token. It is simple, has no dependencies, and does not depend on
//! the MLX backend, so a seed gives the same tokens wherever the logits are the same.

mod params;
mod sampler;

pub use params::{SamplingChoices, SamplingParams};
pub use sampler::Sampler;
