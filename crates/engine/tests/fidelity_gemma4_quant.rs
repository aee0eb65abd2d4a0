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
//! Each through the public engine API, twice: dtype auto (on the CPU the weights stay packed and
//! Confab's CPU kernel reads them) and dtype float32 (dequantized at load).
//! First-step logits within tolerance, 16 greedy ids identical, prefilled in chunks of 16.

mod common;

use common::{assert_matches, fixture, greedy_run, json};
use confab_engine::model::{DtypeChoice, LoadOptions};
use confab_engine::runtime::{Engine, EngineOptions};

/// float32 activations and float32 scales on both sides; what differs is summation order and,
/// dequantize-then-matmul (float32 path) or Confab's kernel against mlx-lm's quantized matmul.
/// Observed: at most 2.2e-5 over the eight runs; the logits span about ±20 (soft-capped at 30).
const LOGIT_TOLERANCE: f32 = 1e-4;

fn check(name: &str, keep_quantized: bool) {
    let dir = fixture(name);
    let reference = json(&dir.join("reference.json"));
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let dtype = if keep_quantized { DtypeChoice::Auto } else { DtypeChoice::Float32 };
    let options = LoadOptions { dtype, ..LoadOptions::default() };
    let (model, info) = engine.load(&dir, options, |_| {}).unwrap();
    assert_eq!(info.quantized, keep_quantized, "{name}: kept quantized");
    assert_eq!(info.dtype, "float32", "{name}: dtype");
    assert!(!info.vision && !info.audio, "{name}: mlx-lm drops the towers");
    assert_eq!(info.vocab_size, reference["first_logits"].as_array().unwrap().len(), "{name}: vocab");

    let tag = format!("{name} ({})", if keep_quantized { "quantized" } else { "dequantized" });
    assert_matches(&greedy_run(&engine, model, &reference, &tag), &reference, LOGIT_TOLERANCE, &tag);
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
