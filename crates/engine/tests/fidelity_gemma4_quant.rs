//! Gemma 4 in MLX's quantized layout, as mlx-community publishes it, against mlx-lm 0.32.2 run
//! on the same folders (tests/reference/make_gemma4_mlx4.py):
//! - `gemma4_mlx4`: the multimodal tiny checkpoint converted by mlx_lm.convert, 4-bit groups of
//!   32 (names `language_model.model.*`, towers dropped, quantized embedding as the tied head);
//! - `gemma4_mlx4_mixed`: per-layer overrides in config.json (8-bit embedding and layer-1 MLP,
//!   an unquantized o_proj);
//! - `gemma4_moe_mlx4`: the text-only MoE checkpoint, experts as quantized `switch_glu`
//!   projections, 8-bit routers;
//! - `gemma4_ple_mlx4`: a text-only gemma4_text (mlx-lm random init) whose per-layer-input
//!   embedding table is quantized too (the tiny gemma4's 80-wide table fits no MLX group size).
//!
//! Each through the public engine API, twice: dtype auto on the CPU (dequantized at load) and
//! kept quantized (a zero dequantize budget: MLX's quantized matmul, as mlx-lm runs it).
//! First-step logits within tolerance, 16 greedy ids identical, prefilled in chunks of 16.

use std::path::PathBuf;

use confab_engine::model::LoadOptions;
use confab_engine::npy;
use confab_engine::runtime::{Engine, EngineOptions, Event, Prompt, Request};
use confab_engine::sample::SamplingParams;
use serde_json::Value;

/// float32 activations and float32 scales on both sides; what differs is summation order and,
/// on the dequantized path, dequantize-then-matmul against mlx-lm's quantized matmul.
/// Observed: at most 2.2e-5 over the eight runs; the logits span about ±20 (soft-capped at 30).
const LOGIT_TOLERANCE: f32 = 1e-4;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny").join(name)
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

fn check(name: &str, keep_quantized: bool) {
    let dir = fixture(name);
    let reference: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("reference.json")).unwrap()).unwrap();
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let options = LoadOptions { dequantize_budget: keep_quantized.then_some(0), ..LoadOptions::default() };
    let (model, info) = engine.load(&dir, options, |_| {}).unwrap();
    assert_eq!(info.quantized, keep_quantized, "{name}: kept quantized");
    assert_eq!(info.dtype, "float32", "{name}: dtype");
    assert!(!info.vision && !info.audio, "{name}: mlx-lm drops the towers");
    assert_eq!(info.vocab_size, reference["first_logits"].as_array().unwrap().len(), "{name}: vocab");

    let tag = if keep_quantized { "q" } else { "dq" };
    let logits_file = std::env::temp_dir().join(format!("confab-fidelity-{name}-{tag}-{}.npy", std::process::id()));
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = reference["steps"].as_u64().unwrap() as u32;
    let mut request = Request::new(model, Prompt::Tokens(ids(&reference["prompt_ids"])), sampling);
    request.ignore_eos = true;
    request.logits_path = Some(logits_file.clone());
    request.chunk_size = 16;
    let mut got = vec![];
    for event in engine.generate(request) {
        match event {
            Event::Token { id, .. } => got.push(id),
            Event::Error(e) => panic!("{name}: {e}"),
            _ => {}
        }
    }
    let logits = npy::read_f32(&logits_file).unwrap();
    std::fs::remove_file(&logits_file).ok();
    let want: Vec<f32> = reference["first_logits"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
    assert_eq!(logits.len(), want.len());
    let diff = logits.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    eprintln!("{name} ({tag}): first-step logits max abs diff {diff:e}");
    assert!(diff < LOGIT_TOLERANCE, "{name} ({tag}): first-step logits differ by up to {diff}");
    assert_eq!(got, ids(&reference["greedy_ids"]), "{name} ({tag}): greedy ids");
}

#[test]
fn gemma4_mlx_4bit_dequantized() {
    check("gemma4_mlx4", false);
}

#[test]
fn gemma4_mlx_4bit_kept_quantized() {
    check("gemma4_mlx4", true);
}

#[test]
fn gemma4_mlx_per_layer_overrides_dequantized() {
    check("gemma4_mlx4_mixed", false);
}

#[test]
fn gemma4_mlx_per_layer_overrides_kept_quantized() {
    check("gemma4_mlx4_mixed", true);
}

#[test]
fn gemma4_moe_mlx_4bit_dequantized() {
    check("gemma4_moe_mlx4", false);
}

#[test]
fn gemma4_moe_mlx_4bit_kept_quantized() {
    check("gemma4_moe_mlx4", true);
}

#[test]
fn gemma4_quantized_per_layer_input_table_dequantized() {
    check("gemma4_ple_mlx4", false);
}

#[test]
fn gemma4_quantized_per_layer_input_table_kept_quantized() {
    check("gemma4_ple_mlx4", true);
}
