//! How big an attachment may be by default (`MediaLimits::default`); the engine's `defaults`
//! module re-exports these with the other defaults a person can change.

/// Largest attachment accepted, in bytes: 200 MB, a long lossless recording or a camera
/// RAW-sized TIFF, far beyond what a chat needs.
pub const MEDIA_MAX_FILE_BYTES: u64 = 200_000_000;
/// Most pixels in one image: 40 MP covers current phone and camera photos; models downscale to
/// well under 1 MP anyway, and a 40 MP RGB image is 120 MB decoded.
pub const MEDIA_MAX_IMAGE_PIXELS: u64 = 40_000_000;
/// Longest audio clip: 30 minutes (30 min of 16 kHz mono f32 is 115 MB), and audio towers see
/// at most a few minutes per turn.
pub const MEDIA_MAX_AUDIO_SECONDS: f64 = 30.0 * 60.0;

/// Longest video accepted: its frames are sampled (Qwen3-VL: 2 per second), so a long one costs
/// thousands of soft tokens and minutes of tower time.
pub const MEDIA_MAX_VIDEO_SECONDS: f64 = 10.0 * 60.0;

/// Most frames a video file may hold, checked from the container before decoding.
pub const MEDIA_MAX_VIDEO_FRAMES: u64 = 36_000;

/// Most pixels in one video frame (8K is 33 MP).
pub const MEDIA_MAX_VIDEO_FRAME_PIXELS: u64 = 40_000_000;
