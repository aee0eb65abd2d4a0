//! SmolLM3 (NoPE layers, a thinking switch) against its reference on tiny random checkpoints
//! made by tests/reference/make_smollm3.py: mlx-lm's smollm3 in float32, itself held there to
//! transformers' SmolLM3ForCausalLM (torch, float32; within 2.1e-5, same ids) and to a NumPy
//! float64 transcription of it (within 1.5e-5, same ids).
//! Hugging Face folders with the default NoPE interval and with an explicit list, the same
//! weights as an F32 GGUF written as llama.cpp writes SmolLM3, the template's switches, and
//! configs that cannot run.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{assert_matches, check_fixture, fixture, greedy_run, ids, json};
use confab_engine::model::LoadOptions;
use confab_engine::runtime::{Engine, EngineOptions, Prompt};
use confab_engine::text::{ChatMessage, ChatOptions};
use serde_json::Value;

/// float32 on both sides; what differs is summation order.
const LOGIT_TOLERANCE: f32 = 1e-4;

/// Every chat case of a reference (its messages and template switches) gives transformers' ids.
fn check_chat_cases(engine: &Engine, model: confab_engine::runtime::ModelId, reference: &Value, tag: &str) {
    for case in reference["chat_cases"].as_array().unwrap() {
        let messages: Vec<ChatMessage> = serde_json::from_value(case["messages"].clone()).unwrap();
        let switches: BTreeMap<String, Value> = serde_json::from_value(case["switches"].clone()).unwrap();
        let options = ChatOptions { switches: switches.clone(), ..ChatOptions::default() };
        let got = engine.tokenize_chat(model, Prompt::Chat(messages), options).unwrap();
        assert_eq!(got, ids(&case["ids"]), "{tag}: chat ids with switches {switches:?}");
    }
}

#[test]
fn smollm3_with_the_default_nope_interval() {
    check_fixture("smollm3", LOGIT_TOLERANCE);
}

#[test]
fn smollm3_with_an_explicit_nope_list() {
    check_fixture("smollm3_nope", LOGIT_TOLERANCE);
}

#[test]
fn the_thinking_switch_is_detected_and_each_setting_renders_as_transformers_does() {
    let dir = fixture("smollm3");
    let reference = json(&dir.join("reference.json"));
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, info) = engine.load(&dir, LoadOptions::default(), |_| {}).unwrap();
    assert!(info.thinking_switch, "the template reads enable_thinking");
    check_chat_cases(&engine, model, &reference, "smollm3");
}

/// The same weights as llama.cpp writes SmolLM3 (permuted q/k rows, no NoPE key): the
/// safetensors reference's logits and ids, and the same chat ids from the GGUF's template.
#[test]
fn smollm3_gguf_gives_the_safetensors_reference() {
    let reference = json(&fixture("smollm3").join("reference.json"));
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, info) = engine.load(fixture("smollm3_gguf").join("smollm3.gguf"), LoadOptions::default(), |_| {}).unwrap();
    assert!(info.thinking_switch, "the GGUF's template reads enable_thinking");
    assert_matches(&greedy_run(&engine, model, &reference, "smollm3_gguf"), &reference, LOGIT_TOLERANCE, "smollm3_gguf");
    check_chat_cases(&engine, model, &reference, "smollm3_gguf");
}

/// The same file with the matrices in F16 (norms F32, as llama.cpp's f16 output): the logits
/// of those rounded weights (NumPy float64, reference_f16.json; they are up to 1e-2 from the F32
/// ones) within 1e-4, and the safetensors reference's greedy ids.
#[test]
fn smollm3_f16_gguf_gives_the_safetensors_greedy_ids() {
    let reference = json(&fixture("smollm3").join("reference.json"));
    let rounded = json(&fixture("smollm3_gguf").join("reference_f16.json"));
    assert_eq!(rounded["greedy_ids"], reference["greedy_ids"]);
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(fixture("smollm3_gguf").join("smollm3-f16.gguf"), LoadOptions::default(), |_| {}).unwrap();
    assert_matches(&greedy_run(&engine, model, &rounded, "smollm3_f16_gguf"), &rounded, LOGIT_TOLERANCE, "smollm3_f16_gguf");
}

/// A copy of the `smollm3` fixture with config.json edited by `edit`.
fn with_config(edit: impl FnOnce(&mut Value)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture("smollm3")).unwrap().flatten() {
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    let path = dir.path().join("config.json");
    let mut config = json(&path);
    edit(&mut config);
    std::fs::write(&path, serde_json::to_string(&config).unwrap()).unwrap();
    dir
}

fn load_error(engine: &Engine, path: &Path) -> String {
    match engine.load(path, LoadOptions::default(), |_| {}) {
        Ok(_) => panic!("loading {} should fail", path.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn configs_smollm3_cannot_run_are_errors_that_say_what_to_fix() {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let short = with_config(|c| c["no_rope_layers"] = serde_json::json!([1, 0]));
    let message = load_error(&engine, short.path());
    assert!(message.contains("no_rope_layers lists 2 layers but num_hidden_layers is 5"), "{message}");

    let sliding = with_config(|c| {
        c["use_sliding_window"] = Value::Bool(true);
        c["sliding_window"] = serde_json::json!(8);
    });
    let message = load_error(&engine, sliding.path());
    assert!(message.contains("use_sliding_window"), "{message}");
}
