//! The default model against transformers (float32 on the GGUF's dequantized weights):
//! first-step logits (max abs difference 4e-5 measured; 1e-3 allowed) and 32 greedy tokens for
//! four fixed chats. Fixtures come from
//! tests/reference/make_smollm2_reference.py.

use std::path::PathBuf;

use confab_engine::model::{self, LoadOptions};
use confab_engine::npy;
use confab_paths::{AppPaths, DefaultModel};
use mlx_rs::{ops, Array};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures")
}

fn greedy(model: &model::LoadedCheckpoint, prompt: &[u32], steps: usize) -> (Vec<u32>, Vec<f32>) {
    let mut state = model.model.new_state();
    let ids: Vec<i32> = prompt.iter().map(|&t| t as i32).collect();
    let mut logits = model.model.logits(&Array::from_slice(&ids, &[1, ids.len() as i32]), &mut state).unwrap();
    let first = logits.as_slice::<f32>().to_vec();
    let mut out = vec![];
    for _ in 0..steps {
        let next = ops::indexing::argmax_axis(&logits, -1, None).unwrap().item_cast::<u32>();
        out.push(next);
        logits = model.model.logits(&Array::from_slice(&[next as i32], &[1, 1]), &mut state).unwrap();
    }
    (out, first)
}

#[test]
fn smollm2_matches_transformers() {
    let path = DefaultModel::manifest().path(&AppPaths::from_env());
    let model = model::load(&path, &LoadOptions::default()).unwrap();
    let reference: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("smollm2_greedy.json")).unwrap()).unwrap();
    let want_logits = npy::read_f32(&fixtures().join("smollm2_logits.npy")).unwrap();

    for (i, chat) in reference["chats"].as_array().unwrap().iter().enumerate() {
        let ids = |k: &str| chat[k].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect::<Vec<_>>();
        let (got, first_logits) = greedy(&model, &ids("prompt_ids"), 32);
        assert_eq!(got, ids("greedy_ids"), "chat {i}: greedy ids differ from transformers");
        if i == 0 {
            // float32 both sides, same dequantized weights: differences are summation order only.
            let max_diff = first_logits.iter().zip(&want_logits).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
            assert_eq!(first_logits.len(), want_logits.len());
            assert!(max_diff < 1e-3, "first-step logits differ by up to {max_diff}");
        }
    }
}
