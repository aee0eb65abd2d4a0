//! The media crate's one error type. Every message says what went wrong and what to do about
//! it, because the app shows it to a person as it is (the engine's `MediaError` carries the same
//! variants with the same words).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    /// An attached image, audio clip or video Confab cannot use; `file` is its name as the
    /// person knows it.
    #[error("{file}: {problem}")]
    Media { file: String, problem: MediaProblem },

    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },

    #[error("invalid setting `{name}`: {reason}")]
    InvalidSetting { name: &'static str, reason: String },

    /// Something the decoders guarantee did not hold: a bug, never the person's doing.
    #[error("internal error: {0}. This is a bug in Confab; please report it with the diagnostics.")]
    Internal(String),

    /// The one asking for the frames went away.
    #[error("stopped")]
    Stopped,
}

pub type Result<T, E = MediaError> = std::result::Result<T, E>;

impl MediaError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        MediaError::Io { path: path.into(), source }
    }

    pub fn media(file: impl Into<String>, problem: MediaProblem) -> Self {
        MediaError::Media { file: file.into(), problem }
    }

    pub fn invalid(name: &'static str, reason: impl Into<String>) -> Self {
        MediaError::InvalidSetting { name, reason: reason.into() }
    }
}

/// What is wrong with a media file. Each message ends with what to do about it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MediaProblem {
    #[error("the file is empty; attach it again")]
    EmptyFile,

    #[error("the file is {} and the limit is {} ({}); use a smaller file", megabytes(*.bytes), megabytes(*.limit), confab_limits::MEDIA_FILE_BYTES.name)]
    FileTooLarge { bytes: u64, limit: u64 },

    #[error("the image is {width}×{height} ({}) and the limit is {} ({}); resize it and try again",
        megapixels(*.width as u64 * *.height as u64), megapixels(*.limit), confab_limits::MEDIA_IMAGE_PIXELS.name)]
    TooManyPixels { width: u32, height: u32, limit: u64 },

    /// `seconds` is `None` when the container doesn't say and decoding passed the limit.
    #[error("{}; trim it and try again", too_long(*.seconds, *.limit))]
    TooLong { seconds: Option<f64>, limit: f64 },

    #[error("the clip has no audio samples; record or pick another clip")]
    NoAudio,

    #[error("unsupported image format; use PNG, JPEG, WebP, GIF, BMP or TIFF")]
    UnsupportedImage,

    #[error("unsupported audio format; use WAV, MP3, FLAC, Ogg Vorbis or AAC/M4A")]
    UnsupportedAudio,

    #[error("the audio codec ({codec}) is not supported; convert the clip to WAV, MP3, FLAC, Ogg Vorbis or AAC/M4A")]
    UnsupportedCodec { codec: String },

    #[error("not an image, audio or video file Confab can read; use PNG, JPEG, WebP, GIF, BMP or TIFF images, WAV, MP3, FLAC, Ogg Vorbis or AAC/M4A audio, or H.264 MP4/MOV or animated GIF/WebP videos")]
    Unrecognised,

    /// Decoded fine, but the model's preprocessing cannot take it (an image too long and thin).
    #[error("the model cannot use it as it is ({detail}); crop or convert it and try again")]
    Unsuitable { detail: String },

    #[error("the file is damaged or incomplete ({detail}); export or download it again")]
    Corrupt { detail: String },

    #[error("the file could not be read ({detail}); check that it still exists and is readable")]
    Unreadable { detail: String },

    #[error("the video codec ({codec}) is not supported; export the video as H.264 MP4 (phones and screen recorders offer it) or as an animated GIF")]
    UnsupportedVideoCodec { codec: String },

    /// A codec this build decodes through another system's decoder only (HEVC: macOS's).
    #[error("the video codec ({codec}) is decoded on macOS only; convert the video to H.264 MP4 (on an iPhone: Settings › Camera › Formats › Most Compatible; with FFmpeg: ffmpeg -i clip.mov -c:v libx264 -crf 18 clip.mp4) or send an animated GIF")]
    VideoCodecNeedsMac { codec: String },

    /// The system's video decoder failed for a reason other than the file (it could not start,
    /// or stopped working).
    #[error("the system's video decoder failed ({detail}); try again, or convert the video to H.264 MP4")]
    VideoDecoderFailed { detail: String },

    /// A container Confab does not read (WebM/Matroska, AVI, fragmented MP4, ...).
    #[error("the video format ({format}) is not supported; export the video as H.264 MP4 (phones and screen recorders offer it) or as an animated GIF")]
    UnsupportedVideoFormat { format: String },

    #[error("the video has no frames; record or pick another video")]
    NoFrames,

    #[error("the video is {} long and the limit is {} ({}); trim it and try again", duration(*.seconds), duration(*.limit), confab_limits::MEDIA_VIDEO_SECONDS.name)]
    VideoTooLong { seconds: f64, limit: f64 },

    #[error("the video has {frames} frames and the limit is {limit} ({}); trim it or lower its frame rate", confab_limits::MEDIA_VIDEO_FRAMES.name)]
    TooManyFrames { frames: u64, limit: u64 },

    #[error("the video's frames are {width}×{height} ({}) and the limit is {} ({}); export it at a lower resolution",
        megapixels(*.width as u64 * *.height as u64), megapixels(*.limit), confab_limits::MEDIA_VIDEO_FRAME_PIXELS.name)]
    FrameTooLarge { width: u32, height: u32, limit: u64 },
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn megapixels(pixels: u64) -> String {
    format!("{:.1} MP", pixels as f64 / 1e6)
}

fn too_long(seconds: Option<f64>, limit: f64) -> String {
    match seconds {
        Some(s) => {
            format!("the clip is {} long and the limit is {} ({})", duration(s), duration(limit), confab_limits::MEDIA_AUDIO_SECONDS.name)
        }
        None => format!("the clip is longer than the {} limit ({})", duration(limit), confab_limits::MEDIA_AUDIO_SECONDS.name),
    }
}

fn duration(seconds: f64) -> String {
    if seconds < 59.95 {
        return format!("{:.1} s", seconds).replace(".0 s", " s");
    }
    let total = seconds.round() as u64;
    match (total / 3600, total / 60 % 60, total % 60) {
        (0, m, 0) => format!("{m} min"),
        (0, m, s) => format!("{m} min {s} s"),
        (h, m, _) => format!("{h} h {m} min"),
    }
}

#[cfg(test)]
mod tests {
    use super::duration;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(0.2), "0.2 s");
        assert_eq!(duration(45.0), "45 s");
        assert_eq!(duration(90.0), "1 min 30 s");
        assert_eq!(duration(1800.0), "30 min");
        assert_eq!(duration(7260.0), "2 h 1 min");
    }
}
