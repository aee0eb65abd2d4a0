//! Gemma 4 preprocessing against transformers' processor: the fixtures are made by
//! tests/reference/make_gemma4_preprocess.py (see its docstring for what each file is).
//!
//! Tolerances: pixel values are identical (the resize reproduces Pillow's fixed-point bicubic
//! exactly, so every value is the same k/255); log-mel features within AUDIO_TOLERANCE (we
//! compute in float64 where numpy mixes float32 and float64; the largest differences seen are
//! 4.8e-7 with the default config and 1.9e-6 with pre-emphasis); ids, shapes, position ids, masks and soft-token counts exactly.

use std::path::{Path, PathBuf};

use confab_engine::media::pil_resize::{resize_like_pil, PilFilter};
use confab_engine::media::{decode_audio, decode_image, MediaKind, MediaLimits};
use confab_engine::model::families::gemma4::processor::AudioConfig;
use confab_engine::model::families::gemma4::processor::{
    audio_soft_tokens, expand_prompt, extract_features, image_soft_tokens, preprocess_image, ImageConfig, MediaTokens, ProcessorConfig,
};
use confab_engine::npy::read_f32;
use confab_engine::Tokenizer;
use serde_json::Value;

const PIXEL_TOLERANCE: f32 = 0.0;
const AUDIO_TOLERANCE: f32 = 1e-5;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/gemma4_preprocess")
}

fn meta() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join("meta.json")).unwrap()).unwrap()
}

fn usizes(value: &Value) -> Vec<usize> {
    value.as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect()
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "lengths differ");
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn small_config(meta: &Value) -> ImageConfig {
    let small = &meta["small_config"];
    ImageConfig {
        patch_size: small["patch_size"].as_u64().unwrap() as usize,
        max_soft_tokens: small["max_soft_tokens"].as_u64().unwrap() as usize,
        pooling_kernel_size: small["pooling_kernel_size"].as_u64().unwrap() as usize,
        ..ImageConfig::default()
    }
}

#[test]
fn images_match_the_reference_processor() {
    let meta = meta();
    let config = small_config(&meta);
    for name in ["a", "b", "c"] {
        let expected = &meta["images"][name];
        let image = decode_image(&fixtures().join(format!("image_{name}.png")), &MediaLimits::default()).unwrap();
        let out = preprocess_image(&image, &config).unwrap();

        let shape = usizes(&expected["small"]["pixel_values_shape"]);
        assert_eq!([1, out.max_patches, out.patch_dim], shape[..], "image {name}: shape");
        assert_eq!(out.soft_tokens, expected["small"]["num_soft_tokens"].as_u64().unwrap() as usize);
        let resized = usizes(&expected["small"]["resized"]);
        assert_eq!([out.resized.0, out.resized.1], resized[..], "image {name}: resized size");

        let reference = read_f32(&fixtures().join(format!("image_{name}.pixel_values.npy"))).unwrap();
        let real = &out.pixel_values[..out.num_patches * out.patch_dim];
        let diff = max_abs_diff(real, &reference);
        assert!(diff <= PIXEL_TOLERANCE, "image {name}: pixel values differ by up to {diff}");
        assert!(out.pixel_values[real.len()..].iter().all(|&v| v == 0.0), "image {name}: padding");

        let positions = read_f32(&fixtures().join(format!("image_{name}.position_ids.npy"))).unwrap();
        let ours: Vec<f32> = out.position_ids.iter().map(|&p| p as f32).collect();
        assert_eq!(ours, positions, "image {name}: position ids");
    }
}

#[test]
fn default_config_sizes_counts_and_sampled_patches_match() {
    let meta = meta();
    let config = ImageConfig::default();
    for name in ["a", "b", "c"] {
        let expected = &meta["images"][name]["default"];
        let (h, w) = (meta["images"][name]["height"].as_u64().unwrap(), meta["images"][name]["width"].as_u64().unwrap());
        let tokens = expected["num_soft_tokens"].as_u64().unwrap() as usize;
        assert_eq!(image_soft_tokens(h as usize, w as usize, &config).unwrap(), tokens, "image {name}");
        if name != "a" {
            continue;
        }
        let image = decode_image(&fixtures().join("image_a.png"), &MediaLimits::default()).unwrap();
        let out = preprocess_image(&image, &config).unwrap();
        assert_eq!([1, out.max_patches, out.patch_dim], usizes(&expected["pixel_values_shape"])[..]);
        assert_eq!(out.num_patches, expected["real_patches"].as_u64().unwrap() as usize);
        assert_eq!(out.soft_tokens, tokens);
        let reference = read_f32(&fixtures().join("image_a.default_rows.npy")).unwrap();
        let rows: Vec<f32> = usizes(&expected["rows"])
            .into_iter()
            .flat_map(|r| out.pixel_values[r * out.patch_dim..(r + 1) * out.patch_dim].to_vec())
            .collect();
        let diff = max_abs_diff(&rows, &reference);
        assert!(diff <= PIXEL_TOLERANCE, "default config: pixel values differ by up to {diff}");
    }
}

#[test]
fn audio_features_match_the_reference_extractor() {
    let meta = meta();
    let config = ProcessorConfig::default();
    for name in ["1s", "2500ms"] {
        let expected = &meta["audio"][name];
        let clip = decode_audio(&fixtures().join(format!("chirp_{name}.wav")), 16_000, &MediaLimits::default()).unwrap();
        assert_eq!(clip.samples.len(), expected["samples"].as_u64().unwrap() as usize);
        let out = extract_features(&clip.samples, &config.audio, config.audio_seq_length).unwrap();

        assert_eq!([out.frames, out.feature_size], usizes(&expected["features_shape"])[..], "clip {name}: shape");
        let mask = read_f32(&fixtures().join(format!("chirp_{name}.mask.npy"))).unwrap();
        let ours: Vec<f32> = out.mask.iter().map(|&m| m as u8 as f32).collect();
        assert_eq!(ours, mask, "clip {name}: mask");

        let reference = read_f32(&fixtures().join(format!("chirp_{name}.features.npy"))).unwrap();
        let diff = max_abs_diff(&out.features, &reference);
        eprintln!("clip {name}: log-mel max abs diff {diff:e}");
        assert!(diff <= AUDIO_TOLERANCE, "clip {name}: features differ by up to {diff}");
        assert_eq!(out.soft_tokens, audio_soft_tokens(clip.samples.len(), &config.audio, config.audio_seq_length));
    }
}

#[test]
fn audio_configs_are_honoured() {
    let meta = meta();
    let clip = decode_audio(&fixtures().join("chirp_1s.wav"), 16_000, &MediaLimits::default()).unwrap();
    for flavour in ["htk", "plain"] {
        let expected = &meta["audio"][format!("1s.{flavour}")];
        let config: AudioConfig = serde_json::from_value(expected["config"].clone()).unwrap();
        let out = extract_features(&clip.samples, &config, 750).unwrap();
        assert_eq!([out.frames, out.feature_size], usizes(&expected["features_shape"])[..], "{flavour}");
        let reference = read_f32(&fixtures().join(format!("chirp_1s.{flavour}.features.npy"))).unwrap();
        let diff = max_abs_diff(&out.features, &reference);
        eprintln!("{flavour} pre-emphasis: log-mel max abs diff {diff:e}");
        assert!(diff <= AUDIO_TOLERANCE, "{flavour}: features differ by up to {diff}");
    }
}

#[test]
fn every_pillow_filter_resizes_identically() {
    let meta = meta();
    let resized = &meta["resized"];
    let source = decode_image(&fixtures().join("image_c.png"), &MediaLimits::default()).unwrap();
    let (w, h) = (resized["width"].as_u64().unwrap() as u32, resized["height"].as_u64().unwrap() as u32);
    for (name, number) in resized["filters"].as_object().unwrap() {
        let filter = PilFilter::from_pil(number.as_u64().unwrap() as u32).unwrap();
        let expected = decode_image(&fixtures().join(format!("resized_{name}.png")), &MediaLimits::default()).unwrap();
        assert!(resize_like_pil(&source, w, h, filter) == expected, "{name} differs from Pillow");
    }
}

#[test]
fn prompt_with_two_images_and_a_clip_expands_to_the_reference_ids() {
    let meta = meta();
    let prompt = &meta["prompt"];
    let tokenizer = Tokenizer::from_hf_folder(fixtures()).unwrap();
    let tokens = MediaTokens::from_folder(&fixtures()).unwrap();
    assert_eq!(tokens, MediaTokens::default());

    let config = ImageConfig::default();
    let image_tokens: Vec<usize> = prompt["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| {
            let image = &meta["images"][name.as_str().unwrap()];
            let (h, w) = (image["height"].as_u64().unwrap() as usize, image["width"].as_u64().unwrap() as usize);
            image_soft_tokens(h, w, &config).unwrap()
        })
        .collect();
    assert_eq!(image_tokens, usizes(&prompt["num_soft_tokens_per_image"]));
    let audio = ProcessorConfig::default();
    let audio_tokens: Vec<usize> = prompt["audio"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| {
            let samples = meta["audio"][name.as_str().unwrap()]["samples"].as_u64().unwrap() as usize;
            audio_soft_tokens(samples, &audio.audio, audio.audio_seq_length)
        })
        .collect();
    assert_eq!(audio_tokens, usizes(&prompt["num_audio_tokens"]));

    let expanded = expand_prompt(&tokenizer, &tokens, prompt["text"].as_str().unwrap(), &image_tokens, &audio_tokens).unwrap();
    let reference: Vec<u32> = usizes(&prompt["input_ids"]).into_iter().map(|i| i as u32).collect();
    assert_eq!(expanded.ids, reference);

    let ids = &prompt["token_ids"];
    let id = |name: &str| ids[name].as_u64().unwrap() as u32;
    let kinds: Vec<(MediaKind, usize)> = expanded.spans.iter().map(|s| (s.kind, s.index)).collect();
    assert_eq!(kinds, [(MediaKind::Image, 0), (MediaKind::Image, 1), (MediaKind::Audio, 0)]);
    for span in &expanded.spans {
        let (begin, soft, end) = match span.kind {
            MediaKind::Image => (id("boi_token"), id("image_token"), id("eoi_token")),
            MediaKind::Audio => (id("boa_token"), id("audio_token"), id("eoa_token")),
            MediaKind::Video => panic!("Gemma 4 has no video spans"),
        };
        assert_eq!(reference[span.start - 1], begin);
        assert!(reference[span.start..span.start + span.len].iter().all(|&t| t == soft));
        assert_eq!(reference[span.start + span.len], end);
    }
}

#[test]
fn placeholder_count_mismatch_is_an_error() {
    let tokenizer = Tokenizer::from_hf_folder(fixtures()).unwrap();
    let tokens = MediaTokens::default();
    assert!(expand_prompt(&tokenizer, &tokens, "one <|image|> only", &[3, 4], &[]).is_err());
    assert!(expand_prompt(&tokenizer, &tokens, "no media", &[], &[5]).is_err());
    let plain = expand_prompt(&tokenizer, &tokens, "no media", &[], &[]).unwrap();
    assert!(plain.spans.is_empty());
}
