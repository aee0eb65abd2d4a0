//! How big an attachment may be. Every limit is checked before the expensive work: file size
//! before reading, pixel count from the image header before decoding, duration from the
//! container before decoding audio (and again while decoding when the container doesn't say).

use crate::error::{MediaError, MediaProblem, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct MediaLimits {
    /// Largest file accepted, in bytes.
    pub max_file_bytes: u64,
    /// Most pixels in one image.
    pub max_image_pixels: u64,
    /// Longest audio clip, in seconds.
    pub max_audio_seconds: f64,
    /// Longest video, in seconds.
    pub max_video_seconds: f64,
    /// Most frames in a video file.
    pub max_video_frames: u64,
    /// Most pixels in one video frame.
    pub max_video_frame_pixels: u64,
}

/// The defaults are the named limits of `confab_limits`.
impl Default for MediaLimits {
    fn default() -> Self {
        use confab_limits::{
            MEDIA_AUDIO_SECONDS, MEDIA_FILE_BYTES, MEDIA_IMAGE_PIXELS, MEDIA_VIDEO_FRAMES, MEDIA_VIDEO_FRAME_PIXELS, MEDIA_VIDEO_SECONDS,
        };
        Self {
            max_file_bytes: MEDIA_FILE_BYTES.value,
            max_image_pixels: MEDIA_IMAGE_PIXELS.value,
            max_audio_seconds: MEDIA_AUDIO_SECONDS.as_f64(),
            max_video_seconds: MEDIA_VIDEO_SECONDS.as_f64(),
            max_video_frames: MEDIA_VIDEO_FRAMES.value,
            max_video_frame_pixels: MEDIA_VIDEO_FRAME_PIXELS.value,
        }
    }
}

impl MediaLimits {
    pub(crate) fn check_bytes(&self, file: &str, bytes: u64) -> Result<()> {
        if bytes == 0 {
            return Err(MediaError::media(file, MediaProblem::EmptyFile));
        }
        if bytes > self.max_file_bytes {
            return Err(MediaError::media(file, MediaProblem::FileTooLarge { bytes, limit: self.max_file_bytes }));
        }
        Ok(())
    }

    pub(crate) fn check_pixels(&self, file: &str, width: u32, height: u32) -> Result<()> {
        if width as u64 * height as u64 > self.max_image_pixels {
            return Err(MediaError::media(file, MediaProblem::TooManyPixels { width, height, limit: self.max_image_pixels }));
        }
        Ok(())
    }

    pub(crate) fn check_seconds(&self, file: &str, seconds: f64) -> Result<()> {
        if seconds > self.max_audio_seconds {
            return Err(MediaError::media(file, MediaProblem::TooLong { seconds: Some(seconds), limit: self.max_audio_seconds }));
        }
        Ok(())
    }
}
