//! gpt-oss (`gpt_oss`): grouped-query attention with biases and per-head attention sinks,
//! layers alternating between a sliding window and full attention (`layer_types`, by default
//! sliding first), YaRN RoPE, and a mixture of experts in every layer.
//!
//! - Sinks: a learned logit per head joins each query's softmax as a key without a value
//!   (`Attention::sinks`); a checkpoint without them is refused, naming the tensor.
//! - Sliding layers keep a rotating window of `sliding_window` positions (including the
//!   query's own); full layers every key and value.
//! - The router is a linear layer with a bias; each token takes its top-k experts by logit and
//!   weighs them by a softmax over those k. The experts' gate and up projections are stored as
//!   one tensor with gate and up interleaved (transformers' `gate_up_proj` [E, H, 2I]), with
//!   biases; the activation is a clamped SwiGLU: `(clip(up, ±limit) + 1) · g · σ(α g)` with
//!   `g = min(gate, limit)`.

mod config;
mod moe;
mod text;

use crate::model::config::ConfigDefaults;
use crate::model::family::Family;

pub use text::{build, GptOss};

pub const FAMILY: Family = Family {
    model_types: &["gpt_oss"],
    denoising: false,
    // transformers' GptOssConfig: `default_theta` 1.5e5, untied embeddings, attention biases.
    defaults: |_| ConfigDefaults { rope_theta: 150_000.0, tie_word_embeddings: false, attention_bias: true, sliding_window_pattern: false },
    build,
    encoder: None,
};
