//! LFM2 (gated short-convolution layers beside attention layers) against transformers 5.25's
//! Lfm2ForCausalLM (torch, eager, float32) on the tiny random checkpoints made by
//! tests/reference/make_lfm2.py, in transformers 5's config dialect and in the one LiquidAI's
//! released checkpoints carry, and as llama.cpp writes it to GGUF. Prefilled in chunks of 16, so the convolution windows carry
//! across calls; also with the whole prompt in one call. Plus the load errors particular to
//! the family.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{check_fixture, copy_of_fixture, fixture, load_error};
use confab_engine::model::LoadOptions;
use confab_engine::runtime::{Engine, EngineOptions, Event, Prompt, Request};
use confab_engine::sample::SamplingParams;
use confab_engine::EngineError;
use mlx_rs::Array;

/// float32 on both sides; what differs is summation order.
const LOGIT_TOLERANCE: f32 = 1e-4;

#[test]
fn lfm2_against_transformers() {
    check_fixture("lfm2", LOGIT_TOLERANCE);
}

/// `block_ff_dim`, `full_attn_idxs` without `layer_types`, `norm_eps`, flat `rope_theta`.
#[test]
fn lfm2_in_the_released_config_dialect() {
    check_fixture("lfm2_v4", LOGIT_TOLERANCE);
}

/// The same weights as llama.cpp writes LFM2 (per-layer KV heads, `shortconv` tensors, the
/// conv weight as [C, K]): the safetensors reference's logits and ids, and its chat ids from
/// the GGUF's template.
#[test]
fn lfm2_gguf_gives_the_safetensors_reference() {
    let reference = common::json(&fixture("lfm2").join("reference.json"));
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, info) = engine.load(fixture("lfm2_gguf").join("lfm2.gguf"), LoadOptions::default(), |_| {}).unwrap();
    assert_eq!(info.vocab_size, 384);
    let run = common::greedy_run(&engine, model, &reference, "lfm2_gguf");
    common::assert_matches(&run, &reference, LOGIT_TOLERANCE, "lfm2_gguf");
    let chat = &reference["chat"];
    let messages: Vec<confab_engine::text::ChatMessage> = serde_json::from_value(chat["messages"].clone()).unwrap();
    assert_eq!(engine.tokenize(model, Prompt::Chat(messages)).unwrap(), common::ids(&chat["ids"]), "lfm2_gguf: chat ids");
}

#[test]
fn whole_prompt_in_one_chunk() {
    let dir = fixture("lfm2");
    let reference = common::json(&dir.join("reference.json"));
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(&dir, LoadOptions::default(), |_| {}).unwrap();
    let logits = std::env::temp_dir().join(format!("confab-lfm2-one-chunk-{}.npy", std::process::id()));
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = reference["steps"].as_u64().unwrap() as u32;
    let mut request = Request::new(model, Prompt::Tokens(common::ids(&reference["prompt_ids"])), sampling);
    request.ignore_eos = true;
    request.logits_path = Some(logits.clone());
    request.chunk_size = 64;
    let ids: Vec<u32> = engine
        .generate(request)
        .filter_map(|event| match event {
            Event::Token { id, .. } => Some(id),
            Event::Error(e) => panic!("{e}"),
            _ => None,
        })
        .collect();
    let run = common::GreedyRun { ids, first_logits: confab_engine::npy::read_f32(&logits).unwrap() };
    std::fs::remove_file(&logits).ok();
    common::assert_matches(&run, &reference, LOGIT_TOLERANCE, "lfm2 (one chunk)");
}

fn assert_says(err: &EngineError, words: &[&str]) {
    let message = err.to_string();
    for w in words {
        assert!(message.contains(w), "`{message}` should mention `{w}`");
    }
}

fn edit_weights(dir: &Path, edit: impl Fn(&mut HashMap<String, Array>)) {
    let file = dir.join("model.safetensors");
    let mut tensors = Array::load_safetensors(&file).unwrap();
    edit(&mut tensors);
    std::fs::remove_file(&file).unwrap();
    Array::save_safetensors(tensors, None, &file).unwrap();
}

fn edit_config(dir: &Path, edit: impl Fn(&mut serde_json::Value)) {
    let path = dir.join("config.json");
    let mut config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut config);
    std::fs::write(&path, config.to_string()).unwrap();
}

#[test]
fn conv_window_size_mismatch_says_both() {
    let dir = copy_of_fixture("lfm2");
    edit_config(dir.path(), |c| c["conv_L_cache"] = 4.into());
    let err = load_error(dir.path());
    assert!(matches!(err, EngineError::CorruptWeights { .. }), "{err:?}");
    assert_says(&err, &["model.layers.0.conv.conv.weight", "kernel size 3", "conv_L_cache is 4"]);
}

#[test]
fn feed_forward_width_mismatch_names_the_rules() {
    let dir = copy_of_fixture("lfm2");
    edit_config(dir.path(), |c| c["block_ffn_dim_multiplier"] = 1.0.into());
    let err = load_error(dir.path());
    assert!(matches!(err, EngineError::CorruptWeights { .. }), "{err:?}");
    assert_says(&err, &["feed_forward.w1", "88 rows", "make 72", "block_ffn_dim_multiplier"]);
}

#[test]
fn missing_convolution_tensor_is_named() {
    let dir = copy_of_fixture("lfm2");
    edit_weights(dir.path(), |t| {
        t.remove("model.layers.2.conv.in_proj.weight").unwrap();
    });
    let err = load_error(dir.path());
    assert!(matches!(err, EngineError::CorruptWeights { .. }), "{err:?}");
    assert_says(&err, &["model.layers.2.conv.in_proj.weight", "missing"]);
}

/// Sliding and linear attention are other families' layer types; `mamba` nobody's.
#[test]
fn other_layer_types_are_named() {
    for kind in ["sliding_attention", "linear_attention", "mamba"] {
        let dir = copy_of_fixture("lfm2");
        edit_config(dir.path(), |c| c["layer_types"][3] = kind.into());
        let err = load_error(dir.path());
        assert!(matches!(err, EngineError::ModelFormat { .. }), "{kind}: {err:?}");
        assert_says(&err, &[kind, "layer_types"]);
    }
}
