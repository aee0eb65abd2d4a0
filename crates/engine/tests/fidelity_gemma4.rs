//! Gemma 4's text model against transformers 5.24 (float32, eager) on the tiny random
//! checkpoints of tests/reference/make_gemma4.py:
//! - `gemma4` (the multimodal checkpoint: sliding and full layers with different head sizes,
//!   keys as values, KV sharing, per-layer inputs, proportional partial RoPE, soft-capping) and
//!   `gemma4_moe` (text-only layout, routed experts): through the public engine API, first-step
//!   logits within tolerance and 16 greedy ids identical, prefilled in chunks of 16 that cross
//!   the 8-token window; and the chat template (chat_template.jinja) gives transformers' ids;
//! - the embeddings path (`forward_embeddings`) on the image + audio prompt, fed the reference's
//!   spliced embeddings: media rows from the towers, per-layer ids with media as pad, and the
//!   image's bidirectional block in sliding layers;
//! - media placeholder ids typed as text (a text-only prompt holding image, audio and video
//!   placeholder ids) and fed as a decode step read as the pad id, as transformers reads them
//!   (placeholder_reference.json, from make_gemma4_placeholders.py).

mod common;

use common::{assert_matches, check_fixture, fixture, floats, greedy_run, ids, json, max_diff};
use confab_engine::model::{self, Compute, EmbeddingsInput, Input, LoadOptions, Positions, Rows};
use confab_engine::npy;
use confab_engine::runtime::{Engine, EngineOptions};
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{Array, Dtype};

/// float32 on both sides; what differs is summation order. Logits here span about ±20
/// (soft-capped at 30).
const LOGIT_TOLERANCE: f32 = 1e-4;

#[test]
fn gemma4_text_only_prompt() {
    check_fixture("gemma4", LOGIT_TOLERANCE);
}

#[test]
fn gemma4_moe_text_only_prompt() {
    check_fixture("gemma4_moe", LOGIT_TOLERANCE);
}

fn argmax(logits: &Array) -> u32 {
    let v: Vec<f32> = logits.as_slice::<f32>().to_vec();
    v.iter().enumerate().fold((0, f32::MIN), |best, (i, &x)| if x > best.1 { (i, x) } else { best }).0 as u32
}

#[test]
fn gemma4_media_prompt_from_embeddings() {
    let dir = fixture("gemma4");
    let reference = json(&dir.join("media_reference.json"));
    let arrays = dir.join("media_reference");
    let loaded = model::load(&dir, &LoadOptions::default()).unwrap();
    let m = loaded.model.as_ref();
    let pad = m.accepts().media_pad_id.unwrap() as i32;

    let input_ids = Array::load_numpy(arrays.join("input_ids.npy")).unwrap().as_dtype(Dtype::Int32).unwrap();
    let types = Array::load_numpy(arrays.join("mm_token_type_ids.npy")).unwrap().as_dtype(Dtype::Int32).unwrap();
    let types: Vec<i32> = types.as_slice::<i32>().to_vec();
    let raw: Vec<i32> = input_ids.as_slice::<i32>().to_vec();
    // Media placeholders look up the pad id's per-layer embeddings; each run of image tokens is one block.
    let llm_ids: Vec<i32> = raw.iter().zip(&types).map(|(&id, &t)| if t != 0 { pad } else { id }).collect();
    let mut blocks = vec![-1; types.len()];
    let mut next = -1;
    for i in 0..types.len() {
        if types[i] == 1 || types[i] == 2 {
            if i == 0 || types[i - 1] != types[i] {
                next += 1;
            }
            blocks[i] = next;
        }
    }
    assert_eq!(blocks.iter().filter(|&&b| b == 0).count() as u64, reference["image_tokens"].as_u64().unwrap());
    let llm_ids = Array::from_slice(&llm_ids, &[1, llm_ids.len() as i32]);
    let embeds = Array::load_numpy(arrays.join("inputs_embeds.npy")).unwrap();

    // The text rows of the reference's spliced embeddings are the model's own `embed`.
    let own = m.embed(&llm_ids).unwrap();
    let text_rows: Vec<i32> = (0..types.len() as i32).filter(|&i| types[i as usize] == 0).collect();
    let text_rows = Array::from_slice(&text_rows, &[text_rows.len() as i32]);
    let a = own.take_axis(&text_rows, 1).unwrap();
    let b = embeds.take_axis(&text_rows, 1).unwrap();
    assert!(max_diff(a.as_slice::<f32>(), b.as_slice::<f32>()) < 1e-6, "embed");

    let mut state = m.new_state();
    let input = EmbeddingsInput { embeds: &embeds, ids: &llm_ids, media_blocks: Some(&blocks), positions: None, layer_additions: None };
    let logits =
        m.forward(Input::Embeddings(input), Rows::One(&mut state), Compute::Logits(Positions::Last)).unwrap().into_logits().unwrap();
    let want = npy::read_f32(&arrays.join("first_logits.npy")).unwrap();
    let diff = max_diff(logits.index((0, ..)).as_slice::<f32>(), &want);
    eprintln!("gemma4 media prompt: first-step logits max abs diff {diff:e}");
    assert!(diff < LOGIT_TOLERANCE, "media prompt: first-step logits differ by up to {diff}");

    let mut got = vec![argmax(&logits.index((0, ..)))];
    let steps = reference["steps"].as_u64().unwrap() as usize;
    while got.len() < steps {
        let token = Array::from_slice(&[*got.last().unwrap() as i32], &[1, 1]);
        let logits = m.logits(&token, &mut state).unwrap();
        got.push(argmax(&logits.index((0, ..))));
    }
    assert_eq!(got, ids(&reference["greedy_ids"]), "media prompt: greedy ids");
}

#[test]
fn gemma4_placeholder_ids_in_a_text_prompt_and_a_decode_step_read_as_pad() {
    let dir = fixture("gemma4");
    let reference = json(&dir.join("placeholder_reference.json"));

    // Through the runtime: prefilled in chunks of 16, then 16 greedy steps.
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (id, _) = engine.load(&dir, LoadOptions::default(), |_| {}).unwrap();
    assert_matches(&greedy_run(&engine, id, &reference, "gemma4 placeholders"), &reference, LOGIT_TOLERANCE, "gemma4 placeholders");

    // A decode step that is a placeholder id.
    let loaded = model::load(&dir, &LoadOptions::default()).unwrap();
    let m = loaded.model.as_ref();
    let prompt: Vec<i32> = ids(&reference["prompt_ids"]).iter().map(|&x| x as i32).collect();
    let mut state = m.new_state();
    m.logits(&Array::from_slice(&prompt, &[1, prompt.len() as i32]), &mut state).unwrap();
    let decode_id = reference["decode_id"].as_u64().unwrap() as i32;
    let logits = m.logits(&Array::from_slice(&[decode_id], &[1, 1]), &mut state).unwrap();
    let diff = max_diff(logits.index((0, ..)).as_slice::<f32>(), &floats(&reference["decode_logits"]));
    eprintln!("gemma4 placeholder decode step: logits max abs diff {diff:e}");
    assert!(diff < LOGIT_TOLERANCE, "placeholder decode step: logits differ by up to {diff}");
}
