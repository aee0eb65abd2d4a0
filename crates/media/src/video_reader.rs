//! Where the runtime gets a video's headers and sampled frames. By default from its source (a
//! file or bytes in memory) through `media::probe_video` and `media::decode_video`; a caller
//! with frames of its own (tests that compare against a reference given decoded frames, a
//! platform decoder) plugs in another reader through `EngineOptions::video_reader`.

use super::{decode_video, probe_video, MediaLimits, MediaSource, Video, VideoInfo};
use crate::error::Result;

pub trait VideoReader: Send + Sync + std::fmt::Debug {
    /// The video's headers, checked against `limits`.
    fn probe(&self, source: &MediaSource, limits: &MediaLimits) -> Result<VideoInfo>;
    /// The frames at `indices` (ascending, from what `probe` said).
    fn decode(&self, source: &MediaSource, indices: &[u64], limits: &MediaLimits) -> Result<Video>;
}

/// Videos read from their sources (files, or bytes in memory) by `media::video`.
#[derive(Debug, Clone, Copy, Default)]
pub struct FileVideos;

impl VideoReader for FileVideos {
    fn probe(&self, source: &MediaSource, limits: &MediaLimits) -> Result<VideoInfo> {
        probe_video(source, limits)
    }

    fn decode(&self, source: &MediaSource, indices: &[u64], limits: &MediaLimits) -> Result<Video> {
        decode_video(source, indices, limits)
    }
}
