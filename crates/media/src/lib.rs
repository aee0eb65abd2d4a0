//! confab-media: decoding images, audio clips and videos into what a model's preprocessing takes
//! (RGB8 pixels, mono f32 samples at a chosen rate, sampled RGB8 frames), checking limits before
//! any expensive work, and the content hash that identifies a file across the store and the
//! caches. No MLX and no models: the app checks attachments with this crate alone, and each model
//! family's own preprocessing (features, prompt expansion) lives in the engine, in its folder
//! under `model::families`; the resizers that reproduce Pillow's and torch's are here because
//! they are pixels in, pixels out.

mod aac;
pub mod audio;
pub mod error;
pub mod hash;
pub mod image;
pub mod item;
mod jpeg;
mod kind;
pub mod limits;
mod mp3;
pub mod pil_resize;
pub mod resample;
mod source;
pub mod swresample;
mod system_ffmpeg;
mod thumbnail;
pub mod torch_resize;
pub mod video;
pub mod video_reader;

use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

pub use self::audio::{decode_audio, decode_audio_builtin, decode_audio_bytes, system_ffmpeg_version, Audio};
pub use self::error::{MediaError, MediaProblem};
pub use self::hash::{content_hash, hash_file};
pub use self::image::{decode_image, decode_image_bytes};
pub use self::item::MediaItem;
pub use self::kind::MediaKind;
pub use self::limits::MediaLimits;
pub use self::source::{MediaSource, ToMediaSource};
pub use self::thumbnail::video_thumbnail;
pub use self::video::{decode_video, decode_video_planes, decode_video_with, describe_video, probe_video, Video, VideoInfo, YuvFrame};
pub use self::video_reader::{FileVideos, VideoReader};
pub use ::image::RgbImage;

use crate::error::Result;
use crate::source::unreadable;

/// What `probe` learns from a file's headers.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MediaInfo {
    pub kind: MediaKind,
    pub mime: &'static str,
    pub bytes: u64,
    /// Images and videos: the size as displayed (EXIF orientation or the video's rotation
    /// applied).
    pub width: Option<u32>,
    pub height: Option<u32>,
    /// Audio: as the container records it; `None` when it doesn't (decoding still enforces the
    /// duration limit). Videos: as the container records it.
    pub seconds: Option<f64>,
    pub sample_rate: Option<u32>,
    pub channels: Option<u16>,
    /// Videos: frames in the file and their average rate.
    pub frames: Option<u64>,
    pub fps: Option<f64>,
    /// Videos: the codec or format as a person knows it ("H.264", "HEVC (H.265)", "GIF", "WebP").
    pub codec: Option<String>,
}

impl MediaInfo {
    fn video(bytes: u64, info: VideoInfo) -> Self {
        MediaInfo {
            kind: MediaKind::Video,
            mime: info.mime,
            bytes,
            width: Some(info.width),
            height: Some(info.height),
            seconds: Some(info.seconds),
            sample_rate: None,
            channels: None,
            frames: Some(info.frames),
            fps: Some(info.fps),
            codec: Some(info.codec),
        }
    }
}

/// Names that promise an image, audio clip or video, to say which kind of format a rejected
/// file is.
const IMAGE_EXTENSIONS: [&str; 13] = ["png", "jpg", "jpeg", "webp", "gif", "bmp", "tif", "tiff", "heic", "heif", "avif", "svg", "ico"];
const VIDEO_EXTENSIONS: [&str; 14] = ["mp4", "m4v", "mov", "qt", "webm", "mkv", "avi", "wmv", "flv", "mpg", "mpeg", "ts", "3gp", "ogv"];
const AUDIO_EXTENSIONS: [&str; 13] = ["wav", "wave", "mp3", "flac", "ogg", "oga", "m4a", "aac", "opus", "wma", "aiff", "aif", "caf"];

/// `ftyp` brands of still-image files built from MP4's boxes (HEIF, AVIF): not videos.
const IMAGE_BRANDS: [&[u8; 4]; 9] = [b"heic", b"heix", b"heim", b"heis", b"hevc", b"mif1", b"msf1", b"avif", b"avis"];

/// Classifies a file (or bytes in memory) and checks it against `limits` from its headers
/// alone: the app calls this when a file is attached, to store its metadata and turn bad files
/// away early.
pub fn probe(source: &(impl ToMediaSource + ?Sized), limits: &MediaLimits) -> Result<MediaInfo> {
    let source = source.to_media_source();
    let file = source.name();
    let bytes = source.len(&file)?;
    limits.check_bytes(&file, bytes)?;
    let mut reader = BufReader::new(source.open(&file)?);
    let mut start = Vec::with_capacity(512);
    reader.by_ref().take(512).read_to_end(&mut start).map_err(|e| unreadable(&file, e))?;
    reader.seek(SeekFrom::Start(0)).map_err(|e| unreadable(&file, e))?;

    // Animated GIF/WebP are videos; a still one (one frame) is an image.
    if let Some(info) = self::video::probe_animation(&source, &start, limits)? {
        return Ok(MediaInfo::video(bytes, info));
    }
    let is_mp4 = self::audio::is_mp4(&start);
    let image_brand = is_mp4 && start.get(8..12).is_some_and(|brand| IMAGE_BRANDS.iter().any(|b| &b[..] == brand));
    if self::video::is_movie(&start) && !image_brand {
        // A movie with a video track is a video; one with only sound (M4A) is audio.
        if let Some(info) = self::video::probe_mp4(&source, limits)? {
            return Ok(MediaInfo::video(bytes, info));
        }
    }
    if let Some(format) = self::image::sniff(&file, &start)? {
        let header = guarded(&file, || self::image::probe(&file, reader, format, limits))?;
        return Ok(MediaInfo {
            kind: MediaKind::Image,
            mime: format.to_mime_type(),
            bytes,
            width: Some(header.width),
            height: Some(header.height),
            seconds: None,
            sample_rate: None,
            channels: None,
            frames: None,
            fps: None,
            codec: None,
        });
    }
    let reader = source.open(&file)?;
    match guarded(&file, || self::audio::probe(&file, Box::new(reader), is_mp4, limits)) {
        Ok(header) => Ok(MediaInfo {
            kind: MediaKind::Audio,
            mime: header.mime,
            bytes,
            width: None,
            height: None,
            seconds: header.seconds,
            sample_rate: header.sample_rate,
            channels: header.channels,
            frames: None,
            fps: None,
            codec: None,
        }),
        Err(MediaError::Media { problem: MediaProblem::UnsupportedAudio, .. }) => {
            if let Some(format) = self::video::foreign_container(&start) {
                return Err(MediaError::media(&file, MediaProblem::UnsupportedVideoFormat { format: format.into() }));
            }
            Err(MediaError::media(&file, unrecognised(&file)))
        }
        // An image format we don't read (HEIC is an MP4-like box file) can confuse the audio
        // probe into "damaged"; its name says what it really is.
        Err(MediaError::Media { problem: MediaProblem::Corrupt { .. }, .. }) if unrecognised(&file) == MediaProblem::UnsupportedImage => {
            Err(MediaError::media(&file, MediaProblem::UnsupportedImage))
        }
        Err(other) => Err(other),
    }
}

/// The problem to report for a file neither decoder recognised, by what its name promises.
fn unrecognised(file: &str) -> MediaProblem {
    let extension = Path::new(file).extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    if IMAGE_EXTENSIONS.contains(&extension.as_str()) {
        MediaProblem::UnsupportedImage
    } else if VIDEO_EXTENSIONS.contains(&extension.as_str()) {
        MediaProblem::UnsupportedVideoFormat { format: extension.to_ascii_uppercase() }
    } else if AUDIO_EXTENSIONS.contains(&extension.as_str()) {
        MediaProblem::UnsupportedAudio
    } else {
        MediaProblem::Unrecognised
    }
}

/// Runs a decoder on untrusted bytes, turning a panic inside it (some demuxers still have
/// arithmetic that overflows on malformed headers) into a "damaged file" error.
pub(crate) fn guarded<T>(file: &str, work: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|panic| {
        let detail = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the decoder failed".into());
        Err(MediaError::media(file, MediaProblem::Corrupt { detail }))
    })
}

/// A file's name as the person knows it (errors name the file, not the whole path).
pub(crate) fn display_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}
