//! Media: images, audio clips and videos, read from bytes in memory as the engine reads an
//! attachment (`probe` when it is attached, then the decoder the engine runs for its kind). The
//! limits are small so that each input stays fast; they are checked before decoding, so what
//! they let through is what a larger limit lets through at a smaller size.

use confab_media::{decode_audio_bytes, decode_image_bytes, decode_video, probe, probe_video, MediaLimits, MediaSource};

fn limits() -> MediaLimits {
    MediaLimits {
        max_file_bytes: 4 << 20,
        max_image_pixels: 1 << 18,
        max_audio_seconds: 10.0,
        max_video_seconds: 60.0,
        max_video_frames: 256,
        max_video_frame_pixels: 1 << 18,
    }
}

/// `name`'s extension is what a file's would be: the audio probe takes it as a hint.
fn source(name: &str, data: &[u8]) -> MediaSource {
    MediaSource::bytes(name, data.to_vec())
}

fn image(name: &str, data: &[u8]) {
    let limits = limits();
    let _ = probe(&source(name, data), &limits);
    let _ = decode_image_bytes(name, data, &limits);
}

pub fn image_png(data: &[u8]) {
    image("a.png", data)
}

pub fn image_jpeg(data: &[u8]) {
    image("a.jpg", data)
}

pub fn image_webp(data: &[u8]) {
    image("a.webp", data)
}

pub fn image_gif(data: &[u8]) {
    image("a.gif", data)
}

pub fn image_bmp(data: &[u8]) {
    image("a.bmp", data)
}

pub fn image_tiff(data: &[u8]) {
    image("a.tiff", data)
}

/// The rate the audio towers take.
const SAMPLE_RATE: u32 = 16_000;

fn audio(name: &str, data: &[u8]) {
    let limits = limits();
    let _ = probe(&source(name, data), &limits);
    let _ = decode_audio_bytes(name, data.to_vec(), SAMPLE_RATE, &limits);
}

pub fn audio_wav(data: &[u8]) {
    audio("a.wav", data)
}

pub fn audio_mp3(data: &[u8]) {
    audio("a.mp3", data)
}

pub fn audio_flac(data: &[u8]) {
    audio("a.flac", data)
}

pub fn audio_ogg(data: &[u8]) {
    audio("a.ogg", data)
}

/// AAC in MP4 (through the system's FFmpeg where there is one, else symphonia) or raw ADTS.
pub fn audio_m4a(data: &[u8]) {
    audio("a.m4a", data)
}

/// The headers, then the first and last frames (the last decodes every frame before it).
fn video(name: &str, data: &[u8]) {
    let limits = limits();
    let source = source(name, data);
    let _ = probe(&source, &limits);
    if let Ok(info) = probe_video(&source, &limits) {
        let last = info.frames.saturating_sub(1);
        let _ = decode_video(&source, &[0, last], &limits);
    }
}

/// MP4/MOV boxes, H.264 frames through OpenH264 (HEVC's headers only, off macOS).
pub fn video_mp4(data: &[u8]) {
    video("a.mp4", data)
}

/// Animated GIF and WebP, read as videos.
pub fn video_animated(data: &[u8]) {
    video("a.gif", data)
}

/// An `avcC` payload (and the same bytes as a sample of NAL units).
pub fn video_h264_config(data: &[u8]) {
    let _ = confab_media::video::fuzzing::h264_configuration(data);
}

/// An `hvcC` payload (and the same bytes as a sample of NAL units).
pub fn video_hevc_config(data: &[u8]) {
    let _ = confab_media::video::fuzzing::hevc_configuration(data);
}
