//! Video files: MP4/MOV/M4V (H.264, plain or fragmented), animated GIF and animated WebP, read
//! as the frames a model's processor samples. Limits (duration, frame count, frame size) are
//! checked from the headers before any frame is decoded; `decode_video` then decodes only as far
//! as the last sampled frame, skipping groups of pictures that hold no sampled frame, and
//! converts only the sampled ones to RGB.
//!
//! Other codecs in MP4/MOV (HEVC, AV1, VP9, ProRes, ...) are refused by name from the sample
//! description; other containers (WebM/Matroska, AVI, MPEG-TS) from their first bytes.
//!
//! Frame indices count frames in display order, as PyAV's `container.decode(video=0)` yields
//! them (and so as transformers' video loaders index them). Timestamps are seconds from the
//! first displayed frame. Rotated phone clips come out upright: the track's display matrix is
//! applied, and `VideoInfo`'s size is the displayed one.

mod animated;
mod h264;
mod h264_track;
mod mp4;
mod yuv;

use std::fs::File;
use std::io::Read;
use std::path::Path;

use ::image::metadata::Orientation;
use ::image::{DynamicImage, RgbImage};

use self::mp4::VideoTrack;
pub use self::yuv::YuvFrame;
use super::{display_name, guarded, MediaLimits};
use crate::error::{EngineError, MediaProblem, Result};

/// What the container says about a video, read without decoding frames.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct VideoInfo {
    /// The codec or format as a person knows it: "H.264", "GIF", "WebP".
    pub codec: String,
    pub mime: &'static str,
    /// Frame size as displayed (rotation applied).
    pub width: u32,
    pub height: u32,
    /// Frames in the file.
    pub frames: u64,
    /// Average frames per second (frames / seconds).
    pub fps: f64,
    pub seconds: f64,
    /// Clockwise quarter turns applied to stored frames to show them upright (phone clips: 1).
    pub rotation: u8,
}

/// The sampled frames of a video.
#[derive(Debug, Clone)]
pub struct Video {
    pub info: VideoInfo,
    /// The frames at the requested indices, in order.
    pub frames: Vec<RgbImage>,
    /// Each returned frame's presentation time, in seconds from the start.
    pub timestamps: Vec<f64>,
}

/// Reads a video's headers and checks them against `limits`.
pub fn probe_video(path: &Path, limits: &MediaLimits) -> Result<VideoInfo> {
    let file = display_name(path);
    guarded(&file, || Ok(open(path, &file, limits)?.info))
}

/// Decodes the frames at `indices` (ascending, each below `probe_video`'s `frames`; repeats are
/// allowed and give the frame again).
///
/// Every frame is held at full size until the call returns; a caller that shrinks frames can
/// use `decode_video_with` to hold one at a time.
pub fn decode_video(path: &Path, indices: &[u64], limits: &MediaLimits) -> Result<Video> {
    let (mut frames, mut timestamps) = (Vec::with_capacity(indices.len()), Vec::with_capacity(indices.len()));
    let info = decode_video_with(path, indices, limits, |_, time, frame| {
        frames.push(frame);
        timestamps.push(time);
        Ok(())
    })?;
    Ok(Video { info, frames, timestamps })
}

/// Decodes the frames at `indices` (as `decode_video`) and hands each to `each(index, seconds,
/// frame)` in order as soon as it is decoded; an error from `each` stops decoding.
pub fn decode_video_with(
    path: &Path,
    indices: &[u64],
    limits: &MediaLimits,
    mut each: impl FnMut(u64, f64, RgbImage) -> Result<()>,
) -> Result<VideoInfo> {
    let file = display_name(path);
    guarded(&file, || {
        let opened = open(path, &file, limits)?;
        check_indices(&opened.info, indices)?;
        let mut deliver = |index: u64, frame: RgbImage| each(index, opened.timestamps[index as usize], frame);
        match &opened.source {
            Source::Mp4(track, stream) => {
                let convert = |planes: YuvFrame| upright(yuv::to_rgb(&planes, stream.colour), track.orientation);
                h264_track::decode_frames(&stream.track(&file, path, track), indices, &convert, &mut deliver)?;
            }
            Source::Animated(animation, data) => {
                animated::decode_frames(&file, animation.format, data, indices, &mut deliver)?;
            }
        }
        Ok(opened.info)
    })
}

/// The Y, U and V planes of H.264 frames at `indices`, as stored (no rotation): what a
/// comparison with another decoder checks, since H.264 decoding is exact.
pub fn decode_video_planes(path: &Path, indices: &[u64], limits: &MediaLimits) -> Result<Vec<YuvFrame>> {
    let file = display_name(path);
    guarded(&file, || {
        let opened = open(path, &file, limits)?;
        check_indices(&opened.info, indices)?;
        match &opened.source {
            Source::Mp4(track, stream) => {
                let mut frames = Vec::with_capacity(indices.len());
                h264_track::decode_frames(&stream.track(&file, path, track), indices, &|planes| planes, &mut |_, planes| {
                    frames.push(planes);
                    Ok(())
                })?;
                Ok(frames)
            }
            Source::Animated(..) => Err(EngineError::media(&file, MediaProblem::UnsupportedVideoCodec { codec: opened.info.codec.clone() })),
        }
    })
}

/// Whether a file's first bytes are an MP4/QuickTime box: `ftyp`, or for QuickTime files older
/// than it (some cameras still write them), a movie, data or padding box.
pub(crate) fn is_movie(start: &[u8]) -> bool {
    matches!(start.get(4..8), Some(b"ftyp" | b"moov" | b"mdat" | b"wide" | b"free" | b"skip" | b"pnot"))
}

/// An animated GIF or WebP with more than one frame (a still one is an image); `Ok(None)` for
/// other files. Reads the whole file, which the caller has checked against the size limit.
pub(crate) fn probe_animation(path: &Path, start: &[u8], limits: &MediaLimits) -> Result<Option<VideoInfo>> {
    let Some(format) = animated::Format::sniff(start) else { return Ok(None) };
    let file = display_name(path);
    let data = read_limited(path, &file, limits)?;
    guarded(&file, || {
        let animation = animated::read_header(&file, format, &data, limits.max_video_frames)?;
        if format == animated::Format::Gif && animation.delays.is_empty() {
            return Err(EngineError::media(&file, MediaProblem::NoFrames));
        }
        if animation.delays.len() <= 1 {
            return Ok(None);
        }
        Ok(Some(animation_info(&file, &animation, limits)?))
    })
}

/// Names a container Confab does not read from its first bytes (WebM/MKV, AVI, MPEG-TS).
pub(crate) fn foreign_container(start: &[u8]) -> Option<&'static str> {
    if start.starts_with(&[0x1A, 0x45, 0xDF, 0xA3]) {
        Some("WebM/Matroska")
    } else if start.len() >= 12 && &start[0..4] == b"RIFF" && &start[8..12] == b"AVI " {
        Some("AVI")
    } else if start.first() == Some(&0x47) && start.get(188) == Some(&0x47) {
        Some("MPEG transport stream")
    } else if start.starts_with(&[0, 0, 1, 0xBA]) {
        Some("MPEG program stream")
    } else if start.starts_with(b"FLV") {
        Some("Flash video")
    } else {
        None
    }
}

/// A probed file, ready to decode.
struct Opened {
    info: VideoInfo,
    /// Every frame's presentation time in seconds, by display index.
    timestamps: Vec<f64>,
    source: Source,
}

enum Source {
    /// The track, with its samples reordered by display time, and the decoder setup.
    Mp4(VideoTrack, H264Stream),
    Animated(animated::Animation, Vec<u8>),
}

/// An H.264 track's decoder configuration and what its SPS says.
struct H264Stream {
    config: h264::AvcConfig,
    colour: yuv::ColourSignal,
    /// Sample (decode order) index of each display index.
    display_order: Vec<usize>,
}

impl H264Stream {
    fn track<'a>(&'a self, file: &'a str, path: &'a Path, track: &'a VideoTrack) -> h264_track::Track<'a> {
        h264_track::Track { file, path, track, config: &self.config, display_order: &self.display_order }
    }
}

fn open(path: &Path, file: &str, limits: &MediaLimits) -> Result<Opened> {
    let bytes = std::fs::metadata(path).map_err(|e| unreadable(file, e))?.len();
    limits.check_bytes(file, bytes)?;
    let mut reader = File::open(path).map_err(|e| unreadable(file, e))?;
    let mut start = Vec::with_capacity(512);
    reader.by_ref().take(512).read_to_end(&mut start).map_err(|e| unreadable(file, e))?;
    if is_movie(&start) {
        return open_mp4(file, &mut reader, bytes, limits)?.ok_or_else(|| EngineError::media(file, MediaProblem::NoFrames));
    }
    if let Some(format) = animated::Format::sniff(&start) {
        let data = read_limited(path, file, limits)?;
        let animation = animated::read_header(file, format, &data, limits.max_video_frames)?;
        if animation.delays.is_empty() {
            return Err(EngineError::media(file, MediaProblem::NoFrames));
        }
        let info = animation_info(file, &animation, limits)?;
        return Ok(Opened { info, timestamps: animation.timestamps(), source: Source::Animated(animation, data) });
    }
    if let Some(format) = foreign_container(&start) {
        return Err(EngineError::media(file, MediaProblem::UnsupportedVideoFormat { format: format.into() }));
    }
    Err(EngineError::media(file, MediaProblem::UnsupportedVideoFormat { format: "unknown".into() }))
}

fn animation_info(file: &str, animation: &animated::Animation, limits: &MediaLimits) -> Result<VideoInfo> {
    let frames = animation.delays.len() as u64;
    check_frames(file, frames, limits)?;
    check_frame_size(file, animation.width, animation.height, limits)?;
    let seconds = animation.seconds();
    check_seconds(file, seconds, limits)?;
    let (codec, mime) = match animation.format {
        animated::Format::Gif => ("GIF", "image/gif"),
        animated::Format::WebP => ("WebP", "image/webp"),
    };
    Ok(VideoInfo {
        codec: codec.into(),
        mime,
        width: animation.width,
        height: animation.height,
        frames,
        fps: if seconds > 0.0 { frames as f64 / seconds } else { 0.0 },
        seconds,
        rotation: 0,
    })
}

/// An MP4/MOV's video, or `None` when the movie has no video track (an M4A: audio).
pub(crate) fn probe_mp4(path: &Path, limits: &MediaLimits) -> Result<Option<VideoInfo>> {
    let file = display_name(path);
    guarded(&file, || {
        let bytes = std::fs::metadata(path).map_err(|e| unreadable(&file, e))?.len();
        limits.check_bytes(&file, bytes)?;
        let mut reader = File::open(path).map_err(|e| unreadable(&file, e))?;
        Ok(open_mp4(&file, &mut reader, bytes, limits)?.map(|opened| opened.info))
    })
}

fn open_mp4(file: &str, reader: &mut File, bytes: u64, limits: &MediaLimits) -> Result<Option<Opened>> {
    let mut sps = None;
    let mut check = |header: &mp4::TrackHeader| -> Result<()> {
        let codec = codec_name(&header.entry);
        if codec != "H.264" {
            return Err(EngineError::media(file, MediaProblem::UnsupportedVideoCodec { codec }));
        }
        check_frame_size(file, header.width, header.height, limits)?;
        // The SPS is the size the decoder will produce; read before anything is decoded.
        if let Some(config) = header.config {
            let config = h264::AvcConfig::parse(config).map_err(|d| corrupt(file, d))?;
            if let Some(first) = config.sps.first() {
                let parsed = h264::Sps::parse(first).map_err(|d| corrupt(file, format!("its SPS: {d}")))?;
                check_frame_size(file, parsed.width, parsed.height, limits)?;
                if let Some(codec) = parsed.unsupported() {
                    return Err(EngineError::media(file, MediaProblem::UnsupportedVideoCodec { codec }));
                }
                sps = Some(parsed);
            }
        }
        check_frames(file, header.frames, limits)?;
        check_seconds(file, header.seconds, limits)?;
        Ok(())
    };
    let movie = mp4::read_movie(file, reader, bytes, limits.max_video_frames, &mut check)?;
    let Some(track) = movie.video else { return Ok(None) };
    if track.samples.is_empty() {
        return Err(EngineError::media(file, MediaProblem::NoFrames));
    }
    let config = track
        .config
        .as_deref()
        .ok_or_else(|| corrupt(file, "its H.264 track has no decoder configuration (avcC)".into()))
        .and_then(|c| h264::AvcConfig::parse(c).map_err(|d| corrupt(file, d)))?;
    let Some(sps) = sps else {
        // avc3 streams carry their parameter sets in the frames; not what phones write.
        return Err(corrupt(file, "its H.264 configuration has no sequence parameter set".into()));
    };
    tracing::debug!(file, profile = sps.profile_name(), width = sps.width, height = sps.height, frames = track.samples.len(), "H.264 track");

    let mut display_order: Vec<usize> = (0..track.samples.len()).collect();
    display_order.sort_by_key(|&i| (track.samples[i].time, i));
    let first_time = track.samples[display_order[0]].time;
    let timestamps: Vec<f64> =
        display_order.iter().map(|&i| track.samples[i].time.saturating_sub(first_time) as f64 / track.timescale as f64).collect();

    let frames = track.samples.len() as u64;
    let seconds = if track.seconds > 0.0 { track.seconds } else { movie.seconds };
    let (width, height) = match track.orientation {
        Orientation::Rotate90 | Orientation::Rotate270 | Orientation::Rotate90FlipH | Orientation::Rotate270FlipH => {
            (sps.height, sps.width)
        }
        _ => (sps.width, sps.height),
    };
    let info = VideoInfo {
        codec: "H.264".into(),
        mime: if is_quicktime(reader) { "video/quicktime" } else { "video/mp4" },
        width,
        height,
        frames,
        fps: if seconds > 0.0 { frames as f64 / seconds } else { 0.0 },
        seconds,
        rotation: match track.orientation {
            Orientation::Rotate90 | Orientation::Rotate90FlipH => 1,
            Orientation::Rotate180 => 2,
            Orientation::Rotate270 | Orientation::Rotate270FlipH => 3,
            _ => 0,
        },
    };
    let stream = H264Stream { config, colour: sps.colour, display_order };
    Ok(Some(Opened { info, timestamps, source: Source::Mp4(track, stream) }))
}

/// The `ftyp` major brand says QuickTime.
fn is_quicktime(reader: &mut File) -> bool {
    use std::io::{Seek, SeekFrom};
    let mut brand = [0u8; 4];
    reader.seek(SeekFrom::Start(8)).is_ok() && reader.read_exact(&mut brand).is_ok() && &brand == b"qt  "
}

/// A sample entry's codec, as a person knows it.
fn codec_name(entry: &[u8; 4]) -> String {
    match entry {
        b"avc1" | b"avc3" => "H.264",
        b"hvc1" | b"hev1" => "HEVC (H.265)",
        b"dvh1" | b"dvhe" => "Dolby Vision (HEVC)",
        b"av01" => "AV1",
        b"vp09" => "VP9",
        b"vp08" => "VP8",
        b"apch" | b"apcn" | b"apcs" | b"apco" | b"ap4h" | b"ap4x" => "Apple ProRes",
        b"mp4v" => "MPEG-4 Part 2",
        b"jpeg" | b"mjpa" | b"mjpb" => "Motion JPEG",
        b"s263" | b"h263" => "H.263",
        b"encv" => "encrypted video (DRM)",
        other => return format!("'{}'", mp4::fourcc(other)),
    }
    .into()
}

/// Turns a decoded frame as the track's display matrix says.
fn upright(frame: RgbImage, orientation: Orientation) -> RgbImage {
    if orientation == Orientation::NoTransforms {
        return frame;
    }
    let mut image = DynamicImage::ImageRgb8(frame);
    image.apply_orientation(orientation);
    image.into_rgb8()
}

fn check_indices(info: &VideoInfo, indices: &[u64]) -> Result<()> {
    if indices.windows(2).any(|w| w[0] > w[1]) {
        return Err(EngineError::Internal(format!("video frame indices must ascend, got {indices:?}")));
    }
    if let Some(&last) = indices.last() {
        if last >= info.frames {
            return Err(EngineError::Internal(format!("frame {last} asked of a video with {} frames", info.frames)));
        }
    }
    Ok(())
}

fn check_frames(file: &str, frames: u64, limits: &MediaLimits) -> Result<()> {
    if frames > limits.max_video_frames {
        return Err(EngineError::media(file, MediaProblem::TooManyFrames { frames, limit: limits.max_video_frames }));
    }
    Ok(())
}

fn check_frame_size(file: &str, width: u32, height: u32, limits: &MediaLimits) -> Result<()> {
    if width as u64 * height as u64 > limits.max_video_frame_pixels {
        return Err(EngineError::media(
            file,
            MediaProblem::FrameTooLarge { width, height, limit: limits.max_video_frame_pixels },
        ));
    }
    Ok(())
}

fn check_seconds(file: &str, seconds: f64, limits: &MediaLimits) -> Result<()> {
    if seconds > limits.max_video_seconds {
        return Err(EngineError::media(file, MediaProblem::VideoTooLong { seconds, limit: limits.max_video_seconds }));
    }
    Ok(())
}

/// A GIF/WebP is read whole (they are small); the size limit is checked first.
fn read_limited(path: &Path, file: &str, limits: &MediaLimits) -> Result<Vec<u8>> {
    let bytes = std::fs::metadata(path).map_err(|e| unreadable(file, e))?.len();
    limits.check_bytes(file, bytes)?;
    std::fs::read(path).map_err(|e| unreadable(file, e))
}

fn corrupt(file: &str, detail: String) -> EngineError {
    EngineError::media(file, MediaProblem::Corrupt { detail })
}

fn unreadable(file: &str, error: std::io::Error) -> EngineError {
    EngineError::media(file, MediaProblem::Unreadable { detail: error.to_string() })
}
