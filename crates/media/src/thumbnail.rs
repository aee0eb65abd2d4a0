//! A video's first frame as a small PNG: what the app shows for a video attachment (the
//! window's web view may not play the file's codec, and a still is all a chip needs).

use ::image::imageops::FilterType;
use ::image::{DynamicImage, ImageFormat};

use super::{decode_video, MediaLimits, ToMediaSource};
use crate::error::{MediaError, MediaProblem, Result};

/// The first frame, scaled so its longer side is at most `max_side`, encoded as PNG.
pub fn video_thumbnail(source: &(impl ToMediaSource + ?Sized), max_side: u32, limits: &MediaLimits) -> Result<Vec<u8>> {
    let source = source.to_media_source();
    let video = decode_video(&source, &[0], limits)?;
    let frame = video.frames.into_iter().next().ok_or_else(|| MediaError::media(source.name(), MediaProblem::NoFrames))?;
    let still = DynamicImage::ImageRgb8(frame);
    let still = if still.width().max(still.height()) > max_side { still.resize(max_side, max_side, FilterType::Triangle) } else { still };
    let mut png = std::io::Cursor::new(Vec::new());
    still.write_to(&mut png, ImageFormat::Png).map_err(|e| MediaError::Internal(format!("encoding a thumbnail as PNG failed: {e}")))?;
    Ok(png.into_inner())
}
