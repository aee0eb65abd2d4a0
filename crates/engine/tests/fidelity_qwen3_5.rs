//! Qwen3.5 (dense and MoE) and Qwen3-Next against their references, on the tiny checkpoints
//! made by tests/reference/make_qwen3_5.py: transformers 5.24 (float32, eager; chunked gated
//! delta rule for the prefill, the recurrent one for decode) for the Hugging Face folders,
//! mlx-lm for the 4-bit MLX folder. Prefilled in chunks of 16, so the recurrent state and the
//! convolution's inputs carry across calls. Plus the load errors particular to this family.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{check_fixture, copy_of_fixture, fixture, load_error};
use confab_engine::model::{Compute, Input, LoadOptions, Positions, Rows};
use confab_engine::runtime::{Engine, EngineOptions, Event, Prompt, Request};
use confab_engine::sample::SamplingParams;
use confab_engine::EngineError;
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::Array;

const LOGIT_TOLERANCE: f32 = 1e-4;

#[test]
fn qwen3_5_dense_with_vision_tower_in_the_checkpoint() {
    check_fixture("qwen3_5", LOGIT_TOLERANCE);
}

#[test]
fn qwen3_5_moe_with_fused_experts() {
    check_fixture("qwen3_5_moe", LOGIT_TOLERANCE);
}

#[test]
fn qwen3_next_grouped_projections_and_per_expert_weights() {
    check_fixture("qwen3_next", LOGIT_TOLERANCE);
}

#[test]
fn qwen3_5_mlx_4bit_against_mlx_lm() {
    check_fixture("qwen3_5_mlx4", LOGIT_TOLERANCE);
}

/// The whole 40-token prompt in one call: one 40-position delta-rule chunk, and 80 (token,
/// expert) pairs, enough for the experts to run sorted by expert.
#[test]
fn whole_prompt_in_one_chunk() {
    for name in ["qwen3_5_moe", "qwen3_next", "qwen3_5"] {
        let dir = fixture(name);
        let reference = common::json(&dir.join("reference.json"));
        let engine = Engine::start(EngineOptions::default()).unwrap();
        let (model, _) = engine.load(&dir, LoadOptions::default(), |_| {}).unwrap();
        let logits = std::env::temp_dir().join(format!("confab-qwen3_5-one-chunk-{name}-{}.npy", std::process::id()));
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
                Event::Error(e) => panic!("{name}: {e}"),
                _ => None,
            })
            .collect();
        let run = common::GreedyRun { ids, first_logits: confab_engine::npy::read_f32(&logits).unwrap() };
        std::fs::remove_file(&logits).ok();
        common::assert_matches(&run, &reference, LOGIT_TOLERANCE, &format!("{name} (one chunk)"));
    }
}

fn assert_says(err: &EngineError, words: &[&str]) {
    let message = err.to_string();
    for w in words {
        assert!(message.contains(w), "`{message}` should mention `{w}`");
    }
}

/// Rewrites model.safetensors after `edit` changes its tensors (by checkpoint name).
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
fn missing_linear_attention_tensor_is_named() {
    let dir = copy_of_fixture("qwen3_5");
    edit_weights(dir.path(), |t| {
        t.remove("model.language_model.layers.1.linear_attn.A_log").unwrap();
    });
    let err = load_error(dir.path());
    assert!(matches!(err, EngineError::CorruptWeights { .. }), "{err:?}");
    assert_says(&err, &["model.layers.1.linear_attn.A_log", "missing"]);
}

/// Sliding windows are another family's layer type; `mamba` nobody's.
#[test]
fn unknown_layer_type_is_named() {
    for kind in ["sliding_attention", "mamba"] {
        let dir = copy_of_fixture("qwen3_5");
        edit_config(dir.path(), |c| c["text_config"]["layer_types"][2] = kind.into());
        let err = load_error(dir.path());
        assert!(matches!(err, EngineError::ModelFormat { .. }), "{err:?}");
        assert_says(&err, &[kind, "layer_types"]);
    }
}

#[test]
fn conv_kernel_size_mismatch_says_both() {
    for name in ["qwen3_next", "qwen3_5_mlx4"] {
        let dir = copy_of_fixture(name);
        edit_config(dir.path(), |c| {
            let text = if c.get("text_config").is_some() { &mut c["text_config"] } else { c };
            text["linear_conv_kernel_dim"] = 3.into();
        });
        let err = load_error(dir.path());
        assert!(matches!(err, EngineError::CorruptWeights { .. }), "{name}: {err:?}");
        assert_says(&err, &["conv1d", "kernel size 4", "linear_conv_kernel_dim is 3"]);
    }
}

/// The vision tower is dropped on purpose; any other tensor the model does not use is an error.
#[test]
fn leftover_tensor_is_named() {
    let dir = copy_of_fixture("qwen3_5");
    edit_weights(dir.path(), |t| {
        let norm = t["model.language_model.norm.weight"].clone();
        t.insert("model.language_model.extra_norm.weight".into(), norm);
    });
    let err = load_error(dir.path());
    assert!(matches!(err, EngineError::CorruptWeights { .. }), "{err:?}");
    assert_says(&err, &["model.extra_norm.weight", "not part of"]);
}

/// |ours - mlx-vlm's| allowed on the multi-token-prediction head's logits (float32 both; the
/// head reads the model's hidden states, which already differ by about 1e-6).
const MTP_TOLERANCE: f32 = 1e-4;

fn max_difference(ours: &Array, reference: &serde_json::Value) -> f32 {
    let want: Vec<f32> =
        reference.as_array().unwrap().iter().flat_map(|r| r.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32)).collect();
    let ours = ours.as_dtype(mlx_rs::Dtype::Float32).unwrap();
    let got = ours.as_slice::<f32>();
    assert_eq!(got.len(), want.len(), "logits of another shape");
    got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max)
}

fn argmax(logits: &Array) -> u32 {
    mlx_rs::ops::indexing::argmax_axis(logits, -1, None).unwrap().as_dtype(mlx_rs::Dtype::Uint32).unwrap().as_slice::<u32>()[0]
}

/// Qwen3.5's multi-token-prediction head (dense and MoE) against mlx-vlm 0.7.10's
/// `Qwen3_5MTPDraftModel` on the tiny checkpoints with `mtp.*` weights that
/// tests/reference/make_qwen3_5_mtp.py makes: at every prompt position (the model's final hidden
/// state there and the next token, the model's greedy token after the last), then four drafts
/// each fed the head's own output. Its two input norms carry different random weights, so
/// swapping them (or the halves of the concatenation) moves the logits by far more than the
/// tolerance (checked once by swapping them in `MtpHead::forward`: 5.65 off).
#[test]
fn mtp_head_matches_mlx_vlm() {
    for name in ["qwen3_5_mtp", "qwen3_5_moe_mtp"] {
        let dir = fixture(name);
        let reference = common::json(&dir.join("mtp_reference.json"));
        let loaded = confab_engine::model::load(&dir, &LoadOptions::default()).unwrap();
        let m = loaded.model.as_ref();
        let head = m.mtp().unwrap_or_else(|| panic!("{name}: the head is loaded"));
        let prompt: Vec<i32> = common::ids(&reference["prompt_ids"]).iter().map(|&t| t as i32).collect();
        let n = prompt.len() as i32;
        let mut state = m.new_state();
        let tokens = Array::from_slice(&prompt, &[1, n]);
        let out = m.forward(Input::Tokens(&tokens), Rows::One(&mut state), Compute::LogitsAndHidden(Positions::Last)).unwrap();
        let (logits, hidden) = out.into_logits_and_hidden().unwrap();
        let bonus = argmax(&logits);
        assert_eq!(bonus as u64, reference["bonus"].as_u64().unwrap(), "{name}: the model's own next token");
        let shifted: Vec<i32> = prompt[1..].iter().copied().chain([bonus as i32]).collect();
        let mut head_state = head.mtp_state();
        let out = head.mtp_forward(&Array::from_slice(&shifted, &[1, n]), &hidden, &mut head_state).unwrap();
        let prefill = head.mtp_logits(&out).unwrap();
        let off = max_difference(&prefill, &reference["prefill_logits"]);
        eprintln!("{name}: prefill logits within {off:e}");
        assert!(off <= MTP_TOLERANCE, "{name}: the head's logits at the prompt's positions are {off} off");
        let mut token = argmax(&prefill.index((.., -1, ..)));
        assert_eq!(token as u64, reference["first_draft"].as_u64().unwrap(), "{name}: first draft");
        let mut h = out.index((.., -1.., ..));
        for (k, want) in reference["draft_ids"].as_array().unwrap().iter().enumerate() {
            h = head.mtp_forward(&Array::from_slice(&[token as i32], &[1, 1]), &h, &mut head_state).unwrap();
            let logits = head.mtp_logits(&h).unwrap();
            let off = max_difference(&logits, &serde_json::json!([reference["draft_logits"][k]]));
            assert!(off <= MTP_TOLERANCE, "{name}: draft {k}'s logits are {off} off");
            token = argmax(&logits.reshape(&[1, -1]).unwrap());
            assert_eq!(token as u64, want.as_u64().unwrap(), "{name}: draft {k}");
        }
        assert_eq!(head_state.len(), prompt.len() + 4);
    }
}

/// A checkpoint without the head loads without it; one with part of it names what is missing.
#[test]
fn mtp_head_is_optional_and_a_missing_tensor_is_named() {
    let loaded = confab_engine::model::load(&fixture("qwen3_5"), &LoadOptions::default()).unwrap();
    assert!(loaded.model.mtp().is_none());
    let dir = copy_of_fixture("qwen3_5_mtp");
    edit_weights(dir.path(), |t| {
        t.remove("mtp.layers.0.self_attn.k_proj.weight").unwrap();
    });
    let err = load_error(dir.path());
    assert!(matches!(err, EngineError::CorruptWeights { .. }), "{err:?}");
    assert_says(&err, &["mtp.layers.0.self_attn.k_proj", "missing"]);
}
