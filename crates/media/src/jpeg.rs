//! JPEG pixels as Pillow decodes them: Pillow reads JPEGs with libjpeg-turbo (accurate integer
//! IDCT, fancy upsampling, libjpeg's YCbCr → RGB), and any other decoder rounds differently, by
//! enough to move a model's logits. So we decode with libjpeg-turbo itself (built from its
//! source by `turbojpeg-sys`), with the same settings, and convert as Pillow's `convert("RGB")`
//! does: greyscale replicated, CMYK (stored inverted, Adobe's convention, which Pillow assumes)
//! through Pillow's own CMYK → RGB formula.

use image::RgbImage;
use turbojpeg::{Colorspace, Decompressor, Image, PixelFormat};

use crate::error::{MediaError, MediaProblem, Result};

/// Decodes `bytes` (a whole JPEG file) to 8-bit RGB, as stored (EXIF orientation not applied).
pub(crate) fn decode(file: &str, bytes: &[u8]) -> Result<RgbImage> {
    let corrupt = |e: turbojpeg::Error| MediaError::media(file, MediaProblem::Corrupt { detail: e.to_string() });
    let mut decompressor = Decompressor::new().map_err(corrupt)?;
    // The defaults are Pillow's: accurate DCT, fancy (smooth) chroma upsampling.
    let header = decompressor.read_header(bytes).map_err(corrupt)?;
    let (width, height) = (header.width, header.height);
    let format = match header.colorspace {
        Colorspace::CMYK | Colorspace::YCCK => PixelFormat::CMYK,
        _ => PixelFormat::RGB,
    };
    let mut pixels = vec![0u8; width * height * format.size()];
    let image = Image { pixels: pixels.as_mut_slice(), width, pitch: width * format.size(), height, format };
    decompressor.decompress(bytes, image).map_err(corrupt)?;
    let rgb = match format {
        PixelFormat::CMYK => pixels.chunks_exact(4).flat_map(|p| cmyk_to_rgb([p[0], p[1], p[2], p[3]])).collect(),
        _ => pixels,
    };
    RgbImage::from_raw(width as u32, height as u32, rgb)
        .ok_or_else(|| MediaError::media(file, MediaProblem::Corrupt { detail: "the decoded size is wrong".into() }))
}

/// One pixel as libjpeg gives it for an Adobe CMYK file (each ink inverted) to Pillow's RGB:
/// Pillow reads it as `CMYK;I` (undoing the inversion), then `convert("RGB")` computes
/// `255 - c·(255 - k)/255 - k` per channel, with its rounding division by 255.
fn cmyk_to_rgb(inverted: [u8; 4]) -> [u8; 3] {
    let [c, m, y, k] = inverted.map(|v| 255 - v);
    let nk = 255 - k as u32;
    [c, m, y].map(|ink| (nk - muldiv255(ink as u32, nk)) as u8)
}

/// Pillow's `MULDIV255`: a × b / 255 rounded, computed as its C macro does.
fn muldiv255(a: u32, b: u32) -> u32 {
    let t = a * b + 128;
    ((t >> 8) + t) >> 8
}
