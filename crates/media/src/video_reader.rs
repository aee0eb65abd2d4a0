//! Where the runtime gets a video's headers and sampled frames. By default from the file through
//! `media::probe_video` and `media::decode_video`; a caller with frames of its own (tests that
//! compare against a reference given decoded frames, a platform decoder) plugs in another
//! reader through `EngineOptions::video_reader`.

use std::path::Path;

use super::{decode_video, probe_video, MediaLimits, Video, VideoInfo};
use crate::error::Result;

pub trait VideoReader: Send + Sync + std::fmt::Debug {
    /// The video's headers, checked against `limits`.
    fn probe(&self, path: &Path, limits: &MediaLimits) -> Result<VideoInfo>;
    /// The frames at `indices` (ascending, from what `probe` said).
    fn decode(&self, path: &Path, indices: &[u64], limits: &MediaLimits) -> Result<Video>;
}

/// Videos read from their files by `media::video`.
#[derive(Debug, Clone, Copy, Default)]
pub struct FileVideos;

impl VideoReader for FileVideos {
    fn probe(&self, path: &Path, limits: &MediaLimits) -> Result<VideoInfo> {
        probe_video(path, limits)
    }

    fn decode(&self, path: &Path, indices: &[u64], limits: &MediaLimits) -> Result<Video> {
        decode_video(path, indices, limits)
    }
}
