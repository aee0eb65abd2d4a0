//! Bytes in memory read as the file they came from: the same pixels, samples, frames, headers
//! and content hash, and the same limits checked with the same problems, named by the name the
//! bytes were given. (The server hands the engine the bytes a request carried; the app hands it
//! the files it stores; an image sent either way must be one item to the caches.)

use std::path::{Path, PathBuf};

use confab_media::{
    decode_audio, decode_audio_builtin, decode_image, decode_video, describe_video, hash_file, probe, probe_video, video_thumbnail,
    MediaError, MediaItem, MediaKind, MediaLimits, MediaProblem, MediaSource,
};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/media").join(name)
}

fn video(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/video").join(name)
}

/// The file's bytes in memory, under its own name.
fn in_memory(path: &Path) -> MediaSource {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    MediaSource::bytes(name, std::fs::read(path).unwrap())
}

#[test]
fn images_from_bytes_are_the_files_pixels_and_headers() {
    let limits = MediaLimits::default();
    for name in ["quadrants.png", "quadrants.jpg", "quadrants.bmp", "quadrants.tiff", "quadrants.webp", "orientation6.jpg", "animated.gif"]
    {
        let path = fixture(name);
        let bytes = in_memory(&path);
        assert!(decode_image(&bytes, &limits).unwrap() == decode_image(&path, &limits).unwrap(), "{name}: pixels differ");
        assert_eq!(probe(&bytes, &limits).unwrap(), probe(&path, &limits).unwrap(), "{name}");
        assert_eq!(bytes.content_hash().unwrap(), hash_file(&path).unwrap(), "{name}");
    }
}

#[test]
fn audio_from_bytes_is_the_files_samples_and_headers() {
    let limits = MediaLimits::default();
    for name in ["sine1k.flac", "sine1k.mp3", "sine1k.ogg", "sine1k.m4a", "sine1k.aac"] {
        let path = fixture(name);
        let bytes = in_memory(&path);
        assert_eq!(decode_audio(&bytes, 16_000, &limits).unwrap(), decode_audio(&path, 16_000, &limits).unwrap(), "{name}");
        assert_eq!(probe(&bytes, &limits).unwrap(), probe(&path, &limits).unwrap(), "{name}");
    }
    // AAC through the built-in decoder too (the system's FFmpeg is not everywhere).
    let path = fixture("sine1k.m4a");
    let builtin = decode_audio_builtin(&in_memory(&path), 16_000, &limits).unwrap();
    assert_eq!(builtin, decode_audio_builtin(&path, 16_000, &limits).unwrap());
    // The unsupported codec is refused by name from memory as from the file.
    let opus = fixture("sine1k.opus.ogg");
    let from_bytes = probe(&in_memory(&opus), &limits).unwrap_err().to_string();
    assert_eq!(from_bytes, probe(&opus, &limits).unwrap_err().to_string());
}

#[test]
fn videos_from_bytes_are_the_files_frames() {
    let limits = MediaLimits::default();
    // h264_long: 60 frames, enough that decoding all of them spreads pieces over threads, each
    // reading the bytes through its own cursor.
    let cases: [(&str, Vec<u64>); 5] = [
        ("h264_baseline.mp4", vec![0, 3, 9, 19]),
        ("h264_rotated.mp4", vec![0, 10]),
        ("h264_fragmented.mp4", vec![0, 5, 19]),
        ("h264_long.mp4", (0..60).collect()),
        ("animated.webp", vec![0, 1, 2]),
    ];
    for (name, indices) in cases {
        let path = video(name);
        let bytes = in_memory(&path);
        assert_eq!(probe_video(&bytes, &limits).unwrap(), probe_video(&path, &limits).unwrap(), "{name}");
        assert_eq!(probe(&bytes, &limits).unwrap(), probe(&path, &limits).unwrap(), "{name}");
        let (from_bytes, from_file) = (decode_video(&bytes, &indices, &limits).unwrap(), decode_video(&path, &indices, &limits).unwrap());
        assert_eq!(from_bytes.info, from_file.info, "{name}");
        assert_eq!(from_bytes.timestamps, from_file.timestamps, "{name}");
        assert!(from_bytes.frames == from_file.frames, "{name}: frames differ");
        assert_eq!(bytes.content_hash().unwrap(), hash_file(&path).unwrap(), "{name}");
    }
    let path = video("h264_main.mov");
    assert_eq!(video_thumbnail(&in_memory(&path), 64, &limits).unwrap(), video_thumbnail(&path, 64, &limits).unwrap());
    // HEVC's headers are read from memory everywhere (its frames need macOS's decoder, which
    // is given the samples, not the file).
    let path = video("hevc_main.mp4");
    assert_eq!(describe_video(&in_memory(&path), &limits).unwrap(), describe_video(&path, &limits).unwrap());
}

#[test]
fn limits_hold_for_bytes_and_name_the_given_name() {
    let limits = MediaLimits { max_file_bytes: 100, ..Default::default() };
    let png = std::fs::read(fixture("quadrants.png")).unwrap();
    assert!(png.len() > 100);
    let expected = MediaProblem::FileTooLarge { bytes: png.len() as u64, limit: 100 };
    let source = MediaSource::bytes("image.png", png);
    for result in [decode_image(&source, &limits).map(|_| ()), probe(&source, &limits).map(|_| ())] {
        match result {
            Err(MediaError::Media { file, problem }) => assert_eq!((file.as_str(), problem), ("image.png", expected.clone())),
            other => panic!("expected the size limit, got {other:?}"),
        }
    }
    let empty = MediaSource::bytes("audio.wav", Vec::new());
    match decode_audio(&empty, 16_000, &MediaLimits::default()) {
        Err(MediaError::Media { file, problem }) => assert_eq!((file.as_str(), problem), ("audio.wav", MediaProblem::EmptyFile)),
        other => panic!("expected an empty-file error, got {other:?}"),
    }
}

#[test]
fn an_item_of_bytes_has_the_hash_of_the_file_they_came_from() {
    let path = fixture("quadrants.jpg");
    let bytes = std::fs::read(&path).unwrap();
    let from_bytes = MediaItem::from_bytes(MediaKind::Image, "image.jpg", bytes);
    assert_eq!(from_bytes.content_hash().unwrap(), MediaItem::image(&path).content_hash().unwrap());
    assert_eq!(from_bytes.file_name(), "image.jpg");
}
