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

use confab_engine::model::towers::Gemma4Towers;
use confab_engine::model::{self, EmbeddingsInput, LoadOptions};
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
