//! Qwen3.5 (`qwen3_5`, `qwen3_5_moe`) and Qwen3-Next (`qwen3_next`): hybrid models whose layers
//! are mostly Gated DeltaNet linear attention (a short causal convolution, then the gated delta
//! rule over a fixed-size recurrent state), with a gated softmax-attention layer every few
//! (`layer_types`, or every `full_attention_interval`-th).
//!
//! - Linear-attention layers keep [`StateKind::Recurrent`](crate::state::StateKind) state (the
//!   convolution's last inputs and the delta rule's matrix); prefill runs the rule chunked with
//!   matmuls, decode one step at a time.
//! - Attention layers: q_proj also yields a per-head output gate (`sigmoid(gate)` scales the
//!   attention output), per-head q/k norms, RoPE on the first `partial_rotary_factor` of each
//!   head (Qwen3.5's mRoPE is plain 1-D RoPE for text).
//! - Feed-forward: a dense gated MLP (`qwen3_5`), or routed experts plus a sigmoid-gated shared
//!   expert (`qwen3_5_moe` every layer; `qwen3_next` where `decoder_sparse_step` and
//!   `mlp_only_layers` say).
//! - Norms are zero-centred (`1 + weight`) in Hugging Face checkpoints; mlx-lm's conversions
//!   store them shifted (and the convolution as [C, K, 1]), which is how the two layouts are told
//!   apart. The DeltaNet output norm multiplies by its weight as it is in both.
//!
//! Vision-language checkpoints (a `vision_config`) read images through Qwen3-VL's tower and
//! processor (the same ones, without deepstack: `families::qwen3_vl`), with multimodal RoPE on
//! the attention layers' rotated channels; the text model drops the tower's tensors, and any
//! other tensor it does not use is a load error.
//!
//! Checkpoints that carry the multi-token-prediction head (`mtp.*`: an fc over [norm(embedding of
//! the next token); norm(final hidden state)], full-attention decoder layers with keys and values
//! of their own, a final norm, the shared output head) load it (`mtp`); speculative decoding
//! drafts with it.

mod attention;
mod block;
mod config;
mod delta_net;
mod moe;
mod mtp;
mod text;

use crate::model::config::ConfigDefaults;
use crate::model::family::Family;

pub use config::{Mixer, Qwen35Args, TextKeys, Variant};
pub use text::{build, Qwen35};

pub const FAMILY: Family = Family {
    // A vision-language config's text `model_type` is the `_text` one; text-only folders
    // (`Qwen3_5ForCausalLM`) carry it at the top level.
    model_types: &["qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text", "qwen3_next"],
    denoising: false,
    defaults: |_| ConfigDefaults::default(),
    build,
    encoder: Some(load_encoder),
};

/// Qwen3.5's vision tower is Qwen3-VL's (without deepstack), behind the same processor.
fn load_encoder(dir: &std::path::Path, dtype: mlx_rs::Dtype) -> crate::error::Result<Option<Box<dyn crate::model::MediaProcessor>>> {
    Ok(crate::model::families::qwen3_vl::Qwen3VlEncoder::load(dir, dtype)?.map(|e| Box::new(e) as Box<dyn crate::model::MediaProcessor>))
}
