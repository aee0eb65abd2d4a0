//! Media decoded as the reference pipeline reads it, on the corpus that
//! tests/reference/make_media_fidelity.py writes (tests/reference/fixtures/media_fidelity):
//! - JPEGs of each kind (baseline 4:2:0, 4:2:2, 4:4:4, progressive, greyscale, CMYK) decode to
//!   exactly Pillow's pixels (`Image.open(f).convert("RGB")`);
//! - clips at 8, 22.05, 44.1 and 48 kHz, mono and stereo, in WAV, FLAC, MP3 and M4A give 16 kHz
//!   mono samples within `SAMPLE_TOLERANCE` of transformers' `load_audio`, and Gemma 4 log-mel
//!   features within `FEATURE_TOLERANCE` of its extractor's on those samples. The reference reads
//!   WAV, FLAC and MP3 through soundfile (libsndfile; MP3 by its libmpg123) + soxr 'soxr_hq', and
//!   M4A, which soundfile cannot read, through torchcodec (the system's FFmpeg: its AAC decoder
//!   and libswresample). The engine decodes M4A with the system's FFmpeg too where there is one;
//!   its built-in decoder (symphonia), the fallback, is checked as well, at
//!   `BUILTIN_AAC_FEATURE_TOLERANCE`.

use std::path::PathBuf;

use confab_engine::media::{decode_audio, decode_audio_builtin, decode_image, system_ffmpeg_version, MediaLimits};
use confab_engine::model::families::gemma4::processor::{extract_features, AudioConfig};
use confab_engine::npy::read_f32;
use serde_json::Value;

/// WAV, FLAC and MP3 samples come out bit-identical on x86-64 (the same PCM scaling; the same
/// libmpg123 decoder, driven as libsndfile drives it; the same libsoxr core), and so do M4A's
/// through the system's FFmpeg where it is the corpus's (5.1; x86-64 with AVX2 and FMA, whose
/// kernels FFmpeg picks). With the built-in decoder, M4A's differ by up to 6.0e-6 (48 kHz
/// stereo; 8 kHz: 1.2e-7): that AAC decoder is symphonia's, not FFmpeg's
/// (up to 9.6e-6 apart at the clips' own rates). Nearly all of that is perceptual noise
/// substitution, which FFmpeg's encoder uses in the clips' upper bands: both decoders draw the
/// same LCG values, but symphonia keeps each one's top 16 bits where FFmpeg takes all 32 (with
/// that one line changed in symphonia, every clip's samples come within 1.5e-7 and log-mel within
/// 7.7e-5, 8 kHz unchanged); the rest is float rounding. Our libswresample follows FFmpeg's C
/// order where FFmpeg runs AVX/FMA kernels (1.2e-7 apart on identical input).
const SAMPLE_TOLERANCE: f32 = 1e-5;
/// On identical samples our extractor is within 4.8e-7 of transformers'.
const FEATURE_TOLERANCE: f32 = 1e-5;
/// The built-in AAC decoder's sample differences move log-mel by up to 3e-4 at 22.05 to 48 kHz
/// and 6.2e-4 at 8 kHz, in bins near the mel floor (log(mel + 1e-3) magnifies absolute
/// differences there 1000-fold; at 8 kHz every bin above 4 kHz is such a bin, and the
/// resampler's rounding alone gives 5.6e-4). FFmpeg's decoder, where the system has it, is held
/// to `FEATURE_TOLERANCE`.
const BUILTIN_AAC_FEATURE_TOLERANCE: f32 = 7e-4;
/// Where libmpg123's x86-64 decoders are not built, the generic C decoder rounds differently:
/// samples within 6.1e-7 of the reference, log-mel within ~5e-4 near the mel floor.
const MP3_FEATURE_TOLERANCE_GENERIC: f32 = 1e-3;

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
    let ffmpeg = system_ffmpeg_version();
    match ffmpeg {
        Some(version) => eprintln!("M4A: decoded by the system's FFmpeg ({version}), held to {FEATURE_TOLERANCE:e}"),
        None => eprintln!(
            "M4A: no system FFmpeg (libavcodec 58-62; or CONFAB_SYSTEM_FFMPEG=0): decoded by the built-in decoder only, held to its \
             tolerances ({SAMPLE_TOLERANCE:e} samples, {BUILTIN_AAC_FEATURE_TOLERANCE:e} log-mel)"
        ),
    }
    let mut failures = vec![];
    for entry in meta()["clips"].as_array().unwrap() {
        let file = entry["file"].as_str().unwrap();
        let is_m4a = file.ends_with(".m4a");
        let audio = decode_audio(&corpus().join(file), 16000, &limits).unwrap();
        let (path, feature_tolerance, exact) = match file.rsplit('.').next() {
            Some("m4a") if ffmpeg.is_some() => ("FFmpeg", FEATURE_TOLERANCE, runs_the_references_ffmpeg()),
            Some("m4a") => ("built-in", BUILTIN_AAC_FEATURE_TOLERANCE, false),
            Some("mp3") if cfg!(not(target_arch = "x86_64")) => ("", MP3_FEATURE_TOLERANCE_GENERIC, false),
            _ => ("", FEATURE_TOLERANCE, runs_the_references_cores()),
        };
        check_clip(file, path, &audio.samples, feature_tolerance, exact, &mut failures);
        if is_m4a && ffmpeg.is_some() {
            // The fallback, as a machine without FFmpeg runs it.
            let builtin = decode_audio_builtin(&corpus().join(file), 16000, &limits).unwrap();
            check_clip(file, "built-in", &builtin.samples, BUILTIN_AAC_FEATURE_TOLERANCE, false, &mut failures);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Compares one decoding of `file` with the reference's samples and features.
fn check_clip(file: &str, path: &str, samples: &[f32], feature_tolerance: f32, exact: bool, failures: &mut Vec<String>) {
    let label = if path.is_empty() { file.to_string() } else { format!("{file} ({path})") };
    let want = read_f32(&corpus().join(format!("{file}.samples16k.npy"))).unwrap();
    if samples.len() != want.len() {
        failures.push(format!("{label}: {} samples, the reference has {}", samples.len(), want.len()));
        return;
    }
    let sample_diff = max_diff(samples, &want);
    let features = extract_features(samples, &AudioConfig::default(), 750).unwrap();
    let want_features = read_f32(&corpus().join(format!("{file}.features.npy"))).unwrap();
    let mel = max_diff(&features.features, &want_features);
    eprintln!("{label}: samples max abs diff {sample_diff:e}, log-mel {mel:e}");
    if sample_diff != 0.0 && exact {
        failures.push(format!("{label}: samples differ by up to {sample_diff:e}; they should be the reference's exactly"));
    }
    if sample_diff >= SAMPLE_TOLERANCE || mel >= feature_tolerance {
        failures.push(format!("{label}: samples differ by up to {sample_diff:e}, log-mel by up to {mel:e}"));
    }
}

/// Whether the system's FFmpeg should give the corpus's M4A samples bit for bit: the release
/// that made them (5.1, libavcodec 59.37) with the kernels it ran (x86-64 AVX2 and FMA: its
/// FFT and resampler pick those at run time).
fn runs_the_references_ffmpeg() -> bool {
    system_ffmpeg_version().is_some_and(|v| v.starts_with("libavcodec 59.37.")) && has_avx2_and_fma()
}

fn has_avx2_and_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma");
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// Whether this machine runs the cores the corpus was made with: libsoxr's SSE core and
/// libmpg123's AVX decoder (x86-64 with AVX; without AVX both sides would pick mpg123's SSE
/// decoder, but the corpus holds the AVX decoder's samples).
fn runs_the_references_cores() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx");
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}
