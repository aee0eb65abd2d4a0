//! Video decoding on the corpus that tests/reference/make_video_corpus.py writes
//! (tests/reference/fixtures/video): H.264 in MP4 and MOV (Baseline, Main and High with
//! B-frames, BT.709, a rotated phone clip), HEVC (described everywhere, decoded on macOS),
//! animated GIF and WebP, and the files Confab must refuse (HEVC off macOS, a truncated MP4, a
//! GIF without frames, headers saying three hours or 16000 pixels wide), each with the problem a
//! person can act on, found from the headers.
//!
//! - Y, U and V planes are identical to PyAV's (FFmpeg's H.264 decoder): decoding is exact.
//! - RGB is within `RGB_TOLERANCE` of PyAV's `to_ndarray(format="rgb24")` (swscale).
//! - GIF frames are Pillow's composited frames, `convert("RGB")`, exactly; WebP's within
//!   `WEBP_TOLERANCE`.
//! - HEVC headers give what FFmpeg reads from them (size after the conformance window, frames,
//!   duration, colour). Its frames through VideoToolbox: `hevc_frames_match_pyavs_on_macos`,
//!   which only a Mac runs; the unit tests in `media/video/mod.rs` check on every system the
//!   track decoding and colour conversion around the system decoder.

// RGB_TOLERANCE is zero today; the checks stay written as "within the tolerance" so that
// changing it is one edit.
#![allow(clippy::absurd_extreme_comparisons)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use confab_media::MediaProblem;
use confab_media::{self as media, decode_video, decode_video_planes, probe_video, MediaError, MediaKind, MediaLimits, RgbImage};
use serde_json::Value;

/// Measured on this corpus: 0 for every frame of the BT.601 (Baseline, Main) and BT.709
/// (High) files; the YUV->RGB step is swscale's fixed-point arithmetic.
const RGB_TOLERANCE: u8 = 0;

/// Animated WebP: image-webp blends a frame's opaque pixels over the canvas instead of copying
/// them as libwebp (Pillow) does, and its blend loses 1 on most values (x * 255 * (2^24 / 255)
/// >> 24). Frames that are not blended are exact.
const WEBP_TOLERANCE: u8 = 1;

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/video").join(name)
}

fn media_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/media").join(name)
}

fn meta() -> Value {
    serde_json::from_str(&std::fs::read_to_string(corpus("meta.json")).unwrap()).unwrap()
}

fn problem<T: std::fmt::Debug>(result: Result<T, MediaError>, file: &str) -> (MediaProblem, String) {
    match result {
        Err(error @ MediaError::Media { .. }) => {
            let message = error.to_string();
            let MediaError::Media { file: f, problem } = error else { unreachable!() };
            assert_eq!(f, file);
            assert!(message.starts_with(&format!("{file}: ")), "{message}");
            (problem, message)
        }
        other => panic!("expected a media error for {file}, got {other:?}"),
    }
}

fn png(path: &Path) -> RgbImage {
    image::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).into_rgb8()
}

fn max_difference(got: &RgbImage, want: &RgbImage) -> u8 {
    assert_eq!(got.dimensions(), want.dimensions());
    got.as_raw().iter().zip(want.as_raw()).map(|(a, b)| a.abs_diff(*b)).max().unwrap()
}

const H264: [(&str, &str, (u32, u32)); 3] = [
    ("h264_baseline.mp4", "video/mp4", (64, 48)),
    ("h264_high.mp4", "video/mp4", (96, 54)),
    ("h264_main.mov", "video/quicktime", (64, 48)),
];

fn reference_indices(entry: &Value) -> Vec<u64> {
    entry["reference_indices"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect()
}

#[test]
fn h264_headers_give_size_frames_rate_and_duration() {
    let meta = meta();
    for (name, mime, size) in H264 {
        let info = probe_video(&corpus(name), &MediaLimits::default()).unwrap_or_else(|e| panic!("{e}"));
        let reference = &meta["videos"][name];
        assert_eq!(info.codec, "H.264", "{name}");
        assert_eq!(info.mime, mime, "{name}");
        assert_eq!((info.width, info.height), size, "{name}");
        assert_eq!(info.frames, reference["frames"].as_u64().unwrap(), "{name}");
        assert_eq!(info.frames, 20, "{name}");
        assert!((info.seconds - 2.0).abs() < 1e-6, "{name}: {} s", info.seconds);
        assert!((info.fps - 10.0).abs() < 1e-6, "{name}: {} fps", info.fps);
        assert_eq!(info.rotation, 0);
    }
}

#[test]
fn h264_planes_are_pyavs_exactly_and_rgb_within_tolerance() {
    let meta = meta();
    let limits = MediaLimits::default();
    for (name, _, (width, height)) in H264 {
        let reference = &meta["videos"][name];
        let indices = reference_indices(reference);
        let planes = decode_video_planes(&corpus(name), &indices, &limits).unwrap_or_else(|e| panic!("{name}: {e}"));
        let video = decode_video(&corpus(name), &indices, &limits).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(video.frames.len(), indices.len());
        let mut worst = 0;
        for ((index, frame), rgb) in indices.iter().zip(&planes).zip(&video.frames) {
            let want = std::fs::read(corpus(&format!("{name}.f{index}.yuv"))).unwrap();
            assert_eq!((frame.width, frame.height), (width, height));
            let got: Vec<u8> = [&frame.y[..], &frame.u, &frame.v].concat();
            assert!(got == want, "{name} frame {index}: planes differ from PyAV's");
            worst = worst.max(max_difference(rgb, &png(&corpus(&format!("{name}.f{index}.png")))));
        }
        assert!(worst <= RGB_TOLERANCE, "{name}: RGB differs from PyAV's by {worst}");
        let times: Vec<f64> = reference["timestamps"].as_array().unwrap().iter().map(|t| t.as_f64().unwrap()).collect();
        for (index, t) in indices.iter().zip(&video.timestamps) {
            assert!((t - times[*index as usize]).abs() < 1e-9, "{name} frame {index}: {t} s");
        }
    }
}

#[test]
fn every_frame_in_display_order_matches_its_timestamp() {
    let meta = meta();
    for (name, _, _) in H264 {
        let all: Vec<u64> = (0..20).collect();
        let video = decode_video(&corpus(name), &all, &MediaLimits::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let times: Vec<f64> = meta["videos"][name]["timestamps"].as_array().unwrap().iter().map(|t| t.as_f64().unwrap()).collect();
        assert_eq!(video.timestamps.len(), 20);
        for (got, want) in video.timestamps.iter().zip(&times) {
            assert!((got - want).abs() < 1e-9, "{name}: {:?} vs {times:?}", video.timestamps);
        }
        // Frame by frame against the sampled decode: skipping groups changes nothing.
        for index in reference_indices(&meta["videos"][name]) {
            let one = decode_video(&corpus(name), &[index], &MediaLimits::default()).unwrap();
            assert_eq!(one.frames[0], video.frames[index as usize], "{name} frame {index}");
        }
    }
}

#[test]
fn a_long_clip_decoded_in_parallel_pieces_gives_the_same_frames() {
    // 60 frames in 6 groups of pictures: asking for all of them decodes the groups as pieces
    // on several threads; asking for one group's frames decodes that group alone.
    let (name, limits) = ("h264_long.mp4", MediaLimits::default());
    let meta = meta();
    let info = probe_video(&corpus(name), &limits).unwrap();
    assert_eq!((info.frames, info.fps), (60, 10.0));
    let all: Vec<u64> = (0..60).collect();
    let together = decode_video_planes(&corpus(name), &all, &limits).unwrap();
    for group in all.chunks(10) {
        let alone = decode_video_planes(&corpus(name), group, &limits).unwrap();
        assert!(alone == together[group[0] as usize..group[0] as usize + 10], "frames {group:?}");
    }
    for index in reference_indices(&meta["videos"][name]) {
        let want = std::fs::read(corpus(&format!("{name}.f{index}.yuv"))).unwrap();
        let frame = &together[index as usize];
        assert!([&frame.y[..], &frame.u, &frame.v].concat() == want, "frame {index}: planes differ from PyAV's");
    }
    let video = decode_video(&corpus(name), &all, &limits).unwrap();
    let times: Vec<f64> = meta["videos"][name]["timestamps"].as_array().unwrap().iter().map(|t| t.as_f64().unwrap()).collect();
    for (got, want) in video.timestamps.iter().zip(&times) {
        assert!((got - want).abs() < 1e-9);
    }
    // A caller that stops early stops the workers too.
    let mut taken = 0;
    let stopped = media::decode_video_with(&corpus(name), &all, &limits, |_, _, _| {
        taken += 1;
        if taken == 15 {
            Err(MediaError::Stopped)
        } else {
            Ok(())
        }
    });
    assert!(matches!(stopped, Err(MediaError::Stopped)));
    assert_eq!(taken, 15);
}

#[test]
fn sampled_indices_return_exactly_those_frames() {
    let name = "h264_high.mp4";
    let limits = MediaLimits::default();
    // As a processor samples: sparse, in the second group only, and repeated (linspace rounding).
    for indices in [vec![14], vec![3, 14], vec![0, 0, 9, 19, 19], vec![19]] {
        let video = decode_video(&corpus(name), &indices, &limits).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(video.frames.len(), indices.len());
        for (index, frame) in indices.iter().zip(&video.frames) {
            let want = png(&corpus(&format!("{name}.f{index}.png")));
            assert!(max_difference(frame, &want) <= RGB_TOLERANCE, "{indices:?}: frame {index}");
        }
        let expected: Vec<f64> = indices.iter().map(|&i| i as f64 / 10.0).collect();
        for (t, e) in video.timestamps.iter().zip(expected) {
            assert!((t - e).abs() < 1e-9);
        }
    }
    let out_of_range = decode_video(&corpus(name), &[20], &limits);
    assert!(matches!(out_of_range, Err(MediaError::Internal(_))), "{out_of_range:?}");
}

#[test]
fn frames_can_be_taken_one_at_a_time_and_decoding_stopped() {
    let limits = MediaLimits::default();
    for name in ["h264_high.mp4", "animated.gif"] {
        let mut seen = Vec::new();
        let info = media::decode_video_with(&corpus(name), &[1, 2, 2, 3], &limits, |index, seconds, frame| {
            assert!(frame.width() > 0);
            seen.push((index, seconds));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), [1, 2, 2, 3], "{name}");
        assert!(info.frames >= 4);
        // An error from the caller (say, the request was cancelled) stops decoding and comes back.
        let mut calls = 0;
        let stopped = media::decode_video_with(&corpus(name), &[0, 1, 2], &limits, |_, _, _| {
            calls += 1;
            Err(MediaError::Stopped)
        });
        assert!(matches!(stopped, Err(MediaError::Stopped)), "{name}: {stopped:?}");
        assert_eq!(calls, 1);
    }
}

#[test]
fn a_rotated_phone_clip_comes_out_upright() {
    let limits = MediaLimits::default();
    let info = probe_video(&corpus("h264_rotated.mp4"), &limits).unwrap();
    assert_eq!((info.width, info.height, info.rotation), (48, 64, 1));
    let video = decode_video(&corpus("h264_rotated.mp4"), &[0, 10], &limits).unwrap();
    for (index, frame) in [0, 10].iter().zip(&video.frames) {
        // The same stream as the baseline file, turned 90 degrees clockwise.
        let stored = png(&corpus(&format!("h264_baseline.mp4.f{index}.png")));
        let upright = image::imageops::rotate90(&stored);
        assert_eq!(frame.dimensions(), (48, 64));
        assert!(max_difference(frame, &upright) <= RGB_TOLERANCE, "frame {index}");
    }
    let probed = media::probe(&corpus("h264_rotated.mp4"), &limits).unwrap();
    assert_eq!((probed.width, probed.height), (Some(48), Some(64)));
}

#[test]
fn a_fragmented_mp4_reads_its_frames_from_the_fragments() {
    let limits = MediaLimits::default();
    let info = probe_video(&corpus("h264_fragmented.mp4"), &limits).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((info.width, info.height, info.frames), (64, 48, 20));
    assert!((info.seconds - 2.0).abs() < 1e-9 && (info.fps - 10.0).abs() < 1e-9, "{info:?}");
    let all: Vec<u64> = (0..20).collect();
    let fragmented = decode_video(&corpus("h264_fragmented.mp4"), &all, &limits).unwrap();
    let whole = decode_video(&corpus("h264_baseline.mp4"), &all, &limits).unwrap();
    assert_eq!(fragmented.frames, whole.frames, "the same stream as the baseline file");
    assert_eq!(fragmented.timestamps, whole.timestamps);
    let few = MediaLimits { max_video_frames: 15, ..Default::default() };
    assert!(matches!(
        problem(probe_video(&corpus("h264_fragmented.mp4"), &few), "h264_fragmented.mp4").0,
        MediaProblem::TooManyFrames { limit: 15, .. }
    ));
    assert_eq!(media::probe(&corpus("h264_fragmented.mp4"), &limits).unwrap().kind, MediaKind::Video);
}

#[test]
fn animated_gif_frames_and_browser_delays() {
    let limits = MediaLimits::default();
    let info = probe_video(&corpus("animated.gif"), &limits).unwrap();
    assert_eq!((info.codec.as_str(), info.mime), ("GIF", "image/gif"));
    assert_eq!((info.width, info.height, info.frames), (40, 30, 4));
    // Delays 100, 0 (shown for 100), 200, 50 ms.
    assert!((info.seconds - 0.45).abs() < 1e-9, "{}", info.seconds);
    assert!((info.fps - 4.0 / 0.45).abs() < 1e-9);
    let video = decode_video(&corpus("animated.gif"), &[0, 1, 2, 3], &limits).unwrap();
    let expected = [0.0, 0.1, 0.2, 0.4];
    for (t, e) in video.timestamps.iter().zip(expected) {
        assert!((t - e).abs() < 1e-9, "{:?}", video.timestamps);
    }
    for (index, frame) in video.frames.iter().enumerate() {
        assert_eq!(max_difference(frame, &png(&corpus(&format!("animated.gif.f{index}.png")))), 0, "frame {index}");
    }
    let sampled = decode_video(&corpus("animated.gif"), &[2], &limits).unwrap();
    assert_eq!(sampled.frames[0], video.frames[2]);
    assert_eq!(sampled.timestamps, [0.2]);
}

#[test]
fn animated_webp_frames_and_delays() {
    let limits = MediaLimits::default();
    let info = probe_video(&corpus("animated.webp"), &limits).unwrap();
    assert_eq!((info.codec.as_str(), info.mime), ("WebP", "image/webp"));
    assert_eq!((info.width, info.height, info.frames), (40, 30, 3));
    assert!((info.seconds - 0.5).abs() < 1e-9, "{}", info.seconds);
    let video = decode_video(&corpus("animated.webp"), &[0, 1, 2], &limits).unwrap();
    for (t, e) in video.timestamps.iter().zip([0.0, 0.1, 0.25]) {
        assert!((t - e).abs() < 1e-9, "{:?}", video.timestamps);
    }
    for (index, frame) in video.frames.iter().enumerate() {
        let difference = max_difference(frame, &png(&corpus(&format!("animated.webp.f{index}.png"))));
        assert!(difference <= WEBP_TOLERANCE, "frame {index}: {difference}");
    }
}

#[test]
fn probe_classifies_each_file() {
    let limits = MediaLimits::default();
    for (path, kind, mime) in [
        (corpus("h264_baseline.mp4"), MediaKind::Video, "video/mp4"),
        (corpus("h264_high.mp4"), MediaKind::Video, "video/mp4"),
        (corpus("h264_main.mov"), MediaKind::Video, "video/quicktime"),
        (corpus("h264_rotated.mp4"), MediaKind::Video, "video/mp4"),
        (corpus("animated.gif"), MediaKind::Video, "image/gif"),
        (corpus("animated.webp"), MediaKind::Video, "image/webp"),
        (media_fixture("animated.gif"), MediaKind::Video, "image/gif"),
        (corpus("still.gif"), MediaKind::Image, "image/gif"),
        (media_fixture("quadrants.webp"), MediaKind::Image, "image/webp"),
        (media_fixture("sine1k.m4a"), MediaKind::Audio, "audio/mp4"),
    ] {
        let info = media::probe(&path, &limits).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!((info.kind, info.mime), (kind, mime), "{}", path.display());
        if kind == MediaKind::Video {
            assert!(info.frames.unwrap() > 1 && info.fps.unwrap() > 0.0 && info.seconds.unwrap() > 0.0);
            assert!(info.codec.is_some() && info.width.is_some() && info.height.is_some());
        } else {
            assert_eq!((info.frames, info.codec), (None, None));
        }
    }
    let mov = media::probe(&corpus("h264_main.mov"), &limits).unwrap();
    assert_eq!((mov.frames, mov.codec.as_deref(), mov.width, mov.height), (Some(20), Some("H.264"), Some(64), Some(48)));
}

#[test]
fn bad_videos_give_their_problem_and_what_to_do() {
    let limits = MediaLimits::default();
    let cases: [(&str, MediaProblem, &str); 5] = [
        (
            "three_hours.mp4",
            MediaProblem::VideoTooLong { seconds: 10800.0, limit: 600.0 },
            "three_hours.mp4: the video is 3 h 0 min long and the limit is 10 min (media.video_seconds); trim it and try again",
        ),
        (
            "wide.mp4",
            MediaProblem::FrameTooLarge { width: 16000, height: 2560, limit: 40_000_000 },
            "wide.mp4: the video's frames are 16000×2560 (41.0 MP) and the limit is 40.0 MP (media.video_frame_pixels); export it at a lower resolution",
        ),
        (
            "wide.gif",
            MediaProblem::FrameTooLarge { width: 16000, height: 2600, limit: 40_000_000 },
            "wide.gif: the video's frames are 16000×2600 (41.6 MP) and the limit is 40.0 MP (media.video_frame_pixels); export it at a lower resolution",
        ),
        ("no_frames.gif", MediaProblem::NoFrames, "no_frames.gif: the video has no frames; record or pick another video"),
        ("truncated.mp4", MediaProblem::Corrupt { detail: String::new() }, "truncated.mp4: the file is damaged or incomplete"),
    ];
    for (name, expected, message) in cases {
        for (what, result) in [
            ("probe_video", problem(probe_video(&corpus(name), &limits), name)),
            ("decode_video", problem(decode_video(&corpus(name), &[0], &limits), name)),
            ("probe", problem(media::probe(&corpus(name), &limits), name)),
        ] {
            let (got, text) = result;
            match (&got, &expected) {
                (MediaProblem::Corrupt { detail }, MediaProblem::Corrupt { .. }) => {
                    assert!(detail.contains("cut short"), "{name} ({what}): {detail}");
                    assert!(text.starts_with(message) && text.ends_with("export or download it again"), "{text}");
                }
                _ => {
                    assert_eq!(got, expected, "{name} ({what})");
                    assert_eq!(text, message, "{name} ({what})");
                }
            }
        }
    }
}

/// The HEVC clips: (name, mime, displayed size, rotation).
const HEVC: [(&str, &str, (u32, u32), u8); 5] = [
    ("hevc.mp4", "video/mp4", (64, 48), 0),
    ("hevc_main.mp4", "video/mp4", (96, 54), 0),
    ("hevc_open_gop.mov", "video/quicktime", (64, 48), 0),
    ("hevc_main10.mp4", "video/mp4", (64, 48), 0),
    ("hevc_rotated.mp4", "video/mp4", (54, 96), 1),
];

#[test]
fn hevc_headers_describe_the_file_as_ffmpeg_reads_them() {
    let meta = meta();
    let limits = MediaLimits::default();
    for (name, mime, size, rotation) in HEVC {
        let reference = &meta["videos"][name];
        let info = media::describe_video(&corpus(name), &limits).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(info.codec, "HEVC (H.265)", "{name}");
        assert_eq!(info.mime, mime, "{name}");
        // FFmpeg's size is the stored one, after the SPS's conformance window (96x56 -> 96x54).
        let stored: Vec<u64> = reference["size"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
        let displayed = if rotation % 2 == 1 { (stored[1], stored[0]) } else { (stored[0], stored[1]) };
        assert_eq!((info.width as u64, info.height as u64), displayed, "{name}");
        assert_eq!((info.width, info.height, info.rotation), (size.0, size.1, rotation), "{name}");
        assert_eq!(info.frames, reference["frames"].as_u64().unwrap(), "{name}");
        let seconds = reference["seconds"].as_f64().unwrap();
        assert!((info.seconds - seconds).abs() < 1e-9, "{name}: {} s, FFmpeg {seconds} s", info.seconds);
        assert!((info.fps - info.frames as f64 / seconds).abs() < 1e-9, "{name}: {} fps", info.fps);
    }
}

#[test]
fn hevc_limits_come_from_the_headers() {
    let name = "hevc_main.mp4";
    let few_frames = MediaLimits { max_video_frames: 10, ..Default::default() };
    assert_eq!(problem(media::describe_video(&corpus(name), &few_frames), name).0, MediaProblem::TooManyFrames { frames: 20, limit: 10 });
    let short = MediaLimits { max_video_seconds: 1.5, ..Default::default() };
    assert_eq!(problem(media::describe_video(&corpus(name), &short), name).0, MediaProblem::VideoTooLong { seconds: 2.0, limit: 1.5 });
    let small = MediaLimits { max_video_frame_pixels: 96 * 54 - 1, ..Default::default() };
    assert_eq!(
        problem(media::describe_video(&corpus(name), &small), name).0,
        MediaProblem::FrameTooLarge { width: 96, height: 54, limit: 96 * 54 - 1 }
    );
    // The limits come before the codec: a long HEVC clip is "too long" on every system.
    assert!(matches!(problem(probe_video(&corpus(name), &short), name).0, MediaProblem::VideoTooLong { .. }));
}

/// Off macOS, an HEVC file is refused wherever it is read, naming HEVC and saying how to convert.
#[cfg(not(target_os = "macos"))]
#[test]
fn hevc_is_refused_off_macos_with_what_to_do() {
    let limits = MediaLimits::default();
    let expected = MediaProblem::VideoCodecNeedsMac { codec: "HEVC (H.265)".into() };
    for (name, ..) in HEVC {
        for (what, result) in [
            ("probe_video", problem(probe_video(&corpus(name), &limits), name)),
            ("decode_video", problem(decode_video(&corpus(name), &[0], &limits), name)),
            ("decode_video_planes", problem(decode_video_planes(&corpus(name), &[0], &limits), name)),
            ("probe", problem(media::probe(&corpus(name), &limits), name)),
        ] {
            let (got, text) = result;
            assert_eq!(got, expected, "{name} ({what})");
            assert!(
                text.starts_with(&format!(
                    "{name}: the video codec (HEVC (H.265)) is decoded on macOS only; convert the video to H.264 MP4"
                )),
                "{text}"
            );
            assert!(text.contains("ffmpeg -i clip.mov -c:v libx264"), "{text}");
        }
    }
}

/// HEVC through VideoToolbox against PyAV (FFmpeg's HEVC decoder and swscale).
///
/// Only a Mac runs this: CI and development are on Linux, where `scripts/cross_check.sh mac`
/// compiles it for Apple silicon without linking or running it. It has not run yet.
///
/// Tolerances, reasoned, not measured: HEVC decoding is exact (a conforming decoder's 8-bit
/// output is bit-exact), so the 8-bit clips' planes must equal FFmpeg's and their RGB, converted
/// by our swscale arithmetic from those planes, PyAV's (`RGB_TOLERANCE`, 0). The Main 10 clip is
/// converted to 8 bits by VideoToolbox and to RGB by swscale straight from 10 bits in PyAV:
/// rounding (and swscale's dithering) differ by about one 8-bit step of Y, U or V, which the
/// BT.2020 matrix turns into at most ~3 in R, G or B; `HEVC_10BIT_TOLERANCE` allows 4, and the
/// mean difference must stay under 1.
#[cfg(target_os = "macos")]
#[test]
fn hevc_frames_match_pyavs_on_macos() {
    // (A function, so clippy does not call `difference <= 0` absurd while the tolerance is 0.)
    fn within(difference: u8, tolerance: u8) -> bool {
        difference <= tolerance
    }
    const HEVC_10BIT_TOLERANCE: u8 = 4;
    let meta = meta();
    let limits = MediaLimits::default();
    for (name, _, (width, height), _) in &HEVC[..4] {
        let reference = &meta["videos"][*name];
        let indices = reference_indices(reference);
        let video = decode_video(&corpus(name), &indices, &limits).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(video.frames.len(), indices.len());
        let ten_bit = reference["pix_fmt"] == "yuv420p10le";
        let (mut worst, mut total, mut count) = (0u8, 0u64, 0u64);
        for (index, rgb) in indices.iter().zip(&video.frames) {
            assert_eq!(rgb.dimensions(), (*width, *height), "{name}");
            let want = png(&corpus(&format!("{name}.f{index}.png")));
            worst = worst.max(max_difference(rgb, &want));
            total += rgb.as_raw().iter().zip(want.as_raw()).map(|(a, b)| a.abs_diff(*b) as u64).sum::<u64>();
            count += want.as_raw().len() as u64;
        }
        let tolerance = if ten_bit { HEVC_10BIT_TOLERANCE } else { RGB_TOLERANCE };
        assert!(within(worst, tolerance), "{name}: RGB differs from PyAV's by {worst}");
        assert!((total as f64 / count as f64) < 1.0, "{name}: mean difference {}", total as f64 / count as f64);
        let times: Vec<f64> = reference["timestamps"].as_array().unwrap().iter().map(|t| t.as_f64().unwrap()).collect();
        for (index, t) in indices.iter().zip(&video.timestamps) {
            assert!((t - times[*index as usize]).abs() < 1e-9, "{name} frame {index}: {t} s");
        }
        if !ten_bit {
            let planes = decode_video_planes(&corpus(name), &indices, &limits).unwrap();
            for (index, frame) in indices.iter().zip(&planes) {
                let want = std::fs::read(corpus(&format!("{name}.f{index}.yuv"))).unwrap();
                assert!([&frame.y[..], &frame.u, &frame.v].concat() == want, "{name} frame {index}: planes differ from PyAV's");
            }
        }
    }
    // Every frame, in display order (decode order differs: B-frames; the open-GOP clip's
    // leading frames come after their CRA picture), and each sampled alone the same.
    for name in ["hevc_main.mp4", "hevc_open_gop.mov"] {
        let all: Vec<u64> = (0..20).collect();
        let video = decode_video(&corpus(name), &all, &limits).unwrap();
        for index in reference_indices(&meta["videos"][name]) {
            let one = decode_video(&corpus(name), &[index], &limits).unwrap();
            assert_eq!(one.frames[0], video.frames[index as usize], "{name} frame {index}");
        }
    }
    // A rotated clip comes out upright.
    let video = decode_video(&corpus("hevc_rotated.mp4"), &[0, 10], &limits).unwrap();
    for (index, frame) in [0, 10].iter().zip(&video.frames) {
        let upright = image::imageops::rotate90(&png(&corpus(&format!("hevc_main.mp4.f{index}.png"))));
        assert!(within(max_difference(frame, &upright), RGB_TOLERANCE), "hevc_rotated.mp4 frame {index}");
    }
    let probed = media::probe(&corpus("hevc_main.mp4"), &limits).unwrap();
    assert_eq!(
        (probed.kind, probed.codec.as_deref(), probed.width, probed.height),
        (MediaKind::Video, Some("HEVC (H.265)"), Some(96), Some(54))
    );
}

#[test]
fn limits_come_from_the_headers() {
    let name = "h264_baseline.mp4";
    let few_frames = MediaLimits { max_video_frames: 10, ..Default::default() };
    let (got, text) = problem(probe_video(&corpus(name), &few_frames), name);
    assert_eq!(got, MediaProblem::TooManyFrames { frames: 20, limit: 10 });
    assert!(text.ends_with("trim it or lower its frame rate"), "{text}");
    let short = MediaLimits { max_video_seconds: 1.5, ..Default::default() };
    assert_eq!(problem(decode_video(&corpus(name), &[0], &short), name).0, MediaProblem::VideoTooLong { seconds: 2.0, limit: 1.5 });
    let small = MediaLimits { max_file_bytes: 1000, ..Default::default() };
    let bytes = std::fs::metadata(corpus(name)).unwrap().len();
    assert_eq!(problem(media::probe(&corpus(name), &small), name).0, MediaProblem::FileTooLarge { bytes, limit: 1000 });
    let gif_frames = MediaLimits { max_video_frames: 3, ..Default::default() };
    assert_eq!(
        problem(probe_video(&corpus("animated.gif"), &gif_frames), "animated.gif").0,
        MediaProblem::TooManyFrames { frames: 4, limit: 3 }
    );
}

#[test]
fn other_containers_are_named_and_refused() {
    let dir = tempfile::tempdir().unwrap();
    let limits = MediaLimits::default();
    let webm = dir.path().join("clip.webm");
    std::fs::write(&webm, b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01webm and more").unwrap();
    let avi = dir.path().join("clip.avi");
    std::fs::write(&avi, b"RIFF\x10\0\0\0AVI LIST\x04\0\0\0hdrl").unwrap();
    for (path, name, format) in [(&webm, "clip.webm", "WebM/Matroska"), (&avi, "clip.avi", "AVI")] {
        let expected = MediaProblem::UnsupportedVideoFormat { format: format.into() };
        let (got, text) = problem(probe_video(path, &limits), name);
        assert_eq!(got, expected);
        assert!(text.contains("export the video as H.264 MP4"), "{text}");
        assert_eq!(problem(media::probe(path, &limits), name).0, expected);
    }
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, b"just words").unwrap();
    let (got, message) = problem(media::probe(&text, &limits), "notes.txt");
    assert_eq!(got, MediaProblem::Unrecognised);
    assert!(message.contains("video"), "{message}");
}

static PANICS: AtomicUsize = AtomicUsize::new(0);

#[test]
fn truncated_and_damaged_movies_never_panic() {
    // Panics inside the decoders would be caught and reported as "damaged": count them here,
    // so a caught panic still fails the test.
    let thread = std::thread::current().id();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == thread {
            PANICS.fetch_add(1, Ordering::SeqCst);
        }
        eprintln!("{info}");
    }));
    let dir = tempfile::tempdir().unwrap();
    let limits = MediaLimits::default();
    let all: Vec<u64> = (0..60).collect();
    for name in ["h264_baseline.mp4", "h264_main.mov", "h264_high.mp4", "h264_fragmented.mp4", "h264_long.mp4"] {
        let data = std::fs::read(corpus(name)).unwrap();
        let path = dir.path().join(name);
        let mut decoded = 0;
        let cuts: Vec<usize> = (1..40).map(|i| data.len() * i / 40).chain([8, 16, 24, 40, data.len() - 1]).collect();
        for cut in cuts {
            std::fs::write(&path, &data[..cut]).unwrap();
            let probed = probe_video(&path, &limits);
            // A fragmented recording cut after a whole fragment is the frames before the cut.
            let frames = probed.as_ref().map_or(1, |info| info.frames);
            let decoded_result = decode_video(&path, &all[..frames as usize], &limits);
            let _ = media::probe(&path, &limits);
            for result in [probed.map(|_| ()), decoded_result.map(|_| ())] {
                match result {
                    Ok(()) => decoded += 1,
                    Err(MediaError::Media { problem: MediaProblem::Corrupt { .. } | MediaProblem::NoFrames, .. }) => {}
                    Err(other) => panic!("{name} cut at {cut}: {other}"),
                }
            }
        }
        // Damaged bytes inside the frames: an error or a picture, never a crash.
        for (i, at) in (data.len() / 3..data.len()).step_by(97).enumerate() {
            let mut damaged = data.clone();
            damaged[at] ^= 0x5A ^ (i as u8);
            std::fs::write(&path, &damaged).unwrap();
            let _ = decode_video(&path, &all[..20], &limits);
        }
        assert!(decoded < 10, "{name}: cut files decoded {decoded} times");
    }
    // HEVC headers, read on every system: every byte of the hvcC box's first 200 (its counts,
    // lengths and parameter sets; x265's long SEI of settings follows) and every 53rd after
    // garbled, and the file cut throughout: errors or a description.
    for name in ["hevc.mp4", "hevc_main.mp4", "hevc_open_gop.mov", "hevc_main10.mp4"] {
        let data = std::fs::read(corpus(name)).unwrap();
        let path = dir.path().join(name);
        let hvcc = data.windows(4).position(|w| w == b"hvcC").unwrap() - 4;
        let hvcc_len = u32::from_be_bytes(data[hvcc..hvcc + 4].try_into().unwrap()) as usize;
        let mut described = 0;
        let body = hvcc + 8..hvcc + hvcc_len;
        for at in body.clone().take(200).chain(body.skip(200).step_by(53)) {
            for value in [0x00, 0x01, 0x7F, 0xFF] {
                let mut garbled = data.clone();
                garbled[at] = value;
                std::fs::write(&path, &garbled).unwrap();
                match media::describe_video(&path, &limits) {
                    Ok(_) => described += 1,
                    Err(MediaError::Media {
                        problem:
                            MediaProblem::Corrupt { .. } | MediaProblem::UnsupportedVideoCodec { .. } | MediaProblem::FrameTooLarge { .. },
                        ..
                    }) => {}
                    Err(other) => panic!("{name} with byte {at} = {value:#x}: {other}"),
                }
                let _ = probe_video(&path, &limits);
            }
        }
        // Most bytes of a parameter set are settings for the pixels, which are not read here.
        assert!(described > 0, "{name}");
        for cut in (8..data.len()).step_by(37) {
            std::fs::write(&path, &data[..cut]).unwrap();
            let _ = media::describe_video(&path, &limits);
            let _ = media::probe(&path, &limits);
        }
    }
    let _ = std::panic::take_hook();
    std::panic::set_hook(previous);
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a decoder panicked on a damaged file");
}
