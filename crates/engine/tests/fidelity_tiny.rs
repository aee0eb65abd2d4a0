//! Every supported architecture against its reference implementation, on tiny random
//! checkpoints made by tests/reference/make_tiny_models.py: transformers (float32, eager) for
//! the Hugging Face folders in both config dialects, mlx-lm for the 4-bit MLX folders.
//! Checked through the public engine API: first-step logits within tolerance, 32 greedy ids
//! identical, and the chat template's token ids identical.

mod common;

use common::{assert_matches, fixture, greedy_run, ids, json};
use confab_engine::model::LoadOptions;
use confab_engine::runtime::{Engine, EngineOptions, Prompt};
use confab_engine::text::ChatMessage;

/// float32 on both sides; what differs is summation order (and, for 4-bit, dequantize-then-
/// matmul here against mlx-lm's quantized matmul).
const LOGIT_TOLERANCE: f32 = 1e-4;

fn check(name: &str) {
    let dir = fixture(name);
    let reference = json(&dir.join("reference.json"));
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, info) = engine.load(&dir, LoadOptions::default(), |_| {}).unwrap();
    assert_eq!(info.vocab_size, reference["first_logits"].as_array().unwrap().len(), "{name}: vocab");
    assert_matches(&greedy_run(&engine, model, &reference, name), &reference, LOGIT_TOLERANCE, name);

    let chat = &reference["chat"];
    let messages: Vec<ChatMessage> = serde_json::from_value(chat["messages"].clone()).unwrap();
    assert_eq!(engine.tokenize(model, Prompt::Chat(messages)).unwrap(), ids(&chat["ids"]), "{name}: chat template ids");
}

#[test]
fn llama_with_llama3_rope_scaling() {
    check("llama");
}

#[test]
fn llama_transformers4_config() {
    check("llama_v4");
}

#[test]
fn qwen2_with_qkv_biases() {
    check("qwen2");
}

#[test]
fn qwen3_with_qk_norms() {
    check("qwen3");
}

#[test]
fn gemma3_sliding_and_global_layers() {
    check("gemma3");
}

#[test]
fn gemma3_transformers4_config() {
    check("gemma3_v4");
}

#[test]
fn llama_mlx_4bit_against_mlx_lm() {
    check("llama_mlx4");
}

#[test]
fn qwen3_mlx_4bit_against_mlx_lm() {
    check("qwen3_mlx4");
}
