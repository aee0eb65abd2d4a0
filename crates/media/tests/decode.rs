//! Media decoding on real files: every accepted image format decodes to the right size and
//! colours, EXIF orientation and GIF frames are honoured, audio decodes, downmixes and
//! resamples without moving a tone's frequency, and bad or oversized files give typed errors
//! naming the file, found before the expensive work. Fixtures: tests/fixtures/media (made by
//! its make_fixtures.py); the oversized and broken files are crafted here.

use std::f64::consts::PI;
use std::path::{Path, PathBuf};

#[path = "common/crafted.rs"]
mod crafted;

use confab_media::MediaProblem;
use confab_media::{self as media, decode_audio, decode_image, MediaError, MediaKind, MediaLimits, RgbImage};
use crafted::{huge_png_header, m4a_with_lying_stsc, mp4_box, wav_header, write};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/media").join(name)
}

fn problem(result: Result<impl std::fmt::Debug, MediaError>, file: &str) -> MediaProblem {
    match result {
        Err(MediaError::Media { file: f, problem }) => {
            assert_eq!(f, file);
            let message = MediaError::Media { file: f, problem: problem.clone() }.to_string();
            assert!(message.starts_with(&format!("{file}: ")), "{message}");
            problem
        }
        other => panic!("expected a media error for {file}, got {other:?}"),
    }
}

fn assert_close(image: &RgbImage, x: u32, y: u32, expected: [u8; 3], name: &str) {
    let got = image.get_pixel(x, y).0;
    let close = got.iter().zip(expected).all(|(&g, e)| (g as i32 - e as i32).abs() <= 40);
    assert!(close, "{name} at ({x}, {y}): {got:?}, expected about {expected:?}");
}

const RED: [u8; 3] = [255, 0, 0];
const GREEN: [u8; 3] = [0, 255, 0];
const BLUE: [u8; 3] = [0, 0, 255];
const WHITE: [u8; 3] = [255, 255, 255];

#[test]
fn every_image_format_decodes_to_rgb() {
    let limits = MediaLimits::default();
    for name in ["quadrants.png", "quadrants.jpg", "quadrants.webp", "quadrants.bmp", "quadrants.tiff", "animated.gif"] {
        let image = decode_image(&fixture(name), &limits).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(image.dimensions(), (32, 24), "{name}");
        // The GIF's second frame is black: these colours show the first was taken.
        assert_close(&image, 8, 6, RED, name);
        assert_close(&image, 24, 6, GREEN, name);
        assert_close(&image, 8, 18, BLUE, name);
        assert_close(&image, 24, 18, WHITE, name);
    }
}

#[test]
fn exif_orientation_6_turns_the_image_upright() {
    // Stored 32×24 with orientation 6 (rotate 90° clockwise to display): shown 24×32, with the
    // stored top-left (red) now top-right.
    let image = decode_image(&fixture("orientation6.jpg"), &MediaLimits::default()).unwrap();
    assert_eq!(image.dimensions(), (24, 32));
    assert_close(&image, 17, 8, RED, "orientation6.jpg");
    assert_close(&image, 17, 24, GREEN, "orientation6.jpg");
    assert_close(&image, 5, 8, BLUE, "orientation6.jpg");
    assert_close(&image, 5, 24, WHITE, "orientation6.jpg");
}

#[test]
fn probe_reads_image_headers() {
    let limits = MediaLimits::default();
    for (name, mime, dims) in [
        ("quadrants.png", "image/png", (32, 24)),
        ("quadrants.jpg", "image/jpeg", (32, 24)),
        ("quadrants.webp", "image/webp", (32, 24)),
        ("quadrants.bmp", "image/bmp", (32, 24)),
        ("quadrants.tiff", "image/tiff", (32, 24)),
        ("orientation6.jpg", "image/jpeg", (24, 32)),
    ] {
        let info = media::probe(&fixture(name), &limits).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(info.kind, MediaKind::Image, "{name}");
        assert_eq!(info.mime, mime, "{name}");
        assert_eq!((info.width, info.height), (Some(dims.0), Some(dims.1)), "{name}");
        assert_eq!(info.bytes, std::fs::metadata(fixture(name)).unwrap().len());
    }
}

#[test]
fn a_100_megapixel_header_is_rejected_before_decoding() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "photo.png", &huge_png_header());
    let limits = MediaLimits::default();
    let expected = MediaProblem::TooManyPixels { width: 10_000, height: 10_000, limit: 40_000_000 };
    assert_eq!(problem(decode_image(&path, &limits), "photo.png"), expected);
    assert_eq!(problem(media::probe(&path, &limits), "photo.png"), expected);
    let message = decode_image(&path, &limits).unwrap_err().to_string();
    assert_eq!(
        message,
        "photo.png: the image is 10000×10000 (100.0 MP) and the limit is 40.0 MP (media.image_pixels); resize it and try again"
    );
}

#[test]
fn corrupt_and_truncated_images_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let limits = MediaLimits::default();
    let png = std::fs::read(fixture("quadrants.png")).unwrap();

    let truncated = write(dir.path(), "cut.png", &png[..png.len() * 2 / 3]);
    assert!(matches!(problem(decode_image(&truncated, &limits), "cut.png"), MediaProblem::Corrupt { .. }));

    let mut garbage = b"\x89PNG\r\n\x1a\n".to_vec();
    garbage.extend(b"this is not a PNG at all, only its signature");
    let corrupt = write(dir.path(), "broken.png", &garbage);
    assert!(matches!(problem(decode_image(&corrupt, &limits), "broken.png"), MediaProblem::Corrupt { .. }));
    assert!(matches!(problem(media::probe(&corrupt, &limits), "broken.png"), MediaProblem::Corrupt { .. }));

    let jpeg = write(dir.path(), "broken.jpg", b"\xff\xd8\xff\xe0 then nothing a decoder could use");
    assert!(matches!(problem(decode_image(&jpeg, &limits), "broken.jpg"), MediaProblem::Corrupt { .. }));

    let text = write(dir.path(), "notes.png", b"just some text, not an image");
    assert_eq!(problem(decode_image(&text, &limits), "notes.png"), MediaProblem::UnsupportedImage);
    assert_eq!(problem(media::probe(&text, &limits), "notes.png"), MediaProblem::UnsupportedImage);

    let empty = write(dir.path(), "empty.png", b"");
    assert_eq!(problem(decode_image(&empty, &limits), "empty.png"), MediaProblem::EmptyFile);
}

#[test]
fn the_file_size_limit_is_checked_first() {
    let limits = MediaLimits { max_file_bytes: 1000, ..Default::default() };
    let bytes = std::fs::metadata(fixture("quadrants.bmp")).unwrap().len();
    let expected = MediaProblem::FileTooLarge { bytes, limit: 1000 };
    assert_eq!(problem(decode_image(&fixture("quadrants.bmp"), &limits), "quadrants.bmp"), expected);
    assert_eq!(problem(media::probe(&fixture("quadrants.bmp"), &limits), "quadrants.bmp"), expected);
}

// ---- audio ----

/// Goertzel power of `freq` in `x`.
fn power(x: &[f32], rate: u32, freq: f64) -> f64 {
    let w = 2.0 * PI * freq / rate as f64;
    let (mut s1, mut s2) = (0.0, 0.0);
    for &v in x {
        let s = v as f64 + 2.0 * w.cos() * s1 - s2;
        s2 = s1;
        s1 = s;
    }
    s1 * s1 + s2 * s2 - 2.0 * w.cos() * s1 * s2
}

/// The strongest frequency between 100 Hz and 4 kHz, to 5 Hz.
fn dominant(x: &[f32], rate: u32) -> f64 {
    (20..=800).map(|i| i as f64 * 5.0).max_by(|a, b| power(x, rate, *a).total_cmp(&power(x, rate, *b))).unwrap()
}

fn rising_crossings(x: &[f32]) -> usize {
    x.windows(2).filter(|w| w[0] < 0.0 && w[1] >= 0.0).count()
}

#[test]
fn stereo_44k_wav_becomes_16k_mono_at_the_same_pitch() {
    let dir = tempfile::tempdir().unwrap();
    let mut wav = wav_header(44_100, 2, 44_100);
    for i in 0..44_100 {
        let v = (2.0 * PI * 440.0 * i as f64 / 44_100.0).sin();
        wav.extend(((v * 0.8 * 32767.0) as i16).to_le_bytes()); // left
        wav.extend(((v * 0.4 * 32767.0) as i16).to_le_bytes()); // right
    }
    let path = write(dir.path(), "tone.wav", &wav);

    let info = media::probe(&path, &MediaLimits::default()).unwrap();
    assert_eq!((info.kind, info.mime), (MediaKind::Audio, "audio/wav"));
    assert_eq!((info.sample_rate, info.channels), (Some(44_100), Some(2)));
    assert!((info.seconds.unwrap() - 1.0).abs() < 1e-9);

    let audio = decode_audio(&path, 16_000, &MediaLimits::default()).unwrap();
    assert_eq!(audio.sample_rate, 16_000);
    assert_eq!(audio.samples.len(), 16_000);
    let middle = &audio.samples[2000..14000]; // 0.75 s: 330 cycles
    assert!((rising_crossings(middle) as i64 - 330).abs() <= 1, "{}", rising_crossings(middle));
    assert_eq!(dominant(middle, 16_000), 440.0);
    // The downmix averages the channels: amplitude (0.8 + 0.4) / 2.
    let peak = middle.iter().fold(0f32, |m, v| m.max(v.abs()));
    assert!((peak - 0.6).abs() < 0.01, "peak {peak}");
}

#[test]
fn compressed_formats_decode_to_the_tone() {
    let limits = MediaLimits::default();
    for (name, mime) in [
        ("sine1k.mp3", "audio/mpeg"),
        ("sine1k.flac", "audio/flac"),
        ("sine1k.ogg", "audio/ogg"),
        ("sine1k.m4a", "audio/mp4"),
        ("sine1k.aac", "audio/aac"),
    ] {
        let info = media::probe(&fixture(name), &limits).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((info.kind, info.mime), (MediaKind::Audio, mime), "{name}");
        assert_eq!(info.channels.unwrap_or(1), 1, "{name}");
        if let Some(seconds) = info.seconds {
            assert!((seconds - 0.5).abs() < 0.1, "{name}: probe says {seconds} s");
        }
        let audio = decode_audio(&fixture(name), 16_000, &limits).unwrap_or_else(|e| panic!("{e}"));
        assert!((audio.seconds() - 0.5).abs() < 0.1, "{name}: {} s", audio.seconds());
        let middle = &audio.samples[1600..6400];
        assert_eq!(dominant(middle, 16_000), 1000.0, "{name}");
        let peak = middle.iter().fold(0f32, |m, v| m.max(v.abs()));
        assert!(peak > 0.05 && peak <= 1.05, "{name}: peak {peak}");
    }
}

#[test]
fn a_two_hour_header_is_rejected_without_decoding() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "lecture.wav", &wav_header(44_100, 2, 2 * 3600 * 44_100));
    let limits = MediaLimits::default();
    let expected = MediaProblem::TooLong { seconds: Some(7200.0), limit: 1800.0 };
    assert_eq!(problem(decode_audio(&path, 16_000, &limits), "lecture.wav"), expected);
    assert_eq!(problem(media::probe(&path, &limits), "lecture.wav"), expected);
    assert_eq!(
        decode_audio(&path, 16_000, &limits).unwrap_err().to_string(),
        "lecture.wav: the clip is 2 h 0 min long and the limit is 30 min (media.audio_seconds); trim it and try again"
    );
}

#[test]
fn compressed_clips_are_held_to_the_duration_limit() {
    // (Containers that don't record their length are checked while decoding: see the unit
    // test in media/audio.rs; every fixture here records it.)
    let limits = MediaLimits { max_audio_seconds: 0.2, ..Default::default() };
    for name in ["sine1k.mp3", "sine1k.flac", "sine1k.ogg", "sine1k.m4a", "sine1k.aac"] {
        assert!(matches!(
            problem(decode_audio(&fixture(name), 16_000, &limits), name),
            MediaProblem::TooLong { seconds: Some(s), limit } if limit == 0.2 && (s - 0.5).abs() < 0.1
        ));
    }
    let message = decode_audio(&fixture("sine1k.flac"), 16_000, &limits).unwrap_err().to_string();
    assert_eq!(message, "sine1k.flac: the clip is 0.5 s long and the limit is 0.2 s (media.audio_seconds); trim it and try again");
}

#[test]
fn empty_unsupported_and_foreign_audio_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let limits = MediaLimits::default();

    let silent = write(dir.path(), "clip.wav", &wav_header(16_000, 1, 0));
    assert_eq!(problem(decode_audio(&silent, 16_000, &limits), "clip.wav"), MediaProblem::NoAudio);
    assert_eq!(
        decode_audio(&silent, 16_000, &limits).unwrap_err().to_string(),
        "clip.wav: the clip has no audio samples; record or pick another clip"
    );

    // A header promising a second of audio, and nothing after it.
    let cut = write(dir.path(), "cut.wav", &wav_header(16_000, 1, 16_000));
    let got = problem(decode_audio(&cut, 16_000, &limits), "cut.wav");
    assert!(matches!(got, MediaProblem::Corrupt { .. }), "{got:?}");

    let unknown = write(dir.path(), "voice.xyz", b"neither audio nor an image, just words in a file");
    assert_eq!(problem(decode_audio(&unknown, 16_000, &limits), "voice.xyz"), MediaProblem::UnsupportedAudio);
    assert_eq!(
        decode_audio(&unknown, 16_000, &limits).unwrap_err().to_string(),
        "voice.xyz: unsupported audio format; use WAV, MP3, FLAC, Ogg Vorbis or AAC/M4A"
    );
    assert_eq!(problem(media::probe(&unknown, &limits), "voice.xyz"), MediaProblem::Unrecognised);
    for (name, bytes) in [
        ("IMG_0001.HEIC", &b"\0\0\0\x18ftypheic and then some more bytes"[..]),
        ("IMG_0002.heic", &b"\0\0\0\x18ftypheic\0\0\0\0mif1heic\0\0\0\x08meta\0\0\0\x08mdat"[..]),
    ] {
        let heic = write(dir.path(), name, bytes);
        assert_eq!(problem(media::probe(&heic, &limits), name), MediaProblem::UnsupportedImage);
        // The second trips an arithmetic overflow in symphonia's MP4 reader: still an error value.
        problem(decode_audio(&heic, 16_000, &limits), name);
    }

    let opus = MediaProblem::UnsupportedCodec { codec: "Opus".into() };
    assert_eq!(problem(decode_audio(&fixture("sine1k.opus.ogg"), 16_000, &limits), "sine1k.opus.ogg"), opus);
    assert_eq!(problem(media::probe(&fixture("sine1k.opus.ogg"), &limits), "sine1k.opus.ogg"), opus);
}

/// A damaged or cut M4A, through the system's FFmpeg where there is one and through the
/// built-in decoder: audio from what survives, or a typed error; never a panic.
#[test]
fn damaged_and_cut_m4a_give_audio_or_a_typed_error_on_either_decoder() {
    let dir = tempfile::tempdir().unwrap();
    let limits = MediaLimits::default();
    let original = std::fs::read(fixture("sine1k.m4a")).unwrap();
    let header = original.windows(4).position(|w| w == b"mdat").expect("an mdat box") - 4;
    let size = u32::from_be_bytes(original[header..header + 4].try_into().unwrap()) as usize;
    let payload = header + 8..header + size;
    let mut scrambled = original.clone();
    // Every AAC payload byte replaced by a pattern no encoder writes.
    for (i, byte) in scrambled[payload.clone()].iter_mut().enumerate() {
        *byte = (i as u8).wrapping_mul(151) ^ 0x5a;
    }
    // The file cut a third of the way into its audio (the index, after it, lost: no container).
    let cut = original[..payload.start + payload.len() / 3].to_vec();
    // Two thirds of the audio gone but the index kept, so that its last packets point past the
    // end or into the index.
    let mut short = original[..payload.start + payload.len() / 3].to_vec();
    short[header..header + 4].copy_from_slice(&((8 + payload.len() / 3) as u32).to_be_bytes());
    short.extend_from_slice(&original[payload.end..]);
    for (name, bytes) in [("scrambled.m4a", scrambled), ("cut.m4a", cut), ("short.m4a", short)] {
        let path = write(dir.path(), name, &bytes);
        for (decoder, result) in
            [("default", decode_audio(&path, 16_000, &limits)), ("built-in", media::decode_audio_builtin(&path, 16_000, &limits))]
        {
            match result {
                Ok(audio) => {
                    assert!(audio.samples.iter().all(|s| s.is_finite()), "{name} ({decoder})");
                    eprintln!("{name} ({decoder}): {} samples", audio.samples.len());
                }
                Err(error) => {
                    let got = problem(Err::<(), _>(error), name);
                    eprintln!("{name} ({decoder}): {got}");
                    let expected = matches!(got, MediaProblem::Corrupt { .. } | MediaProblem::NoAudio)
                        || (name == "cut.m4a" && got == MediaProblem::UnsupportedAudio);
                    assert!(expected, "{name} ({decoder}): {got:?}");
                }
            }
        }
    }
    // Intact, the two decoders agree closely (the corpus test holds each to the reference).
    let system = decode_audio(&fixture("sine1k.m4a"), 16_000, &limits).unwrap();
    let builtin = media::decode_audio_builtin(&fixture("sine1k.m4a"), 16_000, &limits).unwrap();
    assert_eq!(system.samples.len(), builtin.samples.len());
    let apart = system.samples.iter().zip(&builtin.samples).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    eprintln!("sine1k.m4a: {:?} and the built-in decoder {apart:e} apart", media::system_ffmpeg_version());
    assert!(apart < 1e-4, "{apart}");
}

#[test]
fn content_hash_is_sha256_hex_of_the_bytes() {
    let path = fixture("quadrants.png");
    let hash = media::hash_file(&path).unwrap();
    assert_eq!(hash, media::content_hash(&std::fs::read(&path).unwrap()));
    assert_eq!(hash.len(), 64);
    assert!(hash.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
}

/// symphonia's MP4 reader allocates a sample table's entries from its count before reading
/// them; a count the box cannot hold is refused first, on every path into that reader: probe,
/// decode from a file and from bytes, an MP4 after leading junk (symphonia looks for `ftyp`
/// anywhere in the first MiB) and a `moov` cut off by the end of the file.
#[test]
fn an_m4a_whose_sample_table_counts_more_than_it_holds_is_refused_as_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let limits = MediaLimits::default();
    let lying = m4a_with_lying_stsc();
    let after_junk = [&b"junk before the movie"[..], &lying].concat();
    let mut cut = lying.clone();
    let moov = cut.windows(4).position(|w| w == b"moov").unwrap() - 4;
    cut[moov..moov + 4].copy_from_slice(&1000u32.to_be_bytes());
    let uniform_then_listed = {
        // A uniform size needs no table; a listed one needs 4 bytes a sample.
        let stsz = |size: u32| mp4_box(b"stsz", &[[0; 4], size.to_be_bytes(), 1_000_000u32.to_be_bytes()].concat());
        let file = |size| [mp4_box(b"ftyp", b"M4A \0\0\0\0"), mp4_box(b"moov", &mp4_box(b"stbl", &stsz(size)))].concat();
        (file(4), file(0))
    };
    let expected = "the file is damaged or incomplete ('stsc' says 4294967295 entries and holds fewer)";
    for (name, bytes) in [("lying.m4a", &lying), ("after_junk.m4a", &after_junk), ("cut.m4a", &cut)] {
        let path = write(dir.path(), name, bytes);
        for result in [
            decode_audio(&path, 16_000, &limits).map(|_| ()),
            media::decode_audio_bytes(name, bytes.clone(), 16_000, &limits).map(|_| ()),
            media::probe(&path, &limits).map(|_| ()),
        ] {
            let got = problem(result, name);
            // Probing a movie reads its video track first, and that reader finds the cut.
            let detail = if got.to_string().contains("(moov) is cut short") { "the file is damaged" } else { expected };
            assert!(got.to_string().starts_with(detail), "{name}: {got}");
        }
    }
    let listed = problem(media::decode_audio_bytes("listed.m4a", uniform_then_listed.1, 16_000, &limits), "listed.m4a");
    assert!(listed.to_string().contains("'stsz' says 1000000 entries and holds fewer"), "{listed}");
    let uniform = problem(media::decode_audio_bytes("uniform.m4a", uniform_then_listed.0, 16_000, &limits), "uniform.m4a");
    assert!(!uniform.to_string().contains("'stsz'"), "{uniform}");
}
