//! Every supported architecture against its reference implementation, on tiny random
//! checkpoints made by tests/reference/make_tiny_models.py: transformers (float32, eager) for
//! the Hugging Face folders in both config dialects, mlx-lm for the 4-bit MLX folders.
//! Checked through the public engine API: first-step logits within tolerance, 32 greedy ids
//! identical, and the chat template's token ids identical.

mod common;

use common::check_fixture;

/// float32 on both sides; what differs is summation order (and, for 4-bit, dequantize-then-
/// matmul here against mlx-lm's quantized matmul).
const LOGIT_TOLERANCE: f32 = 1e-4;

#[test]
fn llama_with_llama3_rope_scaling() {
    check_fixture("llama", LOGIT_TOLERANCE);
}

#[test]
fn llama_transformers4_config() {
    check_fixture("llama_v4", LOGIT_TOLERANCE);
}

#[test]
fn qwen2_with_qkv_biases() {
    check_fixture("qwen2", LOGIT_TOLERANCE);
}

#[test]
fn qwen3_with_qk_norms() {
    check_fixture("qwen3", LOGIT_TOLERANCE);
}

#[test]
fn gemma3_sliding_and_global_layers() {
    check_fixture("gemma3", LOGIT_TOLERANCE);
}

#[test]
fn gemma3_transformers4_config() {
    check_fixture("gemma3_v4", LOGIT_TOLERANCE);
}

#[test]
fn llama_mlx_4bit_against_mlx_lm() {
    check_fixture("llama_mlx4", LOGIT_TOLERANCE);
}

#[test]
fn qwen3_mlx_4bit_against_mlx_lm() {
    check_fixture("qwen3_mlx4", LOGIT_TOLERANCE);
}
