//! LFM2 (`lfm2`): a hybrid of gated short-convolution layers and grouped-query attention layers
//! (`layer_types`, or transformers 4's `full_attn_idxs`), each followed by a SwiGLU feed-forward.
//!
//! - Convolution layers project to B, C and x, convolve B·x along the sequence per channel over
//!   the last `conv_L_cache` positions, and gate the result by C. They keep
//!   [`StateKind::Convolution`](crate::state::StateKind) state (their last `conv_L_cache - 1`
//!   inputs), which cannot be trimmed: prefix reuse resumes from checkpoints.
//! - Attention layers: per-head RMS norms on queries and keys, full RoPE, `out_proj`.
//! - The feed-forward width follows LFM2's rules (`block_auto_adjust_ff_dim`: two thirds of the
//!   configured width, times `block_ffn_dim_multiplier`, rounded up to `block_multiple_of`).
//! - Norms multiply by their weight as stored (Hugging Face and mlx-lm alike); the final norm is
//!   `embedding_norm`; embeddings are tied by default.

mod config;
mod short_conv;
mod text;

use crate::model::config::ConfigDefaults;
use crate::model::family::Family;

pub use text::{build, Lfm2};

pub const FAMILY: Family = Family {
    model_types: &["lfm2"],
    denoising: false,
    // transformers' Lfm2Config: `default_theta` 1e6, tied embeddings.
    defaults: |_| ConfigDefaults { rope_theta: 1_000_000.0, tie_word_embeddings: true, ..ConfigDefaults::default() },
    build,
    encoder: None,
};
