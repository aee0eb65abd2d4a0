//! Media decoded as the reference pipeline reads it, on the corpus that
//! tests/reference/make_media_fidelity.py writes (tests/reference/fixtures/media_fidelity):
//! - JPEGs of each kind (baseline 4:2:0, 4:2:2, 4:4:4, progressive, greyscale, CMYK) decode to
//!   exactly Pillow's pixels (`Image.open(f).convert("RGB")`);
//! - clips at 8, 22.05, 44.1 and 48 kHz, mono and stereo, in WAV, FLAC and MP3 give 16 kHz mono
//!   samples within `SAMPLE_TOLERANCE` of transformers' `load_audio` (soundfile + soxr 'soxr_hq'),
//!   and Gemma 4 log-mel features within `FEATURE_TOLERANCE` of its extractor's on those samples
//!   (MP3: `MP3_FEATURE_TOLERANCE`, the decoders differ). M4A is not in the corpus: the
//!   reference loader reads it only through torchcodec (FFmpeg), which the reference venv lacks.

use std::path::PathBuf;

use confab_engine::media::{decode_audio, decode_image, MediaLimits};
use confab_engine::model::families::gemma4::processor::{extract_features, AudioConfig};
use confab_engine::npy::read_f32;
use serde_json::Value;

/// WAV and FLAC samples come out bit-identical (the same PCM scaling, the same libsoxr core);
/// MP3 decoders differ in float rounding (ours is symphonia's, the reference's libsndfile's
/// mpg123), by up to 5.1e-7 on this corpus.
const SAMPLE_TOLERANCE: f32 = 1e-5;
/// On identical samples our extractor is within 4.8e-7 of transformers'.
const FEATURE_TOLERANCE: f32 = 1e-5;
/// MP3's sample differences of ~5e-7 move log-mel by up to 9e-5 in loud bins and 5e-4 in bins
/// near the mel floor (measured on this corpus): the two MP3 decoders, not the resampler.
const MP3_FEATURE_TOLERANCE: f32 = 1e-3;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/media_fidelity")
}

fn meta() -> Value {
    serde_json::from_str(&std::fs::read_to_string(corpus().join("meta.json")).unwrap()).unwrap()
}

fn max_diff(got: &[f32], want: &[f32]) -> f32 {
    assert_eq!(got.len(), want.len(), "lengths differ");
    got.iter().zip(want).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max)
}

#[test]
fn every_kind_of_jpeg_decodes_to_pillows_pixels() {
    let limits = MediaLimits::default();
    for entry in meta()["jpegs"].as_array().unwrap() {
        let file = entry["file"].as_str().unwrap();
        let ours = decode_image(&corpus().join(file), &limits).unwrap();
        let pillow = image::open(corpus().join(file.replace(".jpg", ".pillow.png"))).unwrap().into_rgb8();
        assert_eq!(ours.dimensions(), pillow.dimensions(), "{file}: size");
        let differing = ours.as_raw().iter().zip(pillow.as_raw()).filter(|(a, b)| a != b).count();
        let worst = ours.as_raw().iter().zip(pillow.as_raw()).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
        assert_eq!(differing, 0, "{file}: {differing} channel values differ from Pillow's, by up to {worst}");
    }
}

#[test]
fn clips_at_every_rate_and_format_give_the_reference_loaders_samples_and_features() {
    let limits = MediaLimits::default();
    let config = AudioConfig::default();
    let mut failures = vec![];
    for entry in meta()["clips"].as_array().unwrap() {
        let file = entry["file"].as_str().unwrap();
        let audio = decode_audio(&corpus().join(file), 16000, &limits).unwrap();
        let want = read_f32(&corpus().join(format!("{file}.samples16k.npy"))).unwrap();
        if audio.samples.len() != want.len() {
            failures.push(format!("{file}: {} samples, the reference has {}", audio.samples.len(), want.len()));
            continue;
        }
        let samples = max_diff(&audio.samples, &want);
        let features = extract_features(&audio.samples, &config, 750).unwrap();
        let want_features = read_f32(&corpus().join(format!("{file}.features.npy"))).unwrap();
        let mel = max_diff(&features.features, &want_features);
        let mel_tolerance = if file.ends_with(".mp3") { MP3_FEATURE_TOLERANCE } else { FEATURE_TOLERANCE };
        eprintln!("{file}: samples max abs diff {samples:e}, log-mel {mel:e}");
        if samples >= SAMPLE_TOLERANCE || mel >= mel_tolerance {
            failures.push(format!("{file}: samples differ by up to {samples:e}, log-mel by up to {mel:e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
