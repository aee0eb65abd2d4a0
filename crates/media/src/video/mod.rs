//! Video files: MP4/MOV/M4V (H.264 everywhere, HEVC on macOS; plain or fragmented), animated GIF
//! and animated WebP, read as the frames a model's processor samples. Limits (duration, frame
//! count, frame size) are checked from the headers before any frame is decoded; `decode_video`
//! then decodes only as far as the last sampled frame, skipping groups of pictures that hold no
//! sampled frame, and converts only the sampled ones to RGB.
//!
//! H.264 is decoded by OpenH264 (`h264.rs`), HEVC by macOS's VideoToolbox (`videotoolbox.rs`);
//! both feed the same track decoder (`track.rs`) and the same YUV->RGB arithmetic (`yuv.rs`).
//! HEVC headers are read on every system (`hevc.rs`), so `describe_video` tells what an HEVC
//! file is anywhere; elsewhere than macOS, reading its frames is refused with
//! `MediaProblem::VideoCodecNeedsMac`. Other codecs in MP4/MOV (AV1, VP9, ProRes, ...) are
//! refused by name from the sample description; other containers (WebM/Matroska, AVI, MPEG-TS)
//! from their first bytes.
//!
//! Frame indices count frames in display order, as PyAV's `container.decode(video=0)` yields
//! them (and so as transformers' video loaders index them). Timestamps are seconds from the
//! first displayed frame. Rotated phone clips come out upright: the track's display matrix is
//! applied, and `VideoInfo`'s size is the displayed one.

mod animated;
#[doc(hidden)]
pub mod fuzzing;
mod h264;
mod hevc;
mod mp4;
mod nal;
mod track;
#[cfg(target_os = "macos")]
mod videotoolbox;
mod yuv;

pub(crate) use mp4::check_sample_tables;

use std::io::{Read, Seek, SeekFrom};

use ::image::metadata::Orientation;
use ::image::{DynamicImage, RgbImage};

use self::mp4::VideoTrack;
pub use self::yuv::YuvFrame;
use super::{guarded, MediaLimits, MediaSource, ToMediaSource};
use crate::error::{MediaError, MediaProblem, Result};
use crate::source::{unreadable, SourceReader};

/// What the container says about a video, read without decoding frames.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct VideoInfo {
    /// The codec or format as a person knows it: "H.264", "HEVC (H.265)", "GIF", "WebP".
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

/// Reads a video's headers and checks them against `limits` and against what this system
/// decodes (HEVC: macOS only).
pub fn probe_video(source: &(impl ToMediaSource + ?Sized), limits: &MediaLimits) -> Result<VideoInfo> {
    let source = source.to_media_source();
    let file = source.name();
    guarded(&file, || {
        let opened = open(&source, &file, limits)?;
        opened.check_decodable(&file)?;
        Ok(opened.info)
    })
}

/// What a video is, from its headers checked against `limits`, whether or not this system
/// decodes its codec (an HEVC file is described on Linux too, where `probe_video` refuses it).
pub fn describe_video(source: &(impl ToMediaSource + ?Sized), limits: &MediaLimits) -> Result<VideoInfo> {
    let source = source.to_media_source();
    let file = source.name();
    guarded(&file, || Ok(open(&source, &file, limits)?.info))
}

/// Decodes the frames at `indices` (ascending, each below `probe_video`'s `frames`; repeats are
/// allowed and give the frame again).
///
/// Every frame is held at full size until the call returns; a caller that shrinks frames can
/// use `decode_video_with` to hold one at a time.
pub fn decode_video(source: &(impl ToMediaSource + ?Sized), indices: &[u64], limits: &MediaLimits) -> Result<Video> {
    let (mut frames, mut timestamps) = (Vec::with_capacity(indices.len()), Vec::with_capacity(indices.len()));
    let info = decode_video_with(source, indices, limits, |_, time, frame| {
        frames.push(frame);
        timestamps.push(time);
        Ok(())
    })?;
    Ok(Video { info, frames, timestamps })
}

/// Decodes the frames at `indices` (as `decode_video`) and hands each to `each(index, seconds,
/// frame)` in order as soon as it is decoded; an error from `each` stops decoding.
pub fn decode_video_with(
    source: &(impl ToMediaSource + ?Sized),
    indices: &[u64],
    limits: &MediaLimits,
    mut each: impl FnMut(u64, f64, RgbImage) -> Result<()>,
) -> Result<VideoInfo> {
    let source = source.to_media_source();
    let file = source.name();
    guarded(&file, || {
        let opened = open(&source, &file, limits)?;
        opened.check_decodable(&file)?;
        check_indices(&opened.info, indices)?;
        let mut deliver = |index: u64, frame: RgbImage| each(index, opened.timestamps[index as usize], frame);
        match &opened.source {
            Source::Mp4(track, stream) => {
                let convert = |planes: YuvFrame| upright(yuv::to_rgb(&planes, stream.colour), track.orientation);
                stream.decode(&file, &source, track, indices, &convert, &mut deliver)?;
            }
            Source::Animated(animation, data) => {
                animated::decode_frames(&file, animation.format, data, indices, &mut deliver)?;
            }
        }
        Ok(opened.info)
    })
}

/// The Y, U and V planes of MP4 frames at `indices`, as stored (no rotation): what a
/// comparison with another decoder checks, since H.264 and HEVC decoding is exact (8-bit
/// streams; VideoToolbox gives 10-bit ones as 8-bit).
pub fn decode_video_planes(source: &(impl ToMediaSource + ?Sized), indices: &[u64], limits: &MediaLimits) -> Result<Vec<YuvFrame>> {
    let source = source.to_media_source();
    let file = source.name();
    guarded(&file, || {
        let opened = open(&source, &file, limits)?;
        opened.check_decodable(&file)?;
        check_indices(&opened.info, indices)?;
        match &opened.source {
            Source::Mp4(track, stream) => {
                let mut frames = Vec::with_capacity(indices.len());
                stream.decode(&file, &source, track, indices, &|planes| planes, &mut |_, planes| {
                    frames.push(planes);
                    Ok(())
                })?;
                Ok(frames)
            }
            Source::Animated(..) => Err(MediaError::media(&file, MediaProblem::UnsupportedVideoCodec { codec: opened.info.codec.clone() })),
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
pub(crate) fn probe_animation(source: &MediaSource, start: &[u8], limits: &MediaLimits) -> Result<Option<VideoInfo>> {
    let Some(format) = animated::Format::sniff(start) else { return Ok(None) };
    let file = source.name();
    let data = source.read(&file, limits)?;
    guarded(&file, || {
        let animation = animated::read_header(&file, format, &data, limits.max_video_frames)?;
        if format == animated::Format::Gif && animation.delays.is_empty() {
            return Err(MediaError::media(&file, MediaProblem::NoFrames));
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
    Mp4(VideoTrack, Mp4Stream),
    Animated(animated::Animation, std::sync::Arc<[u8]>),
}

impl Opened {
    /// Refuses what this system has no decoder for (HEVC off macOS), naming it.
    fn check_decodable(&self, file: &str) -> Result<()> {
        match &self.source {
            Source::Mp4(_, stream) => stream.check_decodable(file),
            Source::Animated(..) => Ok(()),
        }
    }
}

/// An MP4 video track's codec setup and what its SPS says.
struct Mp4Stream {
    codec: StreamCodec,
    colour: yuv::ColourSignal,
    /// Sample (decode order) index of each display index.
    display_order: Vec<usize>,
}

/// A track's decoder configuration, by codec.
enum StreamCodec {
    H264(h264::AvcConfig),
    /// Decoded on macOS only (`videotoolbox.rs`); elsewhere the headers describe the file.
    #[cfg_attr(not(target_os = "macos"), allow(dead_code))]
    Hevc(hevc::HevcConfig, hevc::Sps),
}

/// How VideoInfo and errors name HEVC.
const HEVC: &str = "HEVC (H.265)";

impl Mp4Stream {
    fn check_decodable(&self, file: &str) -> Result<()> {
        match self.codec {
            StreamCodec::Hevc(..) if !cfg!(target_os = "macos") => {
                Err(MediaError::media(file, MediaProblem::VideoCodecNeedsMac { codec: HEVC.into() }))
            }
            _ => Ok(()),
        }
    }

    /// Decodes the frames at `indices` with the track's codec (see `track::decode_frames`).
    fn decode<T: Send>(
        &self,
        file: &str,
        source: &MediaSource,
        track: &VideoTrack,
        indices: &[u64],
        convert: &(dyn Fn(YuvFrame) -> T + Sync),
        sink: &mut dyn FnMut(u64, T) -> Result<()>,
    ) -> Result<()> {
        let display_order = &self.display_order;
        match &self.codec {
            StreamCodec::H264(config) => {
                let codec = h264::H264 { config };
                track::decode_frames(&track::Track { file, source, track, codec: &codec, display_order }, indices, convert, sink)
            }
            #[cfg(target_os = "macos")]
            StreamCodec::Hevc(config, sps) => {
                let codec = videotoolbox::Hevc { config, sps };
                track::decode_frames(&track::Track { file, source, track, codec: &codec, display_order }, indices, convert, sink)
            }
            #[cfg(not(target_os = "macos"))]
            StreamCodec::Hevc(..) => self.check_decodable(file),
        }
    }
}

/// What a track's sample description and parameter sets say, read before the sample tables.
struct Coding {
    codec: StreamCodec,
    /// The decoded (cropped) frame size.
    width: u32,
    height: u32,
    colour: yuv::ColourSignal,
}

impl Coding {
    /// From the sample entry's code and configuration box (`avcC`, `hvcC`); refuses what no
    /// decoder here takes (10-bit or 4:4:4 H.264, say) by name.
    fn read(file: &str, entry: &[u8; 4], config: Option<&[u8]>) -> Result<Self> {
        let refuse = |codec: String| MediaError::media(file, MediaProblem::UnsupportedVideoCodec { codec });
        match entry {
            b"avc1" | b"avc3" => {
                let config = config.ok_or_else(|| corrupt(file, "its H.264 track has no decoder configuration (avcC)".into()))?;
                let config = h264::AvcConfig::parse(config).map_err(|d| corrupt(file, d))?;
                let Some(first) = config.sps.first() else {
                    // avc3 streams carry their parameter sets in the frames; not what phones write.
                    return Err(corrupt(file, "its H.264 configuration has no sequence parameter set".into()));
                };
                let sps = h264::Sps::parse(first).map_err(|d| corrupt(file, format!("its SPS: {d}")))?;
                if let Some(codec) = sps.unsupported() {
                    return Err(refuse(codec));
                }
                tracing::debug!(file, profile = sps.profile_name(), width = sps.width, height = sps.height, "H.264 track");
                Ok(Self { width: sps.width, height: sps.height, colour: sps.colour, codec: StreamCodec::H264(config) })
            }
            b"hvc1" | b"hev1" => {
                let config = config.ok_or_else(|| corrupt(file, "its HEVC track has no decoder configuration (hvcC)".into()))?;
                let config = hevc::HevcConfig::parse(config).map_err(|d| corrupt(file, d))?;
                let (Some(first), false, false) = (config.sps.first(), config.vps.is_empty(), config.pps.is_empty()) else {
                    // hev1 streams may carry their parameter sets in the frames; phones write hvc1.
                    return Err(corrupt(file, "its HEVC configuration lacks a parameter set (VPS, SPS or PPS)".into()));
                };
                let sps = hevc::Sps::parse(first).map_err(|d| corrupt(file, format!("its SPS: {d}")))?;
                tracing::debug!(
                    file,
                    profile = sps.describe(),
                    width = sps.width,
                    height = sps.height,
                    coded = %format_args!("{}x{}", sps.coded_width, sps.coded_height),
                    "HEVC track"
                );
                Ok(Self { width: sps.width, height: sps.height, colour: sps.colour, codec: StreamCodec::Hevc(config, sps) })
            }
            other => Err(refuse(codec_name(other))),
        }
    }

    fn name(&self) -> &'static str {
        match self.codec {
            StreamCodec::H264(_) => "H.264",
            StreamCodec::Hevc(..) => HEVC,
        }
    }
}

fn open(source: &MediaSource, file: &str, limits: &MediaLimits) -> Result<Opened> {
    let bytes = source.len(file)?;
    limits.check_bytes(file, bytes)?;
    let mut reader = source.open(file)?;
    let mut start = Vec::with_capacity(512);
    reader.by_ref().take(512).read_to_end(&mut start).map_err(|e| unreadable(file, e))?;
    if is_movie(&start) {
        return open_mp4(file, &mut reader, bytes, limits)?.ok_or_else(|| MediaError::media(file, MediaProblem::NoFrames));
    }
    if let Some(format) = animated::Format::sniff(&start) {
        let data = source.read(file, limits)?;
        let animation = animated::read_header(file, format, &data, limits.max_video_frames)?;
        if animation.delays.is_empty() {
            return Err(MediaError::media(file, MediaProblem::NoFrames));
        }
        let info = animation_info(file, &animation, limits)?;
        return Ok(Opened { info, timestamps: animation.timestamps(), source: Source::Animated(animation, data) });
    }
    if let Some(format) = foreign_container(&start) {
        return Err(MediaError::media(file, MediaProblem::UnsupportedVideoFormat { format: format.into() }));
    }
    Err(MediaError::media(file, MediaProblem::UnsupportedVideoFormat { format: "unknown".into() }))
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

/// An MP4/MOV's video, or `None` when the movie has no video track (an M4A: audio); refuses
/// what this system does not decode, as `probe_video` does.
pub(crate) fn probe_mp4(source: &MediaSource, limits: &MediaLimits) -> Result<Option<VideoInfo>> {
    let file = source.name();
    guarded(&file, || {
        let bytes = source.len(&file)?;
        limits.check_bytes(&file, bytes)?;
        let mut reader = source.open(&file)?;
        let Some(opened) = open_mp4(&file, &mut reader, bytes, limits)? else { return Ok(None) };
        opened.check_decodable(&file)?;
        Ok(Some(opened.info))
    })
}

fn open_mp4(file: &str, reader: &mut SourceReader, bytes: u64, limits: &MediaLimits) -> Result<Option<Opened>> {
    let mut coding = None;
    let mut check = |header: &mp4::TrackHeader| -> Result<()> {
        if !matches!(&header.entry, b"avc1" | b"avc3" | b"hvc1" | b"hev1") {
            return Err(MediaError::media(file, MediaProblem::UnsupportedVideoCodec { codec: codec_name(&header.entry) }));
        }
        check_frame_size(file, header.width, header.height, limits)?;
        // The SPS is the size the decoder will produce; read before anything is decoded.
        let read = Coding::read(file, &header.entry, header.config)?;
        check_frame_size(file, read.width, read.height, limits)?;
        coding = Some(read);
        check_frames(file, header.frames, limits)?;
        check_seconds(file, header.seconds, limits)?;
        Ok(())
    };
    let movie = mp4::read_movie(file, reader, bytes, limits.max_video_frames, &mut check)?;
    let Some(track) = movie.video else { return Ok(None) };
    if track.samples.is_empty() {
        return Err(MediaError::media(file, MediaProblem::NoFrames));
    }
    // `check` has read the video track's description before returning it.
    let Some(coding) = coding else { return Err(corrupt(file, "its video track has no sample description".into())) };

    let mut display_order: Vec<usize> = (0..track.samples.len()).collect();
    display_order.sort_by_key(|&i| (track.samples[i].time, i));
    let first_time = track.samples[display_order[0]].time;
    let timestamps: Vec<f64> =
        display_order.iter().map(|&i| track.samples[i].time.saturating_sub(first_time) as f64 / track.timescale as f64).collect();

    let frames = track.samples.len() as u64;
    let seconds = if track.seconds > 0.0 { track.seconds } else { movie.seconds };
    let (width, height) = match track.orientation {
        Orientation::Rotate90 | Orientation::Rotate270 | Orientation::Rotate90FlipH | Orientation::Rotate270FlipH => {
            (coding.height, coding.width)
        }
        _ => (coding.width, coding.height),
    };
    let info = VideoInfo {
        codec: coding.name().into(),
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
    let stream = Mp4Stream { codec: coding.codec, colour: coding.colour, display_order };
    Ok(Some(Opened { info, timestamps, source: Source::Mp4(track, stream) }))
}

/// The `ftyp` major brand says QuickTime.
fn is_quicktime(reader: &mut SourceReader) -> bool {
    let mut brand = [0u8; 4];
    reader.seek(SeekFrom::Start(8)).is_ok() && reader.read_exact(&mut brand).is_ok() && &brand == b"qt  "
}

/// A sample entry's codec, as a person knows it.
fn codec_name(entry: &[u8; 4]) -> String {
    match entry {
        b"avc1" | b"avc3" => "H.264",
        b"hvc1" | b"hev1" => HEVC,
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
        return Err(MediaError::Internal(format!("video frame indices must ascend, got {indices:?}")));
    }
    if let Some(&last) = indices.last() {
        if last >= info.frames {
            return Err(MediaError::Internal(format!("frame {last} asked of a video with {} frames", info.frames)));
        }
    }
    Ok(())
}

fn check_frames(file: &str, frames: u64, limits: &MediaLimits) -> Result<()> {
    if frames > limits.max_video_frames {
        return Err(MediaError::media(file, MediaProblem::TooManyFrames { frames, limit: limits.max_video_frames }));
    }
    Ok(())
}

fn check_frame_size(file: &str, width: u32, height: u32, limits: &MediaLimits) -> Result<()> {
    if width as u64 * height as u64 > limits.max_video_frame_pixels {
        return Err(MediaError::media(file, MediaProblem::FrameTooLarge { width, height, limit: limits.max_video_frame_pixels }));
    }
    Ok(())
}

fn check_seconds(file: &str, seconds: f64, limits: &MediaLimits) -> Result<()> {
    if seconds > limits.max_video_seconds {
        return Err(MediaError::media(file, MediaProblem::VideoTooLong { seconds, limit: limits.max_video_seconds }));
    }
    Ok(())
}

fn corrupt(file: &str, detail: String) -> MediaError {
    MediaError::media(file, MediaProblem::Corrupt { detail })
}

#[cfg(test)]
mod tests {
    //! HEVC around the system decoder, on every system: the headers against what FFmpeg reads,
    //! and the track decoding (plan, decode-order output put in display order, colour) with a
    //! stand-in for VideoToolbox that hands out PyAV's decoded planes. What is left for a Mac
    //! is VideoToolbox itself (`tests/video.rs`, `hevc_frames_match_pyavs_on_macos`).

    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    use super::track::{Codec, Decoder, PictureSink};
    use super::*;

    fn corpus(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/video").join(name)
    }

    fn meta() -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(corpus("meta.json")).unwrap()).unwrap()
    }

    fn opened(name: &str) -> (VideoTrack, Mp4Stream) {
        match open(&corpus(name).into(), name, &MediaLimits::default()).unwrap().source {
            Source::Mp4(track, stream) => (track, stream),
            Source::Animated(..) => unreachable!(),
        }
    }

    fn hevc(stream: &Mp4Stream) -> (&hevc::HevcConfig, &hevc::Sps) {
        match &stream.codec {
            StreamCodec::Hevc(config, sps) => (config, sps),
            StreamCodec::H264(_) => panic!("not HEVC"),
        }
    }

    #[test]
    fn hevc_parameter_sets_say_what_ffmpeg_reads() {
        let meta = meta();
        for name in ["hevc.mp4", "hevc_main.mp4", "hevc_open_gop.mov", "hevc_main10.mp4"] {
            let facts = &meta["videos"][name];
            let (_, stream) = opened(name);
            let (config, sps) = hevc(&stream);
            let hvcc = &facts["hvcC"];
            assert_eq!(config.length_size as u64, hvcc["nal_length_size"].as_u64().unwrap(), "{name}");
            for (nal_type, sets) in [("32", &config.vps), ("33", &config.sps), ("34", &config.pps)] {
                assert_eq!(sets.len() as u64, hvcc["arrays"][nal_type].as_u64().unwrap(), "{name}: arrays of type {nal_type}");
            }
            let size: Vec<u64> = facts["size"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
            assert_eq!(vec![sps.width as u64, sps.height as u64], size, "{name}");
            let (bit_depth, chroma) = match facts["pix_fmt"].as_str().unwrap() {
                "yuv420p" | "yuvj420p" => (8, 1),
                "yuv420p10le" => (10, 1),
                other => panic!("{name}: {other}"),
            };
            assert_eq!((sps.bit_depth_luma, sps.bit_depth_chroma, sps.chroma_format_idc), (bit_depth, bit_depth, chroma), "{name}");
            assert_eq!(sps.chroma_format_idc as u64, hvcc["chroma_format"].as_u64().unwrap(), "{name}");
            // FFmpeg's AVColorSpace and AVColorRange (2 is JPEG, full) from the same VUI.
            let matrix = yuv::Matrix::from_h273(facts["matrix"].as_u64().unwrap() as u32);
            let full_range = facts["color_range"].as_u64().unwrap() == 2;
            assert_eq!(stream.colour, yuv::ColourSignal { matrix, full_range }, "{name}");
            assert_eq!(sps.profile_name(), facts["profile"].as_str().unwrap(), "{name}");
        }
        // 96x54 is coded as 96x56 (x265's 8-pixel coding blocks), less 2 rows of conformance window.
        let (_, stream) = opened("hevc_main.mp4");
        let (_, sps) = hevc(&stream);
        assert_eq!((sps.coded_width, sps.coded_height, sps.crop_left, sps.crop_top), (96, 56, 0, 0));
        assert_eq!(sps.describe(), "Main, 8-bit 4:2:0");
    }

    /// Stands in for VideoToolbox: "decodes" each sample into PyAV's planes for its display
    /// index (the reference frames' `.yuv`), handed out at once, in decode order, as
    /// VideoToolbox does without temporal processing; records the display index of each sample
    /// it is fed.
    struct ReferencePlanes<'a> {
        config: &'a hevc::HevcConfig,
        name: &'a str,
        size: (u32, u32),
        fed: &'a Mutex<Vec<u64>>,
    }

    impl Decoder for &ReferencePlanes<'_> {
        fn decode(&mut self, _sample: &[u8], display_index: u64, out: &mut PictureSink) -> Result<()> {
            self.fed.lock().unwrap().push(display_index);
            out(display_index, &|| {
                let data = std::fs::read(corpus(&format!("{}.f{display_index}.yuv", self.name)))
                    .map_err(|_| MediaError::Internal(format!("frame {display_index} has no reference planes")))?;
                let (width, height) = (self.size.0 as usize, self.size.1 as usize);
                let chroma = width.div_ceil(2) * height.div_ceil(2);
                let (y, uv) = data.split_at(width * height);
                Ok(YuvFrame { width: self.size.0, height: self.size.1, y: y.to_vec(), u: uv[..chroma].to_vec(), v: uv[chroma..].to_vec() })
            })
        }

        fn finish(&mut self, _out: &mut PictureSink) -> Result<()> {
            Ok(())
        }
    }

    /// A codec whose decoders are one `ReferencePlanes`.
    struct Referenced<'a>(&'a ReferencePlanes<'a>);

    impl<'a> Codec for Referenced<'a> {
        type Decoder = &'a ReferencePlanes<'a>;

        fn is_idr(&self, sample: &[u8]) -> Result<bool, String> {
            self.0.config.is_idr(sample)
        }

        fn decoder(&self, _file: &str) -> Result<&'a ReferencePlanes<'a>> {
            Ok(self.0)
        }
    }

    #[test]
    fn hevc_tracks_decode_only_what_is_asked_in_display_order_with_pyavs_colours() {
        let meta = meta();
        let reference = |name: &str| -> Vec<u64> {
            meta["videos"][name]["reference_indices"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect()
        };
        // (file, requested frames, display indices of the samples the decoder must be fed)
        let cases = [
            ("hevc.mp4", reference("hevc.mp4"), None),
            ("hevc_main.mp4", reference("hevc_main.mp4"), None),
            // An IDR picture starts frame 10's group: the group before is skipped.
            ("hevc_main.mp4", vec![14], Some((10..20).collect::<Vec<u64>>())),
            ("hevc_open_gop.mov", reference("hevc_open_gop.mov"), None),
            // A CRA picture starts it: its leading frames (9 is one) reference the group before,
            // which is decoded too.
            ("hevc_open_gop.mov", vec![14], Some((0..20).collect())),
            ("hevc_open_gop.mov", vec![3], Some((0..9).collect())),
        ];
        for (name, indices, fed_expected) in cases {
            let (track, stream) = opened(name);
            let (config, sps) = hevc(&stream);
            let fed = Mutex::new(Vec::new());
            let planes = ReferencePlanes { config, name, size: (sps.width, sps.height), fed: &fed };
            let codec = Referenced(&planes);
            let source = MediaSource::from(corpus(name));
            let t = track::Track { file: name, source: &source, track: &track, codec: &codec, display_order: &stream.display_order };
            let mut got = Vec::new();
            let convert = |frame: YuvFrame| yuv::to_rgb(&frame, stream.colour);
            track::decode_frames(&t, &indices, &convert, &mut |index, rgb| {
                got.push((index, rgb));
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{name} {indices:?}: {e}"));
            assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), indices, "{name}");
            for (index, rgb) in &got {
                let want = ::image::open(corpus(&format!("{name}.f{index}.png"))).unwrap().into_rgb8();
                assert!(rgb == &want, "{name} frame {index}: RGB differs from PyAV's");
            }
            if let Some(expected) = fed_expected {
                let mut fed = fed.into_inner().unwrap();
                fed.sort();
                // Decoding stops once the last requested frame is out: a prefix of the expected.
                assert!(fed.iter().all(|i| expected.contains(i)) && fed.contains(&expected[0]), "{name} {indices:?}: fed {fed:?}");
            }
        }
    }
}
