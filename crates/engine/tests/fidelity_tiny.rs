//! Every supported architecture against its reference implementation, on tiny random
//! checkpoints made by tests/reference/make_tiny_models.py: transformers (float32, eager) for
//! the Hugging Face folders in both config dialects, mlx-lm for the 4-bit MLX folders.
//! Checked through the public engine API: first-step logits within tolerance, 32 greedy ids
//! identical, and the chat template's token ids identical.

use std::path::PathBuf;

use confab_engine::model::LoadOptions;
use confab_engine::npy;
use confab_engine::runtime::{Engine, EngineOptions, Event, Prompt, Request};
use confab_engine::sample::SamplingParams;
use confab_engine::text::ChatMessage;
use serde_json::Value;

/// float32 on both sides; what differs is summation order (and, for 4-bit, dequantize-then-
/// matmul here against mlx-lm's quantized matmul).
const LOGIT_TOLERANCE: f32 = 1e-4;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny").join(name)
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

fn check(name: &str) {
    let dir = fixture(name);
    let reference: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("reference.json")).unwrap()).unwrap();
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, info) = engine.load(&dir, LoadOptions::default(), |_| {}).unwrap();
    assert_eq!(info.vocab_size, reference["first_logits"].as_array().unwrap().len(), "{name}: vocab");

    let logits_file = std::env::temp_dir().join(format!("confab-fidelity-{name}-{}.npy", std::process::id()));
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = reference["steps"].as_u64().unwrap() as u32;
    let mut request = Request::new(model, Prompt::Tokens(ids(&reference["prompt_ids"])), sampling);
    request.ignore_eos = true;
    request.logits_path = Some(logits_file.clone());
    request.chunk_size = 16; // several prefill chunks, crossing gemma3's 8-token window
    let mut got = vec![];
    for event in engine.generate(request) {
        match event {
            Event::Token { id, .. } => got.push(id),
            Event::Error(e) => panic!("{name}: {e}"),
            _ => {}
        }
    }
    assert_eq!(got, ids(&reference["greedy_ids"]), "{name}: greedy ids");

    let logits = npy::read_f32(&logits_file).unwrap();
    std::fs::remove_file(&logits_file).ok();
    let want: Vec<f32> = reference["first_logits"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
    let max_diff = logits.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    assert!(max_diff < LOGIT_TOLERANCE, "{name}: first-step logits differ by up to {max_diff}");

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
