//! Video files: MP4/MOV (H.264), animated GIF and animated WebP, read as the frames a model's
//! processor samples. Limits (duration, frame count, frame size) are checked from the headers
//! before any frame is decoded; `decode_video` then decodes only as far as the last sampled
//! frame and converts only the sampled ones to RGB.

use std::path::Path;

use ::image::RgbImage;

use super::MediaLimits;
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
    let _ = limits;
    Err(EngineError::media(super::display_name(path), MediaProblem::UnsupportedVideoCodec { codec: "any (video decoding is not built yet)".into() }))
}

/// Decodes the frames at `indices` (ascending, each below `probe_video`'s `frames`).
pub fn decode_video(path: &Path, indices: &[u64], limits: &MediaLimits) -> Result<Video> {
    let _ = (indices, limits);
    Err(EngineError::media(super::display_name(path), MediaProblem::UnsupportedVideoCodec { codec: "any (video decoding is not built yet)".into() }))
}
