//! Images: PNG, JPEG, WebP, GIF (first frame), BMP and TIFF, decoded with `image` (JPEG pixels
//! with libjpeg-turbo, as Pillow decodes them: see `jpeg`), turned
//! upright by their EXIF orientation and converted to 8-bit RGB (alpha dropped, as the
//! reference processors' `convert("RGB")` does). The pixel limit is checked on the header's
//! dimensions, before a pixel is decoded.

use std::io::{BufRead, Cursor, Seek};

use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageError, ImageFormat, ImageReader, RgbImage};

use crate::error::{MediaError, MediaProblem, Result};
use crate::{guarded, MediaLimits, ToMediaSource};

/// The formats Confab accepts.
const SUPPORTED: [ImageFormat; 6] =
    [ImageFormat::Png, ImageFormat::Jpeg, ImageFormat::WebP, ImageFormat::Gif, ImageFormat::Bmp, ImageFormat::Tiff];

/// What an image header says, without decoding pixels.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ImageHeader {
    pub format: ImageFormat,
    /// As displayed: after the EXIF orientation (which may swap width and height).
    pub width: u32,
    pub height: u32,
}

/// The format named by the file's first bytes, if it is one Confab accepts.
pub(crate) fn sniff(file: &str, start: &[u8]) -> Result<Option<ImageFormat>> {
    match image::guess_format(start) {
        Ok(format) if SUPPORTED.contains(&format) => Ok(Some(format)),
        Ok(_) => Err(MediaError::media(file, MediaProblem::UnsupportedImage)),
        Err(_) => Ok(None),
    }
}

pub fn decode_image(source: &(impl ToMediaSource + ?Sized), limits: &MediaLimits) -> Result<RgbImage> {
    let source = source.to_media_source();
    let file = source.name();
    let bytes = source.read(&file, limits)?;
    decode_image_bytes(&file, &bytes, limits)
}

/// Decodes an image held in memory; `file` names it in errors.
pub fn decode_image_bytes(file: &str, bytes: &[u8], limits: &MediaLimits) -> Result<RgbImage> {
    guarded(file, || decode_guarded(file, bytes, limits))
}

fn decode_guarded(file: &str, bytes: &[u8], limits: &MediaLimits) -> Result<RgbImage> {
    limits.check_bytes(file, bytes.len() as u64)?;
    let format = sniff(file, bytes)?.ok_or_else(|| MediaError::media(file, MediaProblem::UnsupportedImage))?;
    let mut decoder = open(file, Cursor::new(bytes), format)?;
    let (width, height) = decoder.dimensions();
    limits.check_pixels(file, width, height)?;
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    // Within our pixel limit now; this only stops absurd allocations inside a decoder.
    let mut image_limits = image::Limits::default();
    image_limits.max_alloc = Some(2 << 30);
    decoder.set_limits(image_limits).map_err(|e| problem(file, e))?;
    let mut image = match format {
        ImageFormat::Jpeg => DynamicImage::ImageRgb8(super::jpeg::decode(file, bytes)?),
        _ => DynamicImage::from_decoder(decoder).map_err(|e| problem(file, e))?,
    };
    image.apply_orientation(orientation);
    Ok(image.into_rgb8())
}

/// Reads only the header (and EXIF orientation) and checks the pixel limit.
pub(crate) fn probe<R: BufRead + Seek>(file: &str, reader: R, format: ImageFormat, limits: &MediaLimits) -> Result<ImageHeader> {
    let mut decoder = open(file, reader, format)?;
    let (width, height) = decoder.dimensions();
    limits.check_pixels(file, width, height)?;
    let swapped = matches!(
        decoder.orientation().unwrap_or(Orientation::NoTransforms),
        Orientation::Rotate90 | Orientation::Rotate270 | Orientation::Rotate90FlipH | Orientation::Rotate270FlipH
    );
    let (width, height) = if swapped { (height, width) } else { (width, height) };
    Ok(ImageHeader { format, width, height })
}

fn open<'a, R: BufRead + Seek + 'a>(file: &str, reader: R, format: ImageFormat) -> Result<impl ImageDecoder + 'a> {
    let mut reader = ImageReader::with_format(reader, format);
    // Only the header is read here; our pixel limit decides what is too big, with its own
    // message, before any pixel buffer exists.
    reader.no_limits();
    reader.into_decoder().map_err(|e| problem(file, e))
}

fn problem(file: &str, error: ImageError) -> MediaError {
    let problem = match error {
        ImageError::Unsupported(_) => MediaProblem::UnsupportedImage,
        ImageError::IoError(e) if e.kind() != std::io::ErrorKind::UnexpectedEof => MediaProblem::Unreadable { detail: e.to_string() },
        other => MediaProblem::Corrupt { detail: other.to_string() },
    };
    MediaError::media(file, problem)
}
