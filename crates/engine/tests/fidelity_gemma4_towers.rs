//! Gemma 4's media towers against transformers 5.24 (float32) on the tiny random checkpoint of
//! tests/reference/make_gemma4.py, fed the reference processor's tensors
//! (media_reference/*.npy):
//! - the vision tower + embed_vision: pixel_values and image_position_ids (280 patches, the
//!   last 28 padding) → the 63 soft tokens of `image_embeds`;
//! - the audio tower + embed_audio: input_features and their mask (99 frames) → the 25 soft
//!   tokens of `audio_embeds`;
//! - end to end: both towers' outputs spliced into `embed(ids)` at the placeholders give the
//!   reference's first-step logits and 16 greedy ids.

use std::path::{Path, PathBuf};

use confab_engine::model::families::gemma4::Gemma4Towers;
use confab_engine::model::{self, Compute, EmbeddingsInput, Input, LoadOptions, Positions, Rows};
use confab_engine::npy;
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{Array, Dtype};
use serde_json::Value;

/// float32 on both sides; only summation order differs. Tower outputs are O(1).
const EMBED_TOLERANCE: f32 = 1e-4;
/// As fidelity_gemma4.rs: logits span about ±20 (soft-capped at 30).
const LOGIT_TOLERANCE: f32 = 1e-4;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny/gemma4")
}

fn npy(name: &str) -> Array {
    Array::load_numpy(fixture().join("media_reference").join(name)).unwrap()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn max_diff(got: &Array, want: &Array) -> f32 {
    assert_eq!(got.shape(), want.shape());
    let got = got.as_dtype(Dtype::Float32).unwrap();
    let want = want.as_dtype(Dtype::Float32).unwrap();
    got.as_slice::<f32>().iter().zip(want.as_slice::<f32>()).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max)
}

fn towers() -> Gemma4Towers {
    Gemma4Towers::load(&fixture(), Dtype::Float32).unwrap()
}

fn image_embeds(t: &Gemma4Towers) -> Array {
    t.encode_image(&npy("pixel_values.npy"), &npy("image_position_ids.npy")).unwrap()
}

#[test]
fn vision_tower_matches_transformers() {
    let t = towers();
    let got = image_embeds(&t);
    let diff = max_diff(&got, &npy("image_embeds.npy"));
    eprintln!("gemma4 vision tower: max abs diff {diff:e}");
    assert!(diff < EMBED_TOLERANCE, "image embeddings differ by up to {diff}");
}

fn audio_embeds(t: &Gemma4Towers) -> Array {
    t.encode_audio(&npy("input_features.npy"), &npy("input_features_mask.npy")).unwrap()
}

#[test]
fn audio_tower_matches_transformers() {
    let t = towers();
    let got = audio_embeds(&t);
    let diff = max_diff(&got, &npy("audio_embeds.npy"));
    eprintln!("gemma4 audio tower: max abs diff {diff:e}");
    assert!(diff < EMBED_TOLERANCE, "audio embeddings differ by up to {diff}");
}

fn argmax(logits: &Array) -> u32 {
    let v = logits.as_slice::<f32>();
    v.iter().enumerate().fold((0, f32::MIN), |best, (i, &x)| if x > best.1 { (i, x) } else { best }).0 as u32
}

/// Rows of `base` [1, L, H] at `rows` replaced, in order, by the rows of `media` [n, H].
fn splice(base: &Array, rows: &[i32], media: &Array) -> Array {
    assert_eq!(rows.len() as i32, media.dim(0), "placeholders vs soft tokens");
    let (l, h) = (base.dim(1), base.dim(2));
    // Gather from [base rows; media rows]: position i takes base row i or media row j.
    let mut source: Vec<i32> = (0..l).collect();
    for (j, &r) in rows.iter().enumerate() {
        source[r as usize] = l + j as i32;
    }
    let stacked = mlx_rs::ops::concatenate(&[base.reshape(&[l, h]).unwrap(), media.clone()], 0).unwrap();
    stacked.take_axis(Array::from_slice(&source, &[l]), 0).unwrap().reshape(&[1, l, h]).unwrap()
}

#[test]
fn towers_spliced_into_the_prompt_give_the_reference_generation() {
    let dir = fixture();
    let reference = json(&dir.join("media_reference.json"));
    let loaded = model::load(&dir, &LoadOptions::default()).unwrap();
    let m = loaded.model.as_ref();
    let t = towers();
    let pad = m.accepts().media_pad_id.unwrap() as i32;

    let raw = npy("input_ids.npy").as_dtype(Dtype::Int32).unwrap();
    let raw: Vec<i32> = raw.as_slice::<i32>().to_vec();
    let types = npy("mm_token_type_ids.npy").as_dtype(Dtype::Int32).unwrap();
    let types: Vec<i32> = types.as_slice::<i32>().to_vec();
    let rows_of = |kind: i32| -> Vec<i32> { (0..types.len() as i32).filter(|&i| types[i as usize] == kind).collect() };
    let (image_rows, audio_rows) = (rows_of(1), rows_of(3));

    // As transformers: placeholders are looked up as the pad id, then overwritten by the towers'
    // soft tokens in order; the image is one bidirectional block, audio stays causal.
    let llm_ids: Vec<i32> = raw.iter().zip(&types).map(|(&id, &ty)| if ty != 0 { pad } else { id }).collect();
    let llm_ids = Array::from_slice(&llm_ids, &[1, llm_ids.len() as i32]);
    let embeds = m.embed(&llm_ids).unwrap();
    let embeds = splice(&embeds, &image_rows, &image_embeds(&t));
    let embeds = splice(&embeds, &audio_rows, &audio_embeds(&t));
    let blocks: Vec<i32> = types.iter().map(|&ty| if ty == 1 { 0 } else { -1 }).collect();

    let diff = max_diff(&embeds, &npy("inputs_embeds.npy"));
    eprintln!("gemma4 spliced inputs_embeds: max abs diff {diff:e}");
    assert!(diff < EMBED_TOLERANCE, "spliced embeddings differ by up to {diff}");

    let mut state = m.new_state();
    let input = EmbeddingsInput { embeds: &embeds, ids: &llm_ids, media_blocks: Some(&blocks), positions: None, layer_additions: None };
    let logits =
        m.forward(Input::Embeddings(input), Rows::One(&mut state), Compute::Logits(Positions::Last)).unwrap().into_logits().unwrap();
    let want = npy::read_f32(&dir.join("media_reference/first_logits.npy")).unwrap();
    let want = Array::from_slice(&want, &[1, want.len() as i32]);
    let diff = max_diff(&logits, &want);
    eprintln!("gemma4 towers end to end: first-step logits max abs diff {diff:e}");
    assert!(diff < LOGIT_TOLERANCE, "first-step logits differ by up to {diff}");

    let mut got = vec![argmax(&logits.index((0, ..)))];
    let steps = reference["steps"].as_u64().unwrap() as usize;
    while got.len() < steps {
        let token = Array::from_slice(&[*got.last().unwrap() as i32], &[1, 1]);
        got.push(argmax(&m.logits(&token, &mut state).unwrap().index((0, ..))));
    }
    let want: Vec<u32> = reference["greedy_ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
    assert_eq!(got, want, "greedy ids");
}

#[test]
fn bad_inputs_are_errors_not_panics() {
    let t = towers();
    let pixels = npy("pixel_values.npy");
    let positions = npy("image_position_ids.npy");
    // Wrong patch width, positions not matching the patches, a position past the table, a batch of 2.
    assert!(t.encode_image(&pixels.index((.., .., ..40)), &positions).is_err());
    assert!(t.encode_image(&pixels, &positions.index((.., ..100, ..))).is_err());
    let far = Array::from_slice(&[500i32, 0].repeat(280), &[280, 2]);
    assert!(t.encode_image(&pixels, &far).is_err());
    let two = mlx_rs::ops::concatenate(&[pixels.clone(), pixels.clone()], 0).unwrap();
    assert!(t.encode_image(&two, &positions).is_err());

    let features = npy("input_features.npy");
    let mask = npy("input_features_mask.npy");
    assert!(t.encode_audio(&features, &mask.index((.., ..50))).is_err());
    assert!(t.encode_audio(&features.index((.., .., ..64)), &mask).is_err());
    assert!(t.encode_audio(&features.index((.., ..2, ..)), &mask.index((.., ..2))).is_err());
}

#[test]
fn identity_and_text_only_checkpoints() {
    let t = towers();
    assert!(t.has_vision() && t.has_audio());
    assert_eq!(t.tower_identity(), towers().tower_identity(), "identity is stable");
    assert!(t.tower_identity().starts_with("gemma4-towers/"));
    let text_only = fixture().join("../gemma4_moe");
    let result = Gemma4Towers::load(&text_only, Dtype::Float32);
    assert!(matches!(result, Err(confab_engine::EngineError::ModelFormat { .. })), "a text-only checkpoint has no towers");
}
